//! The tools every member of a team has: `send_message {to, text}` and the board's `board_add`,
//! `board_update`, `board_list` and `board_get`. They work on the team of a [`Seat`]: the lead's
//! current team, or the teammate's own.

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use lathe_protocol::ToolSpec;
use lathe_tools::{Access, CompiledSchema, DynTool, Effect, ToolContext, ToolError, ToolOutput};
use serde_json::{Value, json};

use super::board::{Board, Change, Status, describe};
use super::mailbox::{Kind, LEAD, Message, post};
use super::roster::Roster;
use super::{TeamError, inbox_dir};

/// The longest message `send_message` takes (bytes): a member's mail goes into the reader's context
/// as it is.
pub const MAX_MESSAGE_BYTES: usize = 20_000;

/// The name of the tool that sends a message to a member.
pub const SEND_MESSAGE_TOOL: &str = "send_message";

/// The board tools' names.
pub const BOARD_TOOLS: [&str; 4] = ["board_add", "board_update", "board_list", "board_get"];

/// The text of a lead's message that asks a teammate to end.
pub const SHUTDOWN_TEXT: &str = "shutdown";

/// Where a member sits: its team's folder and its own name.
pub trait Seat: Send + Sync {
    /// The team folder and this member's name; an error when there is no team (yet).
    fn seat(&self) -> Result<(PathBuf, String), TeamError>;

    /// A message of `kind` went to `to` (the lead's side counts the teammate as working).
    fn sent(&self, to: &str, kind: Kind) {
        let _ = (to, kind);
    }
}

/// A teammate's seat: one team, one name.
pub struct FixedSeat {
    /// The team folder.
    pub dir: PathBuf,
    /// The member's name.
    pub name: String,
}

impl Seat for FixedSeat {
    fn seat(&self) -> Result<(PathBuf, String), TeamError> {
        Ok((self.dir.clone(), self.name.clone()))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Send,
    Add,
    Update,
    List,
    Get,
}

/// One of the shared team tools.
pub struct TeamTool {
    seat: Arc<dyn Seat>,
    op: Op,
    schema: CompiledSchema,
}

/// The five shared tools for `seat`.
pub fn shared_tools(seat: Arc<dyn Seat>) -> Vec<Arc<dyn DynTool>> {
    [Op::Send, Op::Add, Op::Update, Op::List, Op::Get]
        .into_iter()
        .map(|op| Arc::new(TeamTool::new(seat.clone(), op)) as Arc<dyn DynTool>)
        .collect()
}

impl TeamTool {
    fn new(seat: Arc<dyn Seat>, op: Op) -> TeamTool {
        let id = json!({"type": "integer", "minimum": 1, "description": "The item's number"});
        let ids = json!({"type": "array", "items": {"type": "integer", "minimum": 1},
                         "description": "Items that must be done before this one can start"});
        let status = json!({"type": "string", "enum": ["open", "in_progress", "done"]});
        let owner = json!({"type": "string", "description": "The member working on it"});
        let (properties, required) = match op {
            Op::Send => (
                json!({"to": {"type": "string", "description": "A member's name, `lead`, or `*` for every teammate"},
                       "text": {"type": "string", "description": "The message (the lead's `shutdown` ends a teammate)"}}),
                vec!["to", "text"],
            ),
            Op::Add => {
                (json!({"title": {"type": "string"}, "owner": owner, "blocked_by": ids}), vec!["title"])
            }
            Op::Update => (
                json!({"id": id, "status": status, "owner": owner, "title": {"type": "string"}, "blocked_by": ids}),
                vec!["id"],
            ),
            Op::List => (json!({}), vec![]),
            Op::Get => (json!({"id": id}), vec!["id"]),
        };
        let schema = json!({"type": "object", "properties": properties, "required": required,
                            "additionalProperties": false});
        TeamTool { seat, op, schema: CompiledSchema::new(schema) }
    }

    fn tool_name(&self) -> &'static str {
        match self.op {
            Op::Send => SEND_MESSAGE_TOOL,
            Op::Add => BOARD_TOOLS[0],
            Op::Update => BOARD_TOOLS[1],
            Op::List => BOARD_TOOLS[2],
            Op::Get => BOARD_TOOLS[3],
        }
    }

    /// Runs the call on a blocking thread (the locks may wait).
    async fn run(&self, args: Value) -> Result<ToolOutput, ToolError> {
        self.schema.validate(self.tool_name(), &args)?;
        let (dir, me) = self.seat.seat().map_err(|error| self.failed(error))?;
        let op = self.op;
        let seat = self.seat.clone();
        let done = tokio::task::spawn_blocking(move || act(op, &dir, &me, &args, seat.as_ref()))
            .await
            .map_err(|error| ToolError::Failed(format!("{}: {error}", self.tool_name())))?;
        done.map(ToolOutput::text).map_err(|error| self.failed(error))
    }

    fn failed(&self, error: TeamError) -> ToolError {
        ToolError::Failed(format!("{}: {error}", self.tool_name()))
    }
}

fn act(op: Op, dir: &std::path::Path, me: &str, args: &Value, seat: &dyn Seat) -> Result<String, TeamError> {
    let board = Board::new(dir);
    let number = |name: &str| args.get(name).and_then(Value::as_u64).map(|n| n.min(u32::MAX as u64) as u32);
    let text = |name: &str| args.get(name).and_then(Value::as_str).map(str::to_string);
    let ids = |name: &str| {
        args.get(name).and_then(Value::as_array).map(|list| {
            list.iter().filter_map(Value::as_u64).map(|n| n.min(u32::MAX as u64) as u32).collect::<Vec<_>>()
        })
    };
    match op {
        Op::Send => {
            let (to, body) = (text("to").unwrap_or_default(), text("text").unwrap_or_default());
            if body.len() > MAX_MESSAGE_BYTES {
                return Err(TeamError::Invalid(format!(
                    "the message is {} bytes, at most {MAX_MESSAGE_BYTES}: put long material in a file and send \
                     its path",
                    body.len()
                )));
            }
            let roster = Roster::load(dir)?;
            let targets: Vec<String> = if to == "*" {
                roster.members.keys().filter(|name| *name != me).cloned().collect()
            } else if to == me {
                return Err(TeamError::Invalid("a member cannot send a message to itself".into()));
            } else if roster.knows(&to) {
                vec![to.clone()]
            } else {
                return Err(TeamError::Invalid(format!(
                    "no member `{to}` in the team `{}`; the members are {}",
                    roster.name,
                    roster.names().join(", ")
                )));
            };
            let kind =
                if me == LEAD && body.trim() == SHUTDOWN_TEXT { Kind::Shutdown } else { Kind::Message };
            for target in &targets {
                post(&inbox_dir(dir), target, &Message::new(me, kind, body.clone()))?;
                seat.sent(target, kind);
            }
            Ok(match targets.as_slice() {
                [] => "no teammate to send to".to_string(),
                [one] if kind == Kind::Shutdown => format!("asked `{one}` to shut down"),
                [one] => format!("sent to `{one}`"),
                many => format!("sent to {}", many.join(", ")),
            })
        }
        Op::Add => {
            let item = board.add(
                me,
                &text("title").unwrap_or_default(),
                text("owner"),
                ids("blocked_by").unwrap_or_default(),
            )?;
            Ok(format!("added {}", with_links(&item)))
        }
        Op::Update => {
            let id = number("id").unwrap_or_default();
            let status = match text("status") {
                Some(word) => Some(
                    Status::parse(&word)
                        .ok_or_else(|| TeamError::Board(format!("unknown status `{word}`")))?,
                ),
                None => None,
            };
            let change = Change {
                title: text("title"),
                status,
                owner: text("owner").map(Some),
                blocked_by: ids("blocked_by"),
            };
            let item = board.update(me, id, &change)?;
            Ok(format!("updated {}", with_links(&item)))
        }
        Op::List => {
            let items = board.list()?;
            if items.is_empty() {
                return Ok("the board is empty".into());
            }
            Ok(items.iter().map(with_links).collect::<Vec<_>>().join("\n"))
        }
        Op::Get => {
            let item = board.get(number("id").unwrap_or_default())?;
            Ok(format!("{}\nlast changed by: {}", with_links(&item), item.updated_by))
        }
    }
}

fn with_links(item: &super::board::Item) -> String {
    let list = |ids: &[u32]| ids.iter().map(|id| format!("#{id}")).collect::<Vec<_>>().join(", ");
    let mut line = describe(item);
    if !item.blocked_by.is_empty() {
        line.push_str(&format!(" blocked by {}", list(&item.blocked_by)));
    }
    if !item.blocks.is_empty() {
        line.push_str(&format!(" blocks {}", list(&item.blocks)));
    }
    line
}

impl DynTool for TeamTool {
    fn name(&self) -> &str {
        self.tool_name()
    }

    fn spec(&self) -> ToolSpec {
        let description = match self.op {
            Op::Send => {
                "Send a message to a member of your team (`lead`, a teammate's name, or `*` for every \
                         teammate). It is the only way members talk; replies arrive as <team-mail>."
            }
            Op::Add => "Add an item to the team's task board (optionally blocked by other items).",
            Op::Update => {
                "Change a board item: take it (status in_progress; you become its owner), finish it \
                           (done), or change its title, owner or blocked_by. An item blocked by items not done \
                           cannot be taken or finished."
            }
            Op::List => {
                "List the team's task board: each item's number, title, status, owner and dependencies."
            }
            Op::Get => "Show one board item.",
        };
        ToolSpec {
            name: self.tool_name().into(),
            description: description.into(),
            input_schema: self.schema.schema().clone(),
        }
    }

    /// Team state only: nothing in the workspace changes.
    fn effect(&self, _args: &Value) -> Effect {
        Effect::ReadOnly
    }

    fn summary(&self, args: &Value) -> String {
        let field = |name: &str| args.get(name).map(|value| value.to_string()).unwrap_or_default();
        match self.op {
            Op::Send => format!("to {}", args.get("to").and_then(Value::as_str).unwrap_or_default()),
            Op::Add => args.get("title").and_then(Value::as_str).unwrap_or_default().to_string(),
            Op::Update | Op::Get => format!("#{}", field("id")),
            Op::List => String::new(),
        }
    }

    fn access(&self, args: &Value, _ctx: &ToolContext) -> Result<Access, ToolError> {
        self.schema.validate(self.tool_name(), args)?;
        Ok(Access::Session)
    }

    fn precheck(&self, _args: &Value, _ctx: &ToolContext) -> Result<(), ToolError> {
        Ok(())
    }

    fn call<'a>(
        &'a self,
        args: Value,
        _ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(self.run(args))
    }
}
