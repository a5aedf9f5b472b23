//! Building and running one sub-agent for the `task` tool: in the foreground (the call waits for
//! its answer) or in the background (the call returns its id; [`super::background`]).

use std::sync::Arc;

use lathe_protocol::{AgentEvent, LedgerItem, Meta, StopCause, SystemBlock, UserMessage};
use lathe_tools::{ToolContext, ToolError, ToolOutput, ToolRegistry};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::background::{BackgroundTable, Ended, Running};
use super::parent::{Forwarder, Parent, SUBAGENT_MAX_TURNS, SUBAGENT_TIME_LIMIT, outcome};
use crate::agent::{Agent, AgentSettings};
use crate::session::SessionWriter;

/// A sub-agent ready to be built: who it is, what it starts from and what it may use.
pub(super) struct Launch {
    /// Its agent type, or `fork`.
    pub kind: String,
    /// Its id (`<kind>-<uuid>`), also its transcript's name.
    pub id: String,
    pub system: Vec<SystemBlock>,
    pub tools: ToolRegistry,
    /// The conversation before its prompt (a fork's copy of its parent's; empty otherwise).
    pub history: Vec<LedgerItem>,
    /// Its prompt.
    pub input: UserMessage,
    /// Its model, when not the parent's.
    pub model: Option<String>,
}

impl Launch {
    /// A sub-agent of `kind`; a background one (`background`) is named after the call `ctx`.
    pub(super) fn new(kind: &str, background: bool, ctx: &ToolContext) -> Launch {
        let id = background
            .then(|| background_id(kind, &ctx.call_id))
            .flatten()
            .unwrap_or_else(|| format!("{kind}-{}", uuid::Uuid::now_v7().simple()));
        Launch {
            kind: kind.to_string(),
            id,
            system: Vec::new(),
            tools: ToolRegistry::empty(),
            history: Vec::new(),
            input: UserMessage::text(""),
            model: None,
        }
    }
}

/// A built sub-agent.
pub(super) struct Built {
    pub agent: Agent,
    pub forward: Forwarder,
    pub input: UserMessage,
    pub max_turns: u32,
}

/// Builds the sub-agent of `launch` for the call `ctx` under `parent`, its calls cancelled by
/// `cancel`; `ask` gives it the parent's approver (a background one has none: an `ask` is denied).
pub(super) fn build(
    parent: &Parent,
    launch: Launch,
    ctx: &ToolContext,
    cancel: CancellationToken,
    ask: bool,
) -> Built {
    let Launch { kind, id, system, tools, history, input, model } = launch;
    let forward = Forwarder { parent_call_id: ctx.call_id.clone(), agent_id: id.clone(), kind: kind.clone() };
    let mut settings: AgentSettings = parent.settings.clone();
    if let Some(model) = model.filter(|model| *model != settings.model) {
        settings.model_info = crate::pricing::model_info(&model, parent.provider.name());
        settings.model = model;
    }
    settings.max_turns = settings.max_turns.min(SUBAGENT_MAX_TURNS);
    settings.permission_mode = parent.policy.mode();
    settings.max_cost_usd = settings.max_cost_usd.map(|limit| (limit - parent.meter.spent_usd()).max(0.0));
    let mut items = vec![LedgerItem::Meta(Meta::SessionStart {
        session_id: id.clone(),
        cwd: ctx.workspace.display().to_string(),
        model: settings.model.clone(),
        provider: parent.provider.name().to_string(),
        time_ms: crate::clock::now_ms(),
    })];
    items.extend(history);
    let writer = match &parent.transcripts {
        None => None,
        Some(dir) => match open_transcript(dir, &id, &items) {
            Ok(writer) => Some(writer),
            Err(error) => {
                let message = format!("{kind}: transcript not saved: {error}");
                forward.send(&parent.events, AgentEvent::Warning { message });
                None
            }
        },
    };
    let mut sub_ctx = ctx.clone();
    sub_ctx.cancel = cancel;
    sub_ctx.call_id = String::new();
    let max_turns = settings.max_turns;
    let mut agent = Agent::new(parent.provider.clone(), tools, sub_ctx, system, items, writer, settings)
        .with_policy(parent.policy.clone())
        .with_subagent_hooks(parent.hooks.clone())
        .with_reviewer(parent.reviewer.clone(), false);
    if ask && let Some(approver) = &parent.approver {
        agent = agent.with_approver(approver.clone());
    }
    Built { agent, forward, input, max_turns }
}

/// Opens the transcript `<dir>/<id>.jsonl` with `items` (the sub-agent's start) written.
fn open_transcript(
    dir: &std::path::Path,
    id: &str,
    items: &[LedgerItem],
) -> Result<SessionWriter, crate::session::SessionError> {
    let mut writer = SessionWriter::open(dir, id)?;
    for item in items {
        writer.append(item)?;
    }
    Ok(writer)
}

/// Runs `built` to its end (or [`SUBAGENT_TIME_LIMIT`]), relaying its events to `events` and, for
/// a background one, its progress to `table`. Returns why it stopped and whether time ran out.
pub(super) async fn drive(
    built: &mut Built,
    events: &mpsc::UnboundedSender<AgentEvent>,
    cancel: &CancellationToken,
    table: Option<&Arc<BackgroundTable>>,
) -> (StopCause, bool) {
    let (sender, mut receiver) = mpsc::unbounded_channel();
    let events = events.clone();
    let forward = built.forward.clone();
    let table = table.cloned();
    let relay = tokio::spawn(async move {
        while let Some(event) = receiver.recv().await {
            if let Some(table) = &table {
                match &event {
                    AgentEvent::ToolResult { .. } => table.progress(&forward.agent_id, true, None),
                    AgentEvent::AssistantMessage { message } => {
                        table.progress(&forward.agent_id, false, Some(message.text()))
                    }
                    _ => {}
                }
            }
            forward.relay(&events, event);
        }
    });
    let mut timed_out = false;
    let cause = {
        let run = built.agent.run(built.input.clone(), &sender, cancel);
        tokio::pin!(run);
        tokio::select! {
            cause = &mut run => cause,
            () = tokio::time::sleep(SUBAGENT_TIME_LIMIT) => {
                timed_out = true;
                cancel.cancel();
                run.await
            }
        }
    };
    drop(sender);
    let _ = relay.await;
    (cause, timed_out)
}

/// Starts `launch` in the background for the call `ctx`; the call's result names it.
pub(super) fn start_background(
    parent: &Parent,
    launch: Launch,
    description: &str,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let info = Running {
        agent_id: launch.id.clone(),
        subagent_type: launch.kind.clone(),
        description: description.into(),
    };
    let cancel = CancellationToken::new();
    parent
        .background
        .insert(info.clone(), cancel.clone())
        .map_err(|why| ToolError::Failed(format!("task: {why}")))?;
    let mut built = build(parent, launch, ctx, cancel.clone(), false);
    let (table, meter, events) = (parent.background.clone(), parent.meter.clone(), parent.events.clone());
    let task_info = info.clone();
    let handle = tokio::spawn(async move {
        let (cause, timed_out) = drive(&mut built, &events, &cancel, Some(&table)).await;
        let stats = built.agent.stats();
        meter.add(stats);
        let (status, report) = match outcome(
            &task_info.subagent_type,
            &task_info.agent_id,
            cause,
            &built.agent,
            built.max_turns,
            timed_out,
        ) {
            Ok(output) => (if output.is_error { "failed" } else { "completed" }, output_text(&output)),
            Err(ToolError::Cancelled) => ("killed", "(stopped before it finished)".to_string()),
            Err(error) => ("failed", error.to_string()),
        };
        table.finish(&task_info.agent_id, Ended { status, report, stats });
        let _ = events.send(event(&task_info, status));
    });
    parent.background.attach(&info.agent_id, handle);
    let _ = parent.events.send(event(&info, "running"));
    let text = format!(
        "Started the background sub-agent `{id}` ({kind}: {description}). Its report arrives on its own as a \
         <task-notification> before one of your next requests; meanwhile go on with other work. \
         task_output {{\"id\": \"{id}\"}} shows its progress, task_kill stops it.",
        id = info.agent_id,
        kind = info.subagent_type,
    );
    let mut output = ToolOutput::text(text);
    output.ledger.push(Meta::SubagentStarted {
        agent_id: info.agent_id,
        subagent_type: info.subagent_type,
        description: info.description,
    });
    Ok(output)
}

/// A background sub-agent's id: its type and the id of the call that started it (unique in the
/// session, and known to the model), in characters safe for a file name; `None` without a call id.
fn background_id(kind: &str, call_id: &str) -> Option<String> {
    let safe: String = call_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    (!safe.is_empty()).then(|| format!("{kind}-{safe}"))
}

fn event(info: &Running, status: &str) -> AgentEvent {
    AgentEvent::BackgroundAgent {
        agent_id: info.agent_id.clone(),
        subagent_type: info.subagent_type.clone(),
        description: info.description.clone(),
        status: status.to_string(),
    }
}

fn output_text(output: &ToolOutput) -> String {
    output
        .content
        .iter()
        .filter_map(|content| match content {
            lathe_protocol::Content::Text { text } => Some(text.as_str()),
            lathe_protocol::Content::Image { .. }
            | lathe_protocol::Content::Thinking(_)
            | lathe_protocol::Content::ToolCall(_) => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
