//! Executing one response's tool calls (ARCHITECTURE.md §3, the tool leg of a turn).
//!
//! Flow for each call (the checks are [`inspect`]'s inspectors, in its one order): response cut
//! short (output limit, refusal)? → incomplete JSON? → unknown tool? → arguments valid? (an invalid
//! call is reported as invalid, never judged) → what the call touches ([`DynTool::access`]) →
//! PreToolUse hooks (a block binds in every mode, bypass included)
//! → one permission decision ([`Policy::decide`]: rules, path guard, shell analysis, mode, sandbox;
//! a hook's allow turns an ask into an allow, its ask turns an allow into an ask) → an ask goes to
//! the front end's [`Approver`] (Notification hooks fire), or headless becomes a denial naming what
//! would allow it → run with the run's cancellation token → PostToolUse hooks (their feedback is
//! added to the result) → [`ToolResult`] with a [`Receipt`] naming the rule, mode or hook that
//! decided (and, for a file tool's change, the file and its line counts). The executor only
//! enforces; every judgement is the policy's or a hook's.
//!
//! Before any of that, the run's [`CallGuard`] may refuse a call (too many calls in one response,
//! a call repeated too often); a refused call is answered with why, not run.
//!
//! Scheduling: calls are grouped in model order into batches; consecutive read-only and network
//! calls (`web_fetch`) form one batch and run concurrently, every other call is a batch of its own.
//! Results are returned in model order whatever order they finished in.

use std::time::Instant;

use futures::future::{BoxFuture, join_all};
use lathe_policy::{Decision, Effect, Policy, Verdict};
use lathe_protocol::{
    AgentEvent, Content, PermissionAnswer, Receipt, ResultView, StopReason, ToolCall, ToolPreview,
    ToolResult, ToolStatus,
};
use lathe_tools::{DynTool, ToolContext, ToolError, ToolRegistry};
use tokio::sync::{Mutex, mpsc};

use self::inspect::CallEnv;
use crate::guards::{CallGuard, Refusal};
use crate::hooks::{HookEvent, HookVerdict, Hooks};

mod inspect;

/// Answers permission prompts. The headless front end has none; an interactive one implements it by
/// emitting [`AgentEvent::PermissionRequest`] and waiting for the user's op.
pub trait Approver: Send + Sync {
    /// Asks the user about `call`; `reason` says why it needs asking, `suggestion` the prefix
    /// rules an "always" answer would store (`None` when no rule is safe to store), `preview` what
    /// the call would do as its tool shows it ([`DynTool::preview`]: an edit's diff, a command).
    fn ask<'a>(
        &'a self,
        call: &'a ToolCall,
        reason: &'a str,
        suggestion: Option<&'a str>,
        preview: Option<&'a ToolPreview>,
    ) -> futures::future::BoxFuture<'a, PermissionAnswer>;
}

/// One executed call: its result, the tool's name, its wall time and how the tool suggests showing
/// the result ([`ToolOutput::view`](lathe_tools::ToolOutput::view)).
pub(crate) struct Executed {
    pub result: ToolResult,
    pub tool: String,
    pub elapsed_ms: u64,
    pub view: Option<ResultView>,
    /// Ledger items the tool asked to add after the result ([`lathe_tools::ToolOutput::ledger`]).
    pub ledger: Vec<lathe_protocol::Meta>,
    /// The run ends after this response's calls ([`lathe_tools::ToolOutput::ends_run`]).
    pub ends_run: bool,
}

/// Everything the executor needs, borrowed from the agent for one response.
pub(crate) struct Executor<'a> {
    pub tools: &'a ToolRegistry,
    pub ctx: &'a ToolContext,
    pub policy: &'a Policy,
    pub approver: Option<&'a dyn Approver>,
    /// Auto mode's reviewer: decides the asks the policy marks for review.
    pub reviewer: Option<&'a crate::auto_mode::Reviewer>,
    /// Set when auto mode had fallen back to asking and nobody can be asked (headless): why; the
    /// run stops after this batch (`error_auto_blocked`).
    pub auto_blocked: std::sync::Mutex<Option<String>>,
    pub events: &'a mpsc::UnboundedSender<AgentEvent>,
    /// Serialises permission prompts so concurrent calls never ask at once.
    pub prompt_lock: Mutex<()>,
    /// Set when the response did not end on its own — cut by the output-token limit (`MaxTokens`)
    /// or stopped by the provider (`Refusal`: a refusal or content filter): none of its calls
    /// runs, whatever its JSON, and each is answered with why.
    pub cut_short: Option<StopReason>,
    /// The session's hooks (PreToolUse, PostToolUse, Notification).
    pub hooks: &'a Hooks,
    /// Set when a hook answered `"continue": false`: the reason; the loop stops after this batch.
    pub stop: std::sync::Mutex<Option<String>>,
}

impl Executor<'_> {
    /// Runs `calls` (one response's, in model order) and returns their results in the same order.
    /// Each call is first put to `guard` (in model order, before its batch starts): a refused call
    /// is answered, not run.
    pub async fn run_all(&self, calls: &[ToolCall], guard: &mut CallGuard) -> Vec<Executed> {
        let mut results = Vec::with_capacity(calls.len());
        let mut index = 0;
        for batch in self.batches(calls) {
            let first = index;
            index += batch.len();
            if self.ctx.cancel.is_cancelled() {
                results.extend(batch.iter().map(|call| interrupted(call, "cancelled before it started")));
                continue;
            }
            let refusals: Vec<Option<Refusal>> = batch
                .iter()
                .enumerate()
                .map(|(offset, call)| self.screen(guard, call, first + offset, calls.len()))
                .collect();
            let done = join_all(batch.iter().zip(refusals).map(|(call, refusal)| async move {
                match refusal {
                    Some(refusal) => self.refuse(call, refusal),
                    None => self.run_one(call).await,
                }
            }))
            .await;
            for (call, executed) in batch.iter().zip(&done) {
                guard.ran(call, self.effect_of(call) == Effect::Mutating, &executed.result);
            }
            results.extend(done);
        }
        results
    }

    /// Puts `call` to the guards, unless it would not run anyway (response cut short, incomplete
    /// arguments, unknown tool: [`Self::prepare`] answers those).
    fn screen(&self, guard: &mut CallGuard, call: &ToolCall, index: usize, total: usize) -> Option<Refusal> {
        if self.cut_short.is_some() || call.incomplete.is_some() || self.tools.get(&call.name).is_none() {
            return None;
        }
        guard.check(call, index, total)
    }

    /// Announces `call` with its tool's one-line summary (the generic one for an unknown tool,
    /// none for arguments cut off).
    fn announce(&self, call: &ToolCall) {
        let summary = match (&call.incomplete, self.tools.get(&call.name)) {
            (Some(_), _) => String::new(),
            (None, Some(tool)) => tool.summary(&call.arguments),
            (None, None) => lathe_tools::summarize_args(&call.arguments),
        };
        let _ = self.events.send(AgentEvent::ToolCallStarted { call: call.clone(), summary });
    }

    /// The result of a call the guards refused.
    fn refuse(&self, call: &ToolCall, refusal: Refusal) -> Executed {
        self.announce(call);
        let started_ms = crate::clock::now_ms();
        let receipt = Receipt {
            tool: call.name.clone(),
            started_ms,
            decision: refusal.decision.into(),
            summary: self.tools.get(&call.name).map(|tool| tool.summary(&call.arguments)).unwrap_or_default(),
            ..Receipt::default()
        };
        let result = ToolResult {
            call_id: call.id.clone(),
            content: vec![Content::text(refusal.message)],
            is_error: true,
            status: ToolStatus::Failed,
            receipt: Some(receipt),
        };
        Executed {
            result,
            tool: call.name.clone(),
            elapsed_ms: 0,
            view: None,
            ledger: Vec::new(),
            ends_run: false,
        }
    }

    fn effect_of(&self, call: &ToolCall) -> Effect {
        match self.tools.get(&call.name) {
            // Nothing runs for these, so they never need to wait for a mutating call.
            None => Effect::ReadOnly,
            Some(_) if call.incomplete.is_some() || self.cut_short.is_some() => Effect::ReadOnly,
            Some(tool) => tool.effect(&call.arguments),
        }
    }

    /// Consecutive calls that change nothing locally (read-only and network calls) form one
    /// batch; every other call is a batch of its own.
    fn batches<'c>(&self, calls: &'c [ToolCall]) -> Vec<&'c [ToolCall]> {
        let concurrent = |call: &ToolCall| self.effect_of(call) != Effect::Mutating;
        let mut batches = Vec::new();
        let mut start = 0;
        while start < calls.len() {
            let mut end = start + 1;
            if concurrent(&calls[start]) {
                while end < calls.len() && concurrent(&calls[end]) {
                    end += 1;
                }
            }
            batches.push(&calls[start..end]);
            start = end;
        }
        batches
    }

    async fn run_one(&self, call: &ToolCall) -> Executed {
        self.announce(call);
        let started = Instant::now();
        let started_ms = crate::clock::now_ms();
        let mut receipt = Receipt { tool: call.name.clone(), started_ms, ..Receipt::default() };

        let prepared = inspect::inspect(self, call, &mut receipt).await;
        let ran = prepared.is_ok();
        let mut view = None;
        let mut ledger = Vec::new();
        let mut ends_run = false;
        let (mut content, is_error, status) = match prepared {
            Err((text, status)) => (vec![Content::text(text)], true, status),
            Ok(tool) => match tool.call(call.arguments.clone(), &self.call_context(call)).await {
                Ok(output) => {
                    receipt.exit_code = output.exit_code;
                    receipt.spill_path = output.spill_path.map(|path| path.display().to_string());
                    // The run report counts what the file tools changed (lathe_protocol::report).
                    receipt.change = output.change.filter(|_| !output.is_error);
                    if let Some(items) = output.todos {
                        let _ = self.events.send(AgentEvent::Todos { items });
                    }
                    view = output.view;
                    ledger = output.ledger;
                    ends_run = output.ends_run;
                    (output.content, output.is_error, ToolStatus::Completed)
                }
                Err(error) => {
                    let status = match error {
                        ToolError::Cancelled | ToolError::TimedOut(_) => ToolStatus::Interrupted,
                        ToolError::InvalidArguments { .. } | ToolError::Failed(_) => ToolStatus::Failed,
                        ToolError::Refused(_) => ToolStatus::Denied,
                    };
                    let text = match &error {
                        ToolError::Cancelled => "interrupted: the user cancelled this call".to_string(),
                        ToolError::Refused(reason) => format!("error: {reason}"),
                        ToolError::InvalidArguments { .. }
                        | ToolError::Failed(_)
                        | ToolError::TimedOut(_) => error.to_string(),
                    };
                    (vec![Content::text(text)], true, status)
                }
            },
        };
        if ran && !self.hooks.is_empty(HookEvent::PostToolUse) {
            let done = ToolResult {
                call_id: call.id.clone(),
                content: content.clone(),
                is_error,
                status,
                receipt: None,
            };
            let verdict = self
                .hooks
                .post_tool_use(&call.name, &call.arguments, &done, receipt.exit_code, &self.ctx.cancel)
                .await;
            self.report(&verdict);
            content.extend(
                verdict
                    .block
                    .iter()
                    .chain(&verdict.context)
                    .map(|feedback| Content::text(format!("PostToolUse hook feedback: {feedback}"))),
            );
        }
        let elapsed_ms = started.elapsed().as_millis() as u64;
        receipt.elapsed_ms = elapsed_ms;
        let result =
            ToolResult { call_id: call.id.clone(), content, is_error, status, receipt: Some(receipt) };
        Executed { result, tool: call.name.clone(), elapsed_ms, view, ledger, ends_run }
    }

    /// The context for `call`: the session's, tagged with the call's id.
    fn call_context(&self, call: &ToolCall) -> ToolContext {
        let mut ctx = self.ctx.clone();
        ctx.call_id = call.id.clone();
        ctx
    }

    /// Shows a hook's messages to the user and remembers a `"continue": false`.
    fn report(&self, verdict: &HookVerdict) {
        for message in &verdict.messages {
            let _ = self.events.send(AgentEvent::Warning { message: message.clone() });
        }
        if let (Some(reason), Ok(mut stop)) = (&verdict.stop, self.stop.lock()) {
            stop.get_or_insert_with(|| reason.clone());
        }
    }

    /// Puts an ask to the user; "always" stores the decision's prefix rules in
    /// `.lathe/settings.local.json` and adds them to the session's rules.
    async fn ask_user(
        &self,
        approver: &dyn Approver,
        tool: &dyn DynTool,
        call: &ToolCall,
        decision: Decision,
    ) -> Decision {
        let _guard = self.prompt_lock.lock().await;
        if !self.hooks.is_empty(HookEvent::Notification) {
            let hooks = self.hooks.clone();
            let message = format!("Lathe needs your permission to use {}", call.name);
            tokio::spawn(async move { hooks.notification(&message).await });
        }
        let suggestion = (!decision.suggestions.is_empty()).then(|| decision.suggestions.join(", "));
        let preview = tool.preview(&call.arguments, self.ctx);
        // A cancelled turn ends the wait for an answer as a "no" (an approver that waits on
        // something else than the front end — a teammate's lead — is not told of the cancel).
        let answer = tokio::select! {
            answer = approver.ask(call, &decision.reason, suggestion.as_deref(), preview.as_ref()) => answer,
            () = self.ctx.cancel.cancelled() => PermissionAnswer::Deny { feedback: None },
        };
        let by = match answer {
            PermissionAnswer::AllowOnce => "approved by the user once".to_string(),
            PermissionAnswer::AllowAlways => self.remember(&decision.suggestions),
            PermissionAnswer::Deny { feedback } => {
                let reason = match feedback {
                    Some(feedback) => format!("the user denied this call and said: {feedback}"),
                    None => "the user denied this call".into(),
                };
                return Decision { verdict: Verdict::Deny, by: "the user".into(), reason, ..decision };
            }
        };
        Decision { verdict: Verdict::Allow, by, ..decision }
    }

    /// Puts a call to auto mode's reviewer: its allow or block, or (`Err`) the ask a person gets
    /// once auto mode fell back to asking. Headless, that ask is a denial and the run stops.
    async fn review(
        &self,
        reviewer: &crate::auto_mode::Reviewer,
        call: &ToolCall,
        decision: Decision,
    ) -> Result<Decision, Decision> {
        if let Some(why) = reviewer.fallen_back() {
            if self.approver.is_none() {
                if let Ok(mut slot) = self.auto_blocked.lock() {
                    slot.get_or_insert_with(|| why.clone());
                }
                return Ok(Decision {
                    verdict: Verdict::Deny,
                    by: "auto mode".into(),
                    reason: format!("{why}, and nobody can be asked (headless): the run stops"),
                    review: false,
                    ..decision
                });
            }
            let reason = format!("{} ({why})", decision.reason);
            return Err(Decision { reason, review: false, ..decision });
        }
        let review = reviewer.review(call, &self.ctx.workspace, &self.ctx.cancel).await;
        let by = review.by();
        Ok(if review.allow {
            Decision { verdict: Verdict::Allow, by, review: false, ..decision }
        } else {
            Decision {
                verdict: Verdict::Deny,
                by,
                reason: format!("blocked by auto mode: {}", review.reason),
                review: false,
                ..decision
            }
        })
    }

    /// Stores `rules` for "always"; says what happened (a warning event when it could not).
    fn remember(&self, rules: &[String]) -> String {
        if rules.is_empty() {
            let _ = self.events.send(AgentEvent::Warning {
                message: "no rule is safe to remember for this call; it was approved once".into(),
            });
            return "approved by the user once (nothing safe to remember)".into();
        }
        // A project's settings cannot allow writes to the user's memory, so such a rule is kept
        // in the user's own settings.
        let stored = if rules.iter().all(|rule| rule.starts_with("Memory(user/")) {
            lathe_policy::settings::remember_in(&crate::paths::lathe_home().join("settings.json"), rules)
        } else {
            lathe_policy::settings::remember(&self.ctx.workspace, rules)
        };
        match stored {
            Ok(path) => {
                for problem in self.policy.add_allow_rules(rules, &path.display().to_string()) {
                    let _ = self.events.send(AgentEvent::Warning { message: problem });
                }
                format!("approved by the user always: {} stored in {}", rules.join(", "), path.display())
            }
            Err(error) => {
                let _ = self
                    .events
                    .send(AgentEvent::Warning { message: format!("cannot remember the approval: {error}") });
                "approved by the user once (not remembered)".into()
            }
        }
    }
}

impl CallEnv for Executor<'_> {
    fn cut_short(&self) -> Option<StopReason> {
        self.cut_short
    }

    fn tools(&self) -> &ToolRegistry {
        self.tools
    }

    fn tool_ctx(&self) -> &ToolContext {
        self.ctx
    }

    fn hooks(&self) -> &Hooks {
        self.hooks
    }

    fn policy(&self) -> &Policy {
        self.policy
    }

    fn report(&self, verdict: &HookVerdict) {
        Executor::report(self, verdict);
    }

    fn warn(&self, message: String) {
        let _ = self.events.send(AgentEvent::Warning { message });
    }

    fn settle<'a>(
        &'a self,
        tool: &'a dyn DynTool,
        call: &'a ToolCall,
        decision: Decision,
    ) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let decision = match (decision.verdict, self.reviewer) {
                (Verdict::Ask, Some(reviewer)) if decision.review => {
                    match self.review(reviewer, call, decision).await {
                        Ok(decided) => return decided,
                        Err(fallen_back) => fallen_back,
                    }
                }
                _ => decision,
            };
            match (decision.verdict, self.approver) {
                (Verdict::Ask, Some(approver)) => self.ask_user(approver, tool, call, decision).await,
                (Verdict::Allow | Verdict::Ask | Verdict::Deny, _) => decision.headless(),
            }
        })
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
        view: None,
        ledger: Vec::new(),
        ends_run: false,
    }
}
