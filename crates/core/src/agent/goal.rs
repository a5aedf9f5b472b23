//! The goal loop ([`crate::goal`]): run a turn, run the check, ask the evaluator, decide, and
//! either end or send the agent on with what is still missing. Every step is in the ledger: the
//! goal ([`Meta::GoalStart`]), each check ([`Meta::GoalCheck`]), each verdict
//! ([`Meta::GoalVerdict`]), each budget raise ([`Meta::GoalBudget`]) and the end
//! ([`Meta::GoalEnd`]). The evaluator asks for its verdict as structured output (a JSON schema,
//! where the provider takes one; sent again without it when the server refuses the request) and
//! goes to the session's model unless `[goal] evaluator_model` names another.

use std::time::Instant;

use lathe_protocol::goal::{GoalOutcome, GoalSpec, GoalStart, GoalStatus, GoalVerdict, Verdict};
use std::sync::atomic::{AtomicU32, Ordering};

use lathe_protocol::{
    AgentEvent, Content, LedgerItem, Meta, ProviderError, StopCause, SystemBlock, UserMessage, UserOrigin,
};
use lathe_tools::DynTool;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Agent;
use crate::goal::guard::Snapshot;
use crate::goal::{self, CheckRun, Evidence, Progress};

/// A goal found active in the ledger (started, not ended): a session killed mid-goal resumes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResumedGoal {
    /// The goal as it was set.
    pub spec: GoalSpec,
    /// Iterations it had run (its verdicts in the ledger).
    pub iterations: u32,
    /// The protected files as they were when it started (path, SHA-256 hex).
    pub protected: Vec<(String, String)>,
}

/// What the session changes in a running goal: budget raises (`/goal budget +N`) arrive while
/// its turns run and are applied after the iteration in progress.
#[derive(Debug, Default)]
pub struct GoalControl {
    raised: AtomicU32,
}

impl GoalControl {
    /// Adds `by` iterations to the running goal's budget.
    pub fn raise(&self, by: u32) {
        self.raised.fetch_add(by, Ordering::Relaxed);
    }

    /// The iterations added since the last call.
    fn take_raised(&self) -> u32 {
        self.raised.swap(0, Ordering::Relaxed)
    }
}

/// The evaluator's system prompt.
const EVALUATOR_SYSTEM: &str = "You are Lathe's goal evaluator. You never use tools. You answer with one JSON \
     object: {\"met\": bool, \"reason\": str, \"impossible\": bool}.";
/// Output limit of an evaluator response, in tokens.
const EVALUATOR_MAX_TOKENS: u32 = 400;

impl Agent {
    /// The goal the ledger holds as active: its last start with no end after it (or with a budget
    /// raise after a `budget_limited` end, which makes it active again).
    pub fn active_goal(&self) -> Option<ResumedGoal> {
        let (goal, ended) = self.last_goal()?;
        ended.is_none().then_some(goal)
    }

    /// The ledger's last goal as it stands now (its budget raises applied), and the status it
    /// ended with (`None`: it is active).
    pub fn last_goal(&self) -> Option<(ResumedGoal, Option<GoalStatus>)> {
        let items = self.transcript.items();
        let at = items.iter().rposition(|item| matches!(item, LedgerItem::Meta(Meta::GoalStart(_))))?;
        let LedgerItem::Meta(Meta::GoalStart(start)) = &items[at] else { return None };
        let mut goal =
            ResumedGoal { spec: start.spec.clone(), iterations: 0, protected: start.protected.clone() };
        let mut ended = None;
        for item in &items[at + 1..] {
            match item {
                LedgerItem::Meta(Meta::GoalEnd { status, .. }) => ended = Some(parse_status(status)),
                LedgerItem::Meta(Meta::GoalVerdict(_)) => goal.iterations += 1,
                LedgerItem::Meta(Meta::GoalBudget { max_iterations }) => {
                    goal.spec.max_iterations = *max_iterations;
                    if ended == Some(GoalStatus::BudgetLimited) {
                        ended = None;
                    }
                }
                _ => {}
            }
        }
        Some((goal, ended))
    }

    /// Runs `input` and then works toward `spec` until it is met or ends otherwise; sends
    /// [`AgentEvent::Goal`] after each iteration and one [`AgentEvent::Finished`] at the end.
    /// The cause is the last turn's (`Completed` also when the goal ended unmet: the outcome says
    /// how it ended).
    pub async fn run_goal(
        &mut self,
        input: UserMessage,
        spec: &GoalSpec,
        resumed: Option<&ResumedGoal>,
        control: &GoalControl,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> (StopCause, GoalOutcome) {
        let started = Instant::now();
        let mut spec = spec.clone();
        let spec = &mut spec;
        let before = self.totals.stats();
        // The goal's own items start here: its report covers them alone.
        let from = self.transcript.items().len();
        let workspace = self.ctx.workspace.clone();
        let start = Snapshot::take(&workspace, spec.check.as_deref());
        let started_ms = crate::clock::now_ms();
        if resumed.is_none() {
            self.append(LedgerItem::Meta(Meta::GoalStart(GoalStart {
                spec: spec.clone(),
                protected: start.protected_hashes(),
                started_ms,
            })));
        }
        let mut outcome = GoalOutcome {
            condition: spec.condition.clone(),
            status: GoalStatus::Active,
            iterations: 0,
            max_iterations: spec.max_iterations,
            last_reason: String::new(),
            check_exit: None,
            judged_from_transcript: spec.check.is_none(),
            protected_changes: Vec::new(),
        };
        let mut progress =
            Progress { iterations: resumed.map_or(0, |goal| goal.iterations), ..Progress::default() };
        outcome.iterations = progress.iterations;
        let mut previous = start.clone();
        let mut input = input;
        let (cause, final_text) = loop {
            let (cause, final_text) = self.run_unfinished(input, events, cancel).await;
            progress.iterations += 1;
            outcome.iterations = progress.iterations;
            let raised = control.take_raised();
            if raised > 0 {
                spec.max_iterations = spec.max_iterations.saturating_add(raised);
                outcome.max_iterations = spec.max_iterations;
                self.append(LedgerItem::Meta(Meta::GoalBudget { max_iterations: spec.max_iterations }));
            }
            if !cause.is_success() {
                outcome.status = match cause {
                    StopCause::Cancelled => GoalStatus::Paused,
                    StopCause::Budget { .. } | StopCause::MaxTurns { .. } => GoalStatus::BudgetLimited,
                    _ => GoalStatus::Active,
                };
                outcome.last_reason = format!("the turn ended: {}", describe(&cause));
                break (cause, final_text);
            }
            let check = match &spec.check {
                Some(command) => {
                    Some(self.run_check(command, spec.check_timeout_ms, progress.iterations, cancel).await)
                }
                None => None,
            };
            outcome.check_exit = check.as_ref().and_then(|check| check.exit_code);
            let now = Snapshot::take(&workspace, spec.check.as_deref());
            let changed = start.changed_files(&now);
            progress.changed.push(!previous.changed_files(&now).is_empty());
            previous = now.clone();
            let (verdict, raw) =
                self.evaluate(spec, check.as_ref(), &changed, &final_text, events, cancel).await;
            let mut protected = start.protected_changes(&workspace, &now);
            if let Some(resumed) = resumed {
                protected.extend(changed_before_resume(&resumed.protected, &now, &protected));
            }
            let (status, reason) =
                goal::decide(spec, check.as_ref(), verdict.as_ref(), !protected.is_empty(), &progress);
            progress.reasons.push(reason.clone());
            let wall_over =
                spec.max_wall_ms.is_some_and(|limit| started.elapsed().as_millis() as u64 >= limit);
            let (status, reason) = if status == GoalStatus::Active && wall_over {
                (GoalStatus::BudgetLimited, format!("the goal's time limit was reached: {reason}"))
            } else {
                (status, reason)
            };
            outcome.status = status;
            outcome.last_reason = reason.clone();
            outcome.protected_changes =
                if status == GoalStatus::NeedsReview { protected } else { Vec::new() };
            self.append(LedgerItem::Meta(Meta::GoalVerdict(GoalVerdict {
                iteration: progress.iterations,
                verdict,
                raw,
                status,
                reason: reason.clone(),
            })));
            if status.is_final() {
                break (cause, final_text);
            }
            let _ = events.send(AgentEvent::Goal { outcome: outcome.clone() });
            input = UserMessage::injected(goal::continuation(spec, check.as_ref(), &reason, &progress));
        };
        self.append(LedgerItem::Meta(Meta::GoalEnd {
            status: outcome.status.as_str().to_string(),
            reason: outcome.last_reason.clone(),
        }));
        self.sync();
        let _ = events.send(AgentEvent::Goal { outcome: outcome.clone() });
        let stats = self.totals.since(&before);
        let report = Some(lathe_protocol::RunReport::from_ledger(self.transcript.items(), from));
        let _ = events.send(AgentEvent::Finished { cause: cause.clone(), stats, final_text, report });
        (cause, outcome)
    }

    /// Runs the goal's check in the workspace and the session's sandbox, with its time limit and
    /// no permission check (the user wrote it); records [`Meta::GoalCheck`].
    async fn run_check(
        &mut self,
        command: &str,
        timeout_ms: u64,
        iteration: u32,
        cancel: &CancellationToken,
    ) -> CheckRun {
        let shell = lathe_tools::builtin::Shell::in_sandbox(self.ctx.sandbox.as_deref());
        let mut ctx = self.ctx.clone();
        ctx.cancel = cancel.child_token();
        let started = Instant::now();
        let args = serde_json::json!({ "command": command, "timeout_ms": timeout_ms });
        let (exit_code, output) = match shell.call(args, &ctx).await {
            Ok(output) => (output.exit_code, output.text_content()),
            Err(error) => (None, format!("the check could not run: {error}")),
        };
        let elapsed_ms = started.elapsed().as_millis() as u64;
        let timed_out = exit_code == Some(lathe_tools::builtin::shell::TIMEOUT_EXIT_CODE)
            && elapsed_ms + 50 >= timeout_ms;
        let run = CheckRun {
            command: command.to_string(),
            exit_code,
            timed_out,
            output_tail: goal::tail(&output, goal::CHECK_TAIL_CHARS),
            elapsed_ms,
        };
        self.append(LedgerItem::Meta(Meta::GoalCheck {
            iteration,
            command: run.command.clone(),
            exit_code: run.exit_code,
            timed_out: run.timed_out,
            output_tail: run.output_tail.clone(),
            elapsed_ms,
        }));
        run
    }

    /// The evaluator request (no tools; its usage counts in the session's cost): the verdict, when
    /// the answer held one, and the raw answer or the error.
    async fn evaluate(
        &mut self,
        spec: &GoalSpec,
        check: Option<&CheckRun>,
        changed: &[String],
        claim: &str,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> (Option<Verdict>, String) {
        let user_messages: Vec<String> = self
            .transcript
            .items()
            .iter()
            .filter_map(|item| match item {
                LedgerItem::User(message) if message.origin == UserOrigin::User => {
                    Some(message.text_content())
                }
                _ => None,
            })
            .collect();
        let text =
            goal::evaluation_text(spec, &Evidence { check, changed, user_messages: &user_messages, claim });
        let system = vec![SystemBlock { text: EVALUATOR_SYSTEM.to_string(), cache_breakpoint: false }];
        let message = LedgerItem::User(UserMessage {
            content: vec![Content::text(text)],
            origin: UserOrigin::Injected,
        });
        let mut request =
            self.requester.turn_request(&system, vec![message], Vec::new(), EVALUATOR_MAX_TOKENS);
        if let Some(model) = &self.evaluator_model {
            request.model = model.clone();
        }
        request.response_format = Some(Verdict::schema());
        let mut streamed = self.requester.stream(&request, None, cancel).await;
        if matches!(streamed.acc.error(), Some(ProviderError::BadRequest { .. })) {
            // An OpenAI-compatible server that does not take a JSON schema: the prompt asks for
            // the same JSON.
            tracing::debug!("the evaluator request was refused with its response format; sent again without");
            self.record_side_usage(&streamed.acc.usage(), events);
            request.response_format = None;
            streamed = self.requester.stream(&request, None, cancel).await;
        }
        let usage = streamed.acc.usage();
        self.record_side_usage(&usage, events);
        if let Some(error) = streamed.acc.error() {
            return (None, format!("the evaluator request failed: {error}"));
        }
        if !streamed.terminal {
            return (None, "the evaluator's answer was cut off".to_string());
        }
        let answer = streamed.acc.finish(&request.model).text();
        (Verdict::parse(&answer), goal::tail(&answer, 2_000))
    }
}

/// The protected files recorded when a resumed goal started that differ now, beyond those
/// `known` already reports (their earlier bytes were not kept across the restart).
fn changed_before_resume(
    recorded: &[(String, String)],
    now: &Snapshot,
    known: &[lathe_protocol::goal::ProtectedChange],
) -> Vec<lathe_protocol::goal::ProtectedChange> {
    recorded
        .iter()
        .filter(|(path, _)| !known.iter().any(|change| change.path == *path))
        .filter_map(|(path, hash)| {
            let diff = match now.protected.get(path) {
                Some((current, _)) if current == hash => return None,
                Some(_) => {
                    "changed since the goal started (its earlier content was not kept across the restart)"
                }
                None => "deleted",
            };
            Some(lathe_protocol::goal::ProtectedChange { path: path.clone(), diff: diff.to_string() })
        })
        .collect()
}

/// The status a `goal_end` item names ([`GoalStatus::as_str`]); an unknown name is `paused`
/// (over, and not made active again by a budget raise).
fn parse_status(name: &str) -> GoalStatus {
    serde_json::from_value(serde_json::Value::String(name.to_string())).unwrap_or(GoalStatus::Paused)
}

fn describe(cause: &StopCause) -> String {
    match cause {
        StopCause::Error { message, .. } => message.clone(),
        other => other.subtype().to_string(),
    }
}
