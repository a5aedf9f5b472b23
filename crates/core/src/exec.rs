//! Executing one response's tool calls (ARCHITECTURE.md §3, the tool leg of a turn).
//!
//! Flow for each call: response cut short (output limit, refusal)? → incomplete JSON? → unknown tool? →
//! permission decision (policy mode, then the front end or the headless rule) → run with the
//! run's cancellation token → [`ToolResult`] with a [`Receipt`]. Argument validation happens
//! inside [`DynTool::call`] before anything runs.
//!
//! Scheduling: calls are grouped in model order into batches; consecutive read-only calls form one
//! batch and run concurrently, every other call is a batch of its own. Results are returned in model
//! order whatever order they finished in.

use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use futures::future::join_all;
use lathe_policy::{ActionKind, Decision, Effect, PermissionMode};
use lathe_protocol::{
    AgentEvent, Content, PermissionAnswer, Receipt, StopReason, ToolCall, ToolResult, ToolStatus,
};
use lathe_tools::{DynTool, ToolContext, ToolError, ToolRegistry};
use tokio::sync::{Mutex, mpsc};

/// Answers permission prompts. The headless front end has none; an interactive one implements it by
/// emitting [`AgentEvent::PermissionRequest`] and waiting for the user's op.
pub trait Approver: Send + Sync {
    /// Asks the user about `call`; `reason` says what the call would do.
    fn ask<'a>(
        &'a self,
        call: &'a ToolCall,
        reason: &'a str,
    ) -> futures::future::BoxFuture<'a, PermissionAnswer>;
}

/// One executed call: its result and the tool's todo list update, if any.
pub(crate) struct Executed {
    pub result: ToolResult,
    pub tool: String,
    pub elapsed_ms: u64,
}

/// Everything the executor needs, borrowed from the agent for one response.
pub(crate) struct Executor<'a> {
    pub tools: &'a ToolRegistry,
    pub ctx: &'a ToolContext,
    pub mode: PermissionMode,
    pub approver: Option<&'a dyn Approver>,
    pub events: &'a mpsc::UnboundedSender<AgentEvent>,
    /// Serialises permission prompts so concurrent calls never ask at once.
    pub prompt_lock: Mutex<()>,
    /// Set when the response did not end on its own — cut by the output-token limit (`MaxTokens`)
    /// or stopped by the provider (`Refusal`: a refusal or content filter): none of its calls
    /// runs, whatever its JSON, and each is answered with why.
    pub cut_short: Option<StopReason>,
}

impl Executor<'_> {
    /// Runs `calls` (one response's, in model order) and returns their results in the same order.
    pub async fn run_all(&self, calls: &[ToolCall]) -> Vec<Executed> {
        let mut results = Vec::with_capacity(calls.len());
        for batch in self.batches(calls) {
            if self.ctx.cancel.is_cancelled() {
                results.extend(batch.iter().map(|call| interrupted(call, "cancelled before it started")));
                continue;
            }
            results.extend(join_all(batch.iter().map(|call| self.run_one(call))).await);
        }
        results
    }

    fn effect_of(&self, call: &ToolCall) -> Effect {
        match self.tools.get(&call.name) {
            // Nothing runs for these, so they never need to wait for a mutating call.
            None => Effect::ReadOnly,
            Some(_) if call.incomplete.is_some() || self.cut_short.is_some() => Effect::ReadOnly,
            Some(tool) => tool.effect(&call.arguments),
        }
    }

    fn batches<'c>(&self, calls: &'c [ToolCall]) -> Vec<&'c [ToolCall]> {
        let mut batches = Vec::new();
        let mut start = 0;
        while start < calls.len() {
            let mut end = start + 1;
            if self.effect_of(&calls[start]) == Effect::ReadOnly {
                while end < calls.len() && self.effect_of(&calls[end]) == Effect::ReadOnly {
                    end += 1;
                }
            }
            batches.push(&calls[start..end]);
            start = end;
        }
        batches
    }

    async fn run_one(&self, call: &ToolCall) -> Executed {
        let _ = self.events.send(AgentEvent::ToolCallStarted { call: call.clone() });
        let started = Instant::now();
        let started_ms =
            SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
        let mut receipt = Receipt { tool: call.name.clone(), started_ms, ..Receipt::default() };

        let (content, is_error, status) = match self.prepare(call, &mut receipt).await {
            Err((text, status)) => (vec![Content::text(text)], true, status),
            Ok(tool) => match tool.call(call.arguments.clone(), self.ctx).await {
                Ok(output) => {
                    receipt.exit_code = output.exit_code;
                    receipt.spill_path = output.spill_path.map(|path| path.display().to_string());
                    if let Some(items) = output.todos {
                        let _ = self.events.send(AgentEvent::Todos { items });
                    }
                    (output.content, output.is_error, ToolStatus::Completed)
                }
                Err(error) => {
                    let status = match error {
                        ToolError::Cancelled | ToolError::TimedOut(_) => ToolStatus::Interrupted,
                        ToolError::InvalidArguments { .. } | ToolError::Failed(_) => ToolStatus::Failed,
                    };
                    let text = match &error {
                        ToolError::Cancelled => "interrupted: the user cancelled this call".to_string(),
                        ToolError::InvalidArguments { .. }
                        | ToolError::Failed(_)
                        | ToolError::TimedOut(_) => error.to_string(),
                    };
                    (vec![Content::text(text)], true, status)
                }
            },
        };
        let elapsed_ms = started.elapsed().as_millis() as u64;
        receipt.elapsed_ms = elapsed_ms;
        let result =
            ToolResult { call_id: call.id.clone(), content, is_error, status, receipt: Some(receipt) };
        Executed { result, tool: call.name.clone(), elapsed_ms }
    }

    /// Everything before running: completeness, lookup, permission. `Err` is the result to return
    /// instead of running.
    async fn prepare(
        &self,
        call: &ToolCall,
        receipt: &mut Receipt,
    ) -> Result<Arc<dyn DynTool>, (String, ToolStatus)> {
        if let Some(stop) = self.cut_short {
            let (decision, why, retry) = match stop {
                StopReason::Refusal => (
                    "not run: the provider stopped the response",
                    "was stopped by the provider (a refusal or content filter) before it ended",
                    "Send the call again in a response of its own if it is still needed.",
                ),
                StopReason::MaxTokens
                | StopReason::EndTurn
                | StopReason::ToolUse
                | StopReason::StopSequence
                | StopReason::PauseTurn
                | StopReason::Error
                | StopReason::Cancelled => (
                    "not run: the response was cut by the output token limit",
                    "was cut off by the output token limit before it ended",
                    "Send it again in a shorter response: fewer calls at once, or smaller arguments (write a \
                     large file in parts).",
                ),
            };
            receipt.decision = decision.into();
            return Err((
                format!(
                    "error: your response {why}, so this {} call was not run (a call from an unfinished \
                     response may be incomplete). {retry}",
                    call.name
                ),
                ToolStatus::Failed,
            ));
        }
        if let Some(raw) = &call.incomplete {
            receipt.decision = "not run: incomplete arguments".into();
            let excerpt: String = raw.chars().take(120).collect();
            let ellipsis = if raw.chars().count() > 120 { "…" } else { "" };
            return Err((
                format!(
                    "error: the arguments of this {} call did not arrive as a complete JSON object ({} bytes: \
                     {excerpt}{ellipsis}), so it was not run. If your output was cut off by the token limit, \
                     retry with smaller arguments (write a large file in parts); otherwise send the arguments \
                     as one JSON object.",
                    call.name,
                    raw.len()
                ),
                ToolStatus::Failed,
            ));
        }
        let Some(tool) = self.tools.get(&call.name) else {
            receipt.decision = "not run: unknown tool".into();
            return Err((
                format!(
                    "error: unknown tool `{}`. Available tools: {}.",
                    call.name,
                    self.tools.names().join(", ")
                ),
                ToolStatus::Failed,
            ));
        };
        receipt.summary = tool.summary(&call.arguments);
        let effect = tool.effect(&call.arguments);
        let kind = action_kind(&call.name, effect);
        let mut decision = lathe_policy::decide(self.mode, effect, kind);
        // accept-edits covers the workspace only; an edit elsewhere (an absolute path, `..`, a
        // symlink pointing out) needs approval like any other change outside it.
        if kind == ActionKind::Edit
            && matches!(decision, Decision::Allow { .. })
            && self.mode == PermissionMode::AcceptEdits
            && let Some(path) = call.arguments.get("path").and_then(|path| path.as_str())
            && !inside_workspace(self.ctx, path)
        {
            decision = Decision::Ask { reason: format!("this call edits {path}, outside the workspace") };
        }
        let decision = match (decision, self.approver) {
            (Decision::Ask { reason }, Some(approver)) => {
                let _guard = self.prompt_lock.lock().await;
                match approver.ask(call, &reason).await {
                    PermissionAnswer::AllowOnce | PermissionAnswer::AllowAlways => {
                        Decision::Allow { reason: "approved by the user".into() }
                    }
                    PermissionAnswer::Deny { feedback } => Decision::Deny {
                        reason: match feedback {
                            Some(feedback) => format!("the user denied this call and said: {feedback}"),
                            None => "the user denied this call".into(),
                        },
                    },
                }
            }
            (decision, _) => lathe_policy::resolve_headless(decision, kind),
        };
        match decision {
            Decision::Allow { reason } => {
                receipt.decision = format!("allow ({reason})");
                Ok(tool)
            }
            Decision::Deny { reason } => {
                receipt.decision = format!("deny ({reason})");
                Err((format!("error: {reason}. The call was not run."), ToolStatus::Denied))
            }
            Decision::Ask { reason } => {
                receipt.decision = format!("deny (unanswered: {reason})");
                Err((format!("error: permission needed ({reason}); not run."), ToolStatus::Denied))
            }
        }
    }
}

/// A result for a call that never got to run because the run was cancelled.
pub(crate) fn interrupted(call: &ToolCall, why: &str) -> Executed {
    Executed {
        result: ToolResult::text(
            &call.id,
            format!("interrupted: {why}; the call was not run"),
            true,
            ToolStatus::Interrupted,
        ),
        tool: call.name.clone(),
        elapsed_ms: 0,
    }
}

/// Whether `path` (resolved against the workspace) lies inside the workspace.
fn inside_workspace(ctx: &ToolContext, path: &str) -> bool {
    lathe_policy::path::is_inside(&ctx.workspace, &ctx.resolve(path))
}

fn action_kind(tool: &str, effect: Effect) -> ActionKind {
    match (tool, effect) {
        (_, Effect::ReadOnly) => ActionKind::Read,
        ("write_file" | "edit_file", _) => ActionKind::Edit,
        ("shell", _) => ActionKind::Execute,
        (_, Effect::Network) => ActionKind::Fetch,
        (_, Effect::Mutating) => ActionKind::Other,
    }
}
