//! One open session as the ACP front end keeps it: the core's handle, the prompt turn waiting for
//! its stop reason, and what it remembers about the calls in flight (a file's text before an edit,
//! for the diff a client shows). [`Live::event`] turns each core event into what goes to the
//! client ([`Action`]): session updates, questions for the user, the end of the prompt turn.

use std::collections::HashMap;
use std::path::PathBuf;

use agent_client_protocol::v1::schema as acp;
use lathe_protocol::preview::{ResultView, ToolPreview};
use lathe_protocol::{AgentEvent, AgentOp, PermissionMode, RunStats, StopCause, StopReason, ToolCall};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::mapping::{self, lathe_meta, text_block};

/// Files larger than this are not read for a diff's old and new text.
const DIFF_MAX_BYTES: u64 = 1 << 20;

/// What the front end does for one core event.
#[derive(Debug)]
pub enum Action {
    /// Send a `session/update`.
    Update(acp::SessionUpdate),
    /// Ask the user with `session/request_permission`; the chosen option goes back as [`Asked`].
    Ask(acp::RequestPermissionRequest, Asked),
    /// The prompt turn ended: answer `session/prompt` (an error of the run is `Err`).
    Finish(Result<acp::PromptResponse, String>),
}

/// What a `session/request_permission` asked, so that its answer becomes the right op.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// A tool call's permission prompt.
    Permission { call_id: String },
    /// A plan presented with `exit_plan_mode`.
    Plan { call_id: String },
    /// An `ask_user` question with these options.
    Question { call_id: String, options: Vec<String> },
}

/// Option ids of the permission prompts (ACP `PermissionOption.optionId`).
pub const ALLOW_ONCE: &str = "allow_once";
/// Allow and remember the suggested rule.
pub const ALLOW_ALWAYS: &str = "allow_always";
/// Deny.
pub const REJECT_ONCE: &str = "reject_once";

/// A call in flight: its tool and, for an edit, the file and its text before the call.
#[derive(Debug, Clone)]
struct Call {
    tool: String,
    arguments: Value,
    file: Option<PathBuf>,
    before: Option<String>,
}

/// One open session. `P` is what waits for the running prompt turn's end: the `session/prompt`
/// responder over stdio; `lathe serve` keeps its own queue of prompts and uses `()`.
pub struct Live<P = agent_client_protocol::v1::Responder<acp::PromptResponse>> {
    /// The session id (Lathe's, also ACP's).
    pub id: String,
    /// Ops to the core.
    pub ops: mpsc::UnboundedSender<AgentOp>,
    /// The workspace root (the client's `cwd`).
    pub workspace: PathBuf,
    /// The permission mode in force.
    pub mode: PermissionMode,
    /// The running prompt turn's responder.
    pub prompt: Option<P>,
    /// The client cancelled the running turn.
    pub cancelled: bool,
    /// The core's session task.
    pub task: Option<tokio::task::JoinHandle<()>>,
    /// Counts the prompt turns: an answer to a question of an earlier turn is stale.
    pub turn: u64,
    last_stop: Option<StopReason>,
    calls: HashMap<String, Call>,
    warnings: Vec<String>,
}

impl<P> Live<P> {
    /// A session on `ops` rooted at `workspace`.
    pub fn new(id: String, ops: mpsc::UnboundedSender<AgentOp>, workspace: PathBuf) -> Live<P> {
        Live {
            id,
            ops,
            workspace,
            mode: PermissionMode::Default,
            prompt: None,
            cancelled: false,
            task: None,
            turn: 0,
            last_stop: None,
            calls: HashMap::new(),
            warnings: Vec::new(),
        }
    }

    /// Starts a prompt turn: forgets the last turn's stop and cancel.
    pub fn begin_turn(&mut self) {
        self.turn += 1;
        self.last_stop = None;
        self.cancelled = false;
    }

    /// Whether the answer to a question asked in `turn` still counts: it is this turn's and the
    /// turn was not cancelled (a cancel already denied what was waiting).
    pub fn takes_answer(&self, turn: u64) -> bool {
        self.prompt.is_some() && self.turn == turn && !self.cancelled
    }

    /// What to send the client for one core event (most events send nothing).
    pub fn event(&mut self, event: AgentEvent) -> Vec<Action> {
        let update = |update| vec![Action::Update(update)];
        match event {
            AgentEvent::SessionStarted { permission_mode, .. } => {
                self.mode = permission_mode;
                Vec::new()
            }
            AgentEvent::TextDelta { text } => {
                update(acp::SessionUpdate::AgentMessageChunk(acp::ContentChunk::new(text_block(text))))
            }
            AgentEvent::ThinkingDelta { text } => {
                update(acp::SessionUpdate::AgentThoughtChunk(acp::ContentChunk::new(text_block(text))))
            }
            AgentEvent::AssistantMessage { message } => {
                self.last_stop = Some(message.stop);
                Vec::new()
            }
            AgentEvent::ToolCallStarted { call, summary } => update(self.call_started(&call, &summary)),
            AgentEvent::PermissionRequest { call, reason, suggestion, preview } => {
                vec![self.permission(&call, &reason, suggestion.as_deref(), preview.as_ref())]
            }
            AgentEvent::PlanReady(ready) => vec![self.plan_ready(&ready)],
            AgentEvent::Question(question) => vec![self.question(question)],
            AgentEvent::ToolResult { result, tool, elapsed_ms, view } => {
                let call = self.calls.remove(&result.call_id);
                let mut fields =
                    acp::ToolCallUpdateFields::new().status(mapping::result_status(result.status));
                let diff = match (&view, &call) {
                    (Some(ResultView::Diff { .. }), Some(call)) => diff_after(call),
                    _ => None,
                };
                let text = match (&view, result.status) {
                    (Some(ResultView::Diff { unified, .. }), _) => unified.clone(),
                    _ => result.text_content(),
                };
                let content = match diff {
                    Some(diff) => acp::ToolCallContent::Diff(diff),
                    None => acp::ToolCallContent::Content(acp::Content::new(text_block(text))),
                };
                fields = fields.content(vec![content]);
                let receipt = result.receipt.as_ref();
                let meta = lathe_meta(json!({
                    "tool": tool, "status": result.status, "elapsed_ms": elapsed_ms,
                    "exit_code": receipt.and_then(|receipt| receipt.exit_code),
                    "decision": receipt.map(|receipt| receipt.decision.clone()),
                }));
                update(acp::SessionUpdate::ToolCallUpdate(
                    acp::ToolCallUpdate::new(result.call_id.clone(), fields).meta(meta),
                ))
            }
            AgentEvent::Todos { items } => update(acp::SessionUpdate::Plan(mapping::plan(&items))),
            AgentEvent::ModeChanged { mode } => {
                self.mode = mode;
                update(acp::SessionUpdate::CurrentModeUpdate(acp::CurrentModeUpdate::new(mode.as_str())))
            }
            AgentEvent::Commands { commands } => update(acp::SessionUpdate::AvailableCommandsUpdate(
                acp::AvailableCommandsUpdate::new(mapping::commands(&commands)),
            )),
            AgentEvent::Usage { stats, context: Some(context), .. } => {
                let usage = acp::UsageUpdate::new(context.used_tokens, context.window_tokens)
                    .cost(acp::Cost::new(stats.cost_usd, "USD"))
                    .meta(lathe_meta(json!({"stats": stats})));
                update(acp::SessionUpdate::UsageUpdate(usage))
            }
            AgentEvent::Warning { message } => {
                tracing::info!(session = %self.id, "warning: {message}");
                self.warnings.push(message);
                Vec::new()
            }
            AgentEvent::Finished { cause, stats, report, .. } if self.prompt.is_some() => {
                vec![Action::Finish(self.finished(&cause, &stats, report.as_ref()))]
            }
            _ => Vec::new(),
        }
    }

    /// A call that is about to be checked and run: `tool_call`, in progress; the file an edit
    /// changes is read first, for the diff.
    fn call_started(&mut self, call: &ToolCall, summary: &str) -> acp::SessionUpdate {
        let file = matches!(call.name.as_str(), "write_file" | "edit_file")
            .then(|| mapping::call_path(&call.arguments, &self.workspace))
            .flatten();
        let before = file.as_ref().and_then(|path| read_small(path));
        self.calls.insert(
            call.id.clone(),
            Call { tool: call.name.clone(), arguments: call.arguments.clone(), file, before },
        );
        acp::SessionUpdate::ToolCall(tool_call(call, summary, &self.workspace))
    }

    fn permission(
        &self,
        call: &ToolCall,
        reason: &str,
        suggestion: Option<&str>,
        preview: Option<&ToolPreview>,
    ) -> Action {
        let mut options =
            vec![acp::PermissionOption::new(ALLOW_ONCE, "Allow once", acp::PermissionOptionKind::AllowOnce)];
        if let Some(rule) = suggestion {
            options.push(acp::PermissionOption::new(
                ALLOW_ALWAYS,
                format!("Always allow {rule}"),
                acp::PermissionOptionKind::AllowAlways,
            ));
        }
        options.push(acp::PermissionOption::new(REJECT_ONCE, "Deny", acp::PermissionOptionKind::RejectOnce));
        let mut fields = acp::ToolCallUpdateFields::new().status(acp::ToolCallStatus::Pending);
        let content = match (preview, self.calls.get(&call.id)) {
            (Some(ToolPreview::Diff { .. }), Some(known)) => {
                let after = mapping::edited_text(&known.tool, &known.arguments, known.before.as_deref());
                match (&known.file, after) {
                    (Some(path), Some(after)) => Some(acp::ToolCallContent::Diff(
                        acp::Diff::new(path.clone(), after).old_text(known.before.clone()),
                    )),
                    _ => None,
                }
            }
            _ => None,
        };
        let content = content.or_else(|| match preview {
            Some(ToolPreview::Diff { unified, .. }) => Some(text_content(unified.clone())),
            Some(ToolPreview::Command { command, cwd }) => {
                Some(text_content(format!("{command}\n(in {cwd})")))
            }
            Some(ToolPreview::Url { url }) => Some(text_content(url.clone())),
            None => None,
        });
        if let Some(content) = content {
            fields = fields.content(vec![content]);
        }
        let update = acp::ToolCallUpdate::new(call.id.clone(), fields)
            .meta(lathe_meta(json!({"reason": reason, "suggestion": suggestion})));
        let request = acp::RequestPermissionRequest::new(self.id.clone(), update, options);
        Action::Ask(request, Asked::Permission { call_id: call.id.clone() })
    }

    fn plan_ready(&self, ready: &lathe_protocol::plan::PlanReady) -> Action {
        let options = vec![
            acp::PermissionOption::new(
                ALLOW_ALWAYS,
                "Carry it out, accepting edits",
                acp::PermissionOptionKind::AllowAlways,
            ),
            acp::PermissionOption::new(
                ALLOW_ONCE,
                "Carry it out, asking for each edit",
                acp::PermissionOptionKind::AllowOnce,
            ),
            acp::PermissionOption::new(REJECT_ONCE, "Keep planning", acp::PermissionOptionKind::RejectOnce),
        ];
        let fields = acp::ToolCallUpdateFields::new()
            .title("Ready to code?".to_string())
            .status(acp::ToolCallStatus::Pending)
            .content(vec![text_content(ready.plan.clone())]);
        let update = acp::ToolCallUpdate::new(ready.call_id.clone(), fields);
        let request = acp::RequestPermissionRequest::new(self.id.clone(), update, options);
        Action::Ask(request, Asked::Plan { call_id: ready.call_id.clone() })
    }

    fn question(&self, question: lathe_protocol::question::Question) -> Action {
        let mut options: Vec<acp::PermissionOption> = question
            .options
            .iter()
            .enumerate()
            .map(|(index, text)| {
                acp::PermissionOption::new(
                    format!("answer_{index}"),
                    text.clone(),
                    acp::PermissionOptionKind::AllowOnce,
                )
            })
            .collect();
        options.push(acp::PermissionOption::new(
            "decline",
            "Let the agent decide",
            acp::PermissionOptionKind::RejectOnce,
        ));
        let fields = acp::ToolCallUpdateFields::new()
            .title(question.question.clone())
            .status(acp::ToolCallStatus::Pending)
            .content(vec![text_content(question.question.clone())]);
        let update = acp::ToolCallUpdate::new(question.call_id.clone(), fields);
        let request = acp::RequestPermissionRequest::new(self.id.clone(), update, options);
        Action::Ask(request, Asked::Question { call_id: question.call_id, options: question.options })
    }

    fn finished(
        &mut self,
        cause: &StopCause,
        stats: &RunStats,
        report: Option<&lathe_protocol::RunReport>,
    ) -> Result<acp::PromptResponse, String> {
        let reason = mapping::stop_reason(cause, self.last_stop, self.cancelled)?;
        // The warnings since the last answer (the session start's with the first one).
        let warnings = std::mem::take(&mut self.warnings);
        let meta = lathe_meta(json!({
            "cause": cause, "stats": stats, "report": report, "warnings": warnings,
        }));
        Ok(acp::PromptResponse::new(reason).meta(meta))
    }
}

/// The ops that answer what was asked, for the option the client chose (`None`: it cancelled or
/// failed, which denies, keeps planning or declines).
pub fn answer(asked: &Asked, chosen: Option<&str>) -> Vec<AgentOp> {
    use lathe_protocol::PermissionAnswer;
    use lathe_protocol::plan::PlanAnswer;
    use lathe_protocol::question::QuestionAnswer;
    match asked {
        Asked::Permission { call_id } => {
            let answer = match chosen {
                Some(ALLOW_ONCE) => PermissionAnswer::AllowOnce,
                Some(ALLOW_ALWAYS) => PermissionAnswer::AllowAlways,
                _ => PermissionAnswer::Deny { feedback: None },
            };
            vec![AgentOp::Permission { call_id: call_id.clone(), answer }]
        }
        Asked::Plan { call_id } => {
            let (mode, answer) = match chosen {
                Some(ALLOW_ALWAYS) => (Some(PermissionMode::AcceptEdits), PlanAnswer::Approve),
                Some(ALLOW_ONCE) => (Some(PermissionMode::Default), PlanAnswer::Approve),
                _ => (None, PlanAnswer::KeepPlanning { feedback: String::new() }),
            };
            let plan = AgentOp::PlanAnswer { call_id: call_id.clone(), answer };
            mode.map(|mode| AgentOp::SetMode { mode }).into_iter().chain([plan]).collect()
        }
        Asked::Question { call_id, options } => {
            let picked = chosen
                .and_then(|id| id.strip_prefix("answer_"))
                .and_then(|index| index.parse::<usize>().ok())
                .and_then(|index| options.get(index));
            let answer = match picked {
                Some(text) => QuestionAnswer::Answered { text: text.clone() },
                None => QuestionAnswer::Declined,
            };
            vec![AgentOp::QuestionAnswer { call_id: call_id.clone(), answer }]
        }
    }
}

/// A call as ACP's `tool_call`, in progress.
pub fn tool_call(call: &ToolCall, summary: &str, workspace: &std::path::Path) -> acp::ToolCall {
    acp::ToolCall::new(call.id.clone(), mapping::tool_title(&call.name, summary))
        .kind(mapping::tool_kind(&call.name))
        .status(acp::ToolCallStatus::InProgress)
        .locations(mapping::tool_locations(&call.arguments, workspace))
        .raw_input(call.arguments.clone())
}

fn text_content(text: String) -> acp::ToolCallContent {
    acp::ToolCallContent::Content(acp::Content::new(text_block(text)))
}

/// The diff of a finished edit: the file's text before the call and as it is now.
fn diff_after(call: &Call) -> Option<acp::Diff> {
    let path = call.file.as_ref()?;
    let after = read_small(path)?;
    Some(acp::Diff::new(path.clone(), after).old_text(call.before.clone()))
}

/// A file's text when it exists, is UTF-8 and is at most [`DIFF_MAX_BYTES`].
fn read_small(path: &std::path::Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > DIFF_MAX_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
