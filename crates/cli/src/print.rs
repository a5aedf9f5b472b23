//! Headless print mode: consumes the agent's event stream and writes it as text, one JSON result, or
//! newline-delimited JSON events (`stream-json`).
//!
//! stream-json lines, one object each, in order:
//! `{"type":"init","session_id","model","provider","tools":[…],"cwd","sandbox"}` ·
//! `{"type":"text","text"}` (one per assistant message with text) ·
//! `{"type":"tool_call","id","name","arguments"}` ·
//! `{"type":"tool_result","id","name","status","is_error","elapsed_ms","exit_code","output"}` ·
//! `{"type":"retry","attempt","max_retries","delay_ms","message"}` ·
//! `{"type":"usage","input_tokens","output_tokens","cache_read_tokens","cache_write_tokens","total_cost_usd"}`
//! (token counts of the last response, `null` when the provider did not report one; `context`:
//! `{"used_tokens","window_tokens","percent","largest":[{"label","tokens"}]}`) ·
//! `{"type":"context_pruned","results","tokens_before","tokens_after"}` ·
//! `{"type":"compacted","trigger":"auto"|"overflow"|"manual","tokens_before","tokens_after",
//! "summarized_items","kept_items","omitted_rounds"}` ·
//! `{"type":"warning","message"}` · a sub-agent's own `tool_call`, `tool_result`, `usage`, `warning`
//! lines and its end `{"type":"subagent_result","subtype","turns","tool_calls","cost_usd"}`, each with
//! `"parent_tool_use_id"` (the parent's `task` call), `"subagent_id"` and `"subagent_type"` ·
//! `{"type":"background_agent","subagent_id","subagent_type","description","status"}` when a
//! background sub-agent starts (`running`) or ends (`completed`, `failed`, `killed`) · and last
//! `{"type":"result","subtype":"success"|"error_…","is_error","result","session_id","turns","tool_calls",
//! "usage":{…},"cost_usd","duration_ms","permission_denials":[{"tool_name","tool_use_id","tool_input"}],
//! "report":{"files":[{"path","added","removed"}],"commands":[{"command","exit_code","test"}],
//! "checks":[{"command","exit_code"}],"claims":[{"sentence","reason"}]},"error"?,"goal"?}`
//! (`permission_denials` lists the calls the permission policy refused, as Claude Code does; `report`
//! is the run report, [`lathe_protocol::RunReport`], empty when nothing ran; `goal`, after a run with
//! `--goal`: `{"condition","status","iterations","max_iterations","last_reason","check_exit",
//! "judged_from_transcript","protected_changes"?}`; `plan`, when the model presented one with
//! `exit_plan_mode` (plan mode, `--plan`): its markdown — a goal that ended unmet makes the result an
//! error, subtype `error_goal_<status>`, and stream-json has a `{"type":"goal",…}` line after each
//! iteration) — also when the run fails before it starts (see `failure.rs`; `session_id` is then
//! `null`). The `json` format writes only the `result` line. A `retry` line's `discards_partial` says
//! that the attempt that broke had already streamed content; nothing of that attempt appears in any
//! line.
//!
//! Text mode writes the final answer (or the plan the model presented) to stdout and, on stderr after it, the run report's lines
//! (`lathe: report: 2 files changed (+12 −3): …`, one per claim without evidence; none when the
//! run changed nothing, ran nothing and claims nothing), the denied calls, the goal's end and why a
//! failed run stopped.

use std::io::{IsTerminal, Write};

use lathe_protocol::goal::{GoalOutcome, GoalStatus};
use lathe_protocol::{AgentEvent, RunReport, RunStats, StopCause, ToolResult, ToolStatus};
use serde_json::{Value, json};

use crate::args::OutputFormat;
use crate::status::StatusLine;

/// Writes events for one format.
pub struct Printer {
    format: OutputFormat,
    session_id: String,
    /// The arguments of each tool call seen, by id, until its result arrives.
    calls: std::collections::HashMap<String, (String, Value)>,
    /// Calls the permission policy refused: `{tool_name, tool_use_id, tool_input}`.
    denials: Vec<Value>,
    /// The same calls as text-mode lines: `denied: shell `rm -rf x` — reason`.
    denial_lines: Vec<String>,
    /// The live status line of text mode on a terminal.
    status: StatusLine,
    /// The plan the model presented with `exit_plan_mode` (the last one).
    plan: Option<String>,
}

impl Printer {
    /// A printer for `format`.
    pub fn new(format: OutputFormat, session_id: String) -> Printer {
        Printer {
            format,
            session_id,
            calls: Default::default(),
            denials: Vec::new(),
            denial_lines: Vec::new(),
            status: StatusLine::new(format == OutputFormat::Text && std::io::stderr().is_terminal()),
            plan: None,
        }
    }

    /// Whether a live status line is drawn (text mode, stderr a terminal): the caller then calls
    /// [`Printer::tick`] a few times a second.
    pub fn has_status_line(&self) -> bool {
        self.status.enabled()
    }

    /// Redraws the status line (elapsed time, spinner).
    pub fn tick(&mut self) {
        self.status.draw();
    }

    /// The `init` line (stream-json only).
    pub fn init(&self, model: &str, provider: &str, tools: &[String], cwd: &str, sandbox: &str) {
        if self.format == OutputFormat::StreamJson {
            line(
                &json!({"type": "init", "session_id": self.session_id, "model": model, "provider": provider,
                         "tools": tools, "cwd": cwd, "sandbox": sandbox}),
            );
        }
    }

    /// A warning: stderr in text mode, a `warning` line in stream-json.
    pub fn warning(&mut self, message: &str) {
        match self.format {
            OutputFormat::StreamJson => line(&json!({"type": "warning", "message": message})),
            OutputFormat::Text | OutputFormat::Json => {
                self.status.clear();
                eprintln!("lathe: warning: {message}");
                self.status.draw();
            }
        }
    }

    /// Prints one event as it happens (and remembers denied calls for the result).
    pub fn event(&mut self, event: &AgentEvent) {
        match self.format {
            OutputFormat::StreamJson => self.stream_json(event),
            OutputFormat::Text => {
                self.status.clear();
                if let AgentEvent::ToolResult { result, elapsed_ms, .. } = event {
                    self.text_tool_result(result, *elapsed_ms);
                } else {
                    text_progress(event);
                }
                self.status.observe(event);
                self.status.draw();
            }
            OutputFormat::Json => {}
        }
        if let AgentEvent::PlanReady(ready) = event {
            self.plan = Some(ready.plan.clone());
        }
        self.track_denials(event);
    }

    /// A call and its result, printed together when the result arrives (the status line shows
    /// the call while it runs): `● shell cargo test` / `  ✓ completed in 812 ms: first line`. An
    /// error keeps more of its first line (a denial's hint says what would allow the call).
    fn text_tool_result(&self, result: &ToolResult, elapsed_ms: u64) {
        let (name, arguments) = self.calls.get(&result.call_id).cloned().unwrap_or_default();
        let summary = result.receipt.as_ref().map(|receipt| receipt.summary.clone()).unwrap_or_default();
        let shown = if summary.is_empty() { arguments.to_string() } else { summary };
        eprintln!("● {name} {}", cut(&shown, 120));
        let text = result.text_content();
        let first = cut(text.lines().next().unwrap_or(""), if result.is_error { 400 } else { 100 });
        let mark = if result.is_error { "✗" } else { "✓" };
        eprintln!("  {mark} {} in {elapsed_ms} ms: {first}", status_name(result.status));
    }

    fn track_denials(&mut self, event: &AgentEvent) {
        if let AgentEvent::AssistantMessage { message } = event {
            for call in message.tool_calls() {
                self.calls.insert(call.id.clone(), (call.name.clone(), call.arguments.clone()));
            }
        } else if let AgentEvent::ToolResult { result, .. } = event {
            let call = self.calls.remove(&result.call_id);
            if result.status == ToolStatus::Denied {
                let (name, input) = call.unwrap_or_default();
                self.denial_lines.push(denial_line(&name, &input, result));
                self.denials
                    .push(json!({"tool_name": name, "tool_use_id": result.call_id, "tool_input": input}));
            }
        }
    }

    fn stream_json(&self, event: &AgentEvent) {
        for value in Printer::stream_lines(event) {
            line(&value);
        }
    }

    /// The stream-json lines for one event (none for streamed pieces, session and control
    /// events, a call's start or permission request: the `tool_call` line comes from the assistant
    /// message, and the end from [`Printer::finish`]); a sub-agent's events carry
    /// `parent_tool_use_id` (the parent's `task` call), `subagent_id` and `subagent_type`.
    fn stream_lines(event: &AgentEvent) -> Vec<Value> {
        if let AgentEvent::Subagent { parent_call_id, agent_id, subagent_type, event } = event {
            let inner = match event.as_ref() {
                AgentEvent::Finished { cause, stats, .. } => vec![json!({
                    "type": "subagent_result", "subtype": cause.subtype(), "turns": stats.turns,
                    "tool_calls": stats.tool_calls, "cost_usd": stats.cost_usd,
                })],
                other => Printer::stream_lines(other),
            };
            return inner
                .into_iter()
                .map(|mut value| {
                    if let Value::Object(map) = &mut value {
                        map.insert("parent_tool_use_id".into(), json!(parent_call_id));
                        map.insert("subagent_id".into(), json!(agent_id));
                        map.insert("subagent_type".into(), json!(subagent_type));
                    }
                    value
                })
                .collect();
        }
        if let AgentEvent::BackgroundAgent { agent_id, subagent_type, description, status } = event {
            return vec![json!({
                "type": "background_agent", "subagent_id": agent_id, "subagent_type": subagent_type,
                "description": description, "status": status,
            })];
        }
        if let AgentEvent::AssistantMessage { message } = event {
            let text = message.text();
            let text_line = (!text.is_empty()).then(|| json!({"type": "text", "text": text}));
            let calls = message.tool_calls().map(
                |call| json!({"type": "tool_call", "id": call.id, "name": call.name, "arguments": call.arguments}),
            );
            return text_line.into_iter().chain(calls).collect();
        }
        Printer::stream_line(event).into_iter().collect()
    }

    /// The one stream-json line of an event that has one line of its own.
    fn stream_line(event: &AgentEvent) -> Option<Value> {
        if let AgentEvent::ToolResult { result, tool, elapsed_ms, .. } = event {
            let receipt = result.receipt.as_ref();
            Some(json!({
                "type": "tool_result", "id": result.call_id, "name": tool, "status": status_name(result.status),
                "is_error": result.is_error, "elapsed_ms": elapsed_ms,
                "exit_code": receipt.and_then(|r| r.exit_code),
                "decision": receipt.map(|r| r.decision.clone()),
                "spill_path": receipt.and_then(|r| r.spill_path.clone()),
                "output": result.text_content(),
            }))
        } else if let AgentEvent::Retry(info) = event {
            Some(json!({
                "type": "retry", "attempt": info.attempt, "max_retries": info.max_retries,
                "delay_ms": info.delay_ms, "reason": info.error.kind(), "message": info.describe(),
                "discards_partial": info.discards_partial,
            }))
        } else if let AgentEvent::Usage { last, stats, context } = event {
            Some(json!({
                "type": "usage", "input_tokens": last.input_tokens, "output_tokens": last.output_tokens,
                "cache_read_tokens": last.cache_read_input_tokens, "cache_write_tokens": last.cache_creation_input_tokens,
                "total_cost_usd": stats.cost_usd, "context": context,
            }))
        } else if let AgentEvent::ContextPruned { results, tokens_before, tokens_after } = event {
            Some(json!({
                "type": "context_pruned", "results": results, "tokens_before": tokens_before,
                "tokens_after": tokens_after,
            }))
        } else if let AgentEvent::Compacted {
            trigger,
            tokens_before,
            tokens_after,
            summarized_items,
            kept_items,
            omitted_rounds,
        } = event
        {
            Some(json!({
                "type": "compacted", "trigger": trigger, "tokens_before": tokens_before, "tokens_after": tokens_after,
                "summarized_items": summarized_items, "kept_items": kept_items, "omitted_rounds": omitted_rounds,
            }))
        } else if let AgentEvent::Todos { items } = event {
            Some(json!({"type": "todos", "items": items}))
        } else if let AgentEvent::Warning { message } = event {
            Some(json!({"type": "warning", "message": message}))
        } else {
            None
        }
    }

    /// A goal's state after an iteration: a `goal` line in stream-json, a line on stderr in text
    /// mode while it is active (its end is part of [`Printer::finish`]).
    pub fn goal(&mut self, outcome: &GoalOutcome) {
        match self.format {
            OutputFormat::StreamJson => {
                let mut value = json!(outcome);
                if let Value::Object(map) = &mut value {
                    map.insert("type".into(), json!("goal"));
                }
                line(&value);
            }
            OutputFormat::Text if !outcome.status.is_final() => {
                self.status.clear();
                eprintln!(
                    "lathe: goal: iteration {} of {}: not met yet — {}",
                    outcome.iterations,
                    outcome.max_iterations,
                    cut(&outcome.last_reason, 300)
                );
                self.status.draw();
            }
            OutputFormat::Text | OutputFormat::Json => {}
        }
    }

    /// Prints the end of the run: the final text, the report's lines and the goal's end (text
    /// mode), the `result` object (json, stream-json).
    pub fn finish(
        &mut self,
        cause: &StopCause,
        stats: &RunStats,
        final_text: &str,
        report: &RunReport,
        goal: Option<&GoalOutcome>,
    ) {
        match self.format {
            OutputFormat::Text => {
                self.status.clear();
                let answer = self.plan.as_deref().unwrap_or(final_text);
                if !answer.is_empty() {
                    // A reader that has gone (`lathe -p … | head -1`) is not the run's failure.
                    let _ = writeln!(std::io::stdout(), "{}", answer.trim_end());
                }
                for line in crate::report::lines(report) {
                    eprintln!("lathe: report: {line}");
                }
                for denial in &self.denial_lines {
                    eprintln!("{denial}");
                }
                if let Some(goal) = goal {
                    eprintln!("lathe: {}", goal_line(goal));
                    for change in &goal.protected_changes {
                        eprintln!(
                            "lathe: protected file changed: {}\n{}",
                            change.path,
                            change.diff.trim_end()
                        );
                    }
                }
                if !cause.is_success() {
                    eprintln!("lathe: {}", describe(cause));
                }
            }
            OutputFormat::Json | OutputFormat::StreamJson => {
                line(&self.result(cause, stats, final_text, report, goal));
            }
        }
    }

    fn result(
        &self,
        cause: &StopCause,
        stats: &RunStats,
        final_text: &str,
        report: &RunReport,
        goal: Option<&GoalOutcome>,
    ) -> Value {
        let unmet = goal.filter(|goal| cause.is_success() && goal.status != GoalStatus::Met);
        let subtype = match cause {
            StopCause::Error { kind, .. } => crate::failure::subtype(kind),
            _ if unmet.is_some() => unmet.map_or("", |goal| goal_subtype(goal.status)),
            other => other.subtype(),
        };
        let session_id = if self.session_id.is_empty() { Value::Null } else { json!(self.session_id) };
        let mut result = json!({
            "type": "result",
            "subtype": subtype,
            "is_error": !cause.is_success(),
            "result": final_text,
            "session_id": session_id,
            "turns": stats.turns,
            "tool_calls": stats.tool_calls,
            "usage": {
                "input_tokens": stats.input_tokens, "output_tokens": stats.output_tokens,
                "cache_read_tokens": stats.cache_read_tokens, "cache_write_tokens": stats.cache_write_tokens,
            },
            "cost_usd": stats.cost_usd,
            "duration_ms": stats.duration_ms,
            "permission_denials": self.denials,
            "report": report,
        });
        if let (Some(plan), Value::Object(map)) = (&self.plan, &mut result) {
            map.insert("plan".into(), json!(plan));
        }
        if let (Some(goal), Value::Object(map)) = (goal, &mut result) {
            map.insert("goal".into(), json!(goal));
            if let Some(unmet) = unmet {
                map.insert("is_error".into(), json!(true));
                map.insert(
                    "error".into(),
                    json!({"kind": goal_subtype(unmet.status), "message": goal_line(unmet)}),
                );
            }
        }
        if !cause.is_success()
            && let Value::Object(map) = &mut result
        {
            let error = match cause {
                StopCause::Error { kind, message } => json!({"kind": kind, "message": message}),
                other => json!({"kind": other.subtype(), "message": describe(other)}),
            };
            map.insert("error".into(), error);
        }
        result
    }
}

/// The result subtype of a goal that ended unmet: `error_goal_<status>`.
fn goal_subtype(status: GoalStatus) -> &'static str {
    match status {
        GoalStatus::Met => "success",
        GoalStatus::Active => "error_goal_active",
        GoalStatus::Paused => "error_goal_paused",
        GoalStatus::Impossible => "error_goal_impossible",
        GoalStatus::Stalled => "error_goal_stalled",
        GoalStatus::BudgetLimited => "error_goal_budget_limited",
        GoalStatus::NeedsReview => "error_goal_needs_review",
        GoalStatus::Cleared => "error_goal_cleared",
    }
}

/// `goal met after 2 iterations (check exit 0): reason`, and "judged from the transcript" when
/// the goal had no check.
fn goal_line(goal: &GoalOutcome) -> String {
    let check = match (goal.judged_from_transcript, goal.check_exit) {
        (true, _) => "judged from the transcript".to_string(),
        (false, Some(code)) => format!("check exit {code}"),
        (false, None) => "the check did not exit".to_string(),
    };
    let status = goal.status.as_str().replace('_', " ");
    let plural = if goal.iterations == 1 { "" } else { "s" };
    format!(
        "goal {status} after {} iteration{plural} ({check}): {}",
        goal.iterations,
        cut(&goal.last_reason, 300)
    )
}

/// A one-line description of why a run did not succeed.
pub fn describe(cause: &StopCause) -> String {
    match cause {
        StopCause::Completed => "done".into(),
        StopCause::MaxTurns { max_turns } => format!("stopped: reached --max-turns {max_turns}"),
        StopCause::Budget { detail } => format!("stopped: {detail}"),
        StopCause::NoProgress { detail } => format!("stopped, no progress: {detail}"),
        StopCause::Cancelled => "cancelled".into(),
        StopCause::Refused => "the model refused the request".into(),
        StopCause::ContextExhausted { detail } => format!("stopped: {detail}"),
        StopCause::Hook { reason } => format!("stopped by a hook: {reason}"),
        StopCause::AutoBlocked { detail } => format!("stopped: {detail}"),
        StopCause::Error { message, .. } => format!("error: {message}"),
    }
}

/// One line about a denied call for text mode: `denied: shell `rm -rf x` — why`, the call shown by
/// its receipt's summary (else its arguments), the reason from its result, each cut to one line.
fn denial_line(name: &str, input: &Value, result: &ToolResult) -> String {
    let summary = result.receipt.as_ref().map(|receipt| receipt.summary.clone()).unwrap_or_default();
    let shown = if summary.is_empty() { input.to_string() } else { summary };
    let text = result.text_content();
    let reason = text.lines().next().unwrap_or("").trim_start_matches("error: ");
    let reason = reason.strip_suffix(" The call was not run.").unwrap_or(reason);
    format!("denied: {name} `{}` — {}", cut(&shown, 120), cut(reason, 300))
}

/// `text` on one line, cut to `max` characters with an ellipsis.
pub(crate) fn cut(text: &str, max: usize) -> String {
    let line = text.replace('\n', " ");
    if line.chars().count() <= max {
        return line;
    }
    let mut short: String = line.chars().take(max).collect();
    short.push('…');
    short
}

fn status_name(status: ToolStatus) -> &'static str {
    match status {
        ToolStatus::Completed => "completed",
        ToolStatus::Denied => "denied",
        ToolStatus::Failed => "failed",
        ToolStatus::Interrupted => "interrupted",
    }
}

/// Text mode's line for an event printed as it happens (calls are printed with their result, see
/// [`Printer::text_tool_result`]; a sub-agent's calls and warnings are shown as they start).
fn text_progress(event: &AgentEvent) {
    if let AgentEvent::Retry(info) = event {
        eprintln!("lathe: {}", info.describe());
    } else if let AgentEvent::Warning { message } = event {
        eprintln!("lathe: warning: {message}");
    } else if let AgentEvent::BackgroundAgent { agent_id, subagent_type, description, status } = event {
        eprintln!("lathe: background sub-agent {agent_id} ({subagent_type}: {description}) {status}");
    } else if let AgentEvent::ContextPruned { results, tokens_before, tokens_after } = event {
        eprintln!(
            "lathe: context: {results} old tool outputs replaced by stubs ({tokens_before} → {tokens_after} tokens)"
        );
    } else if let AgentEvent::Compacted { tokens_before, tokens_after, .. } = event {
        eprintln!("lathe: context: conversation compacted ({tokens_before} → {tokens_after} tokens)");
    } else if let AgentEvent::Subagent { subagent_type, event, .. } = event {
        if let AgentEvent::ToolCallStarted { call, summary } = event.as_ref() {
            eprintln!("  ↳ [{subagent_type}] ● {} {}", call.name, cut(summary, 100));
        } else if let AgentEvent::Warning { message } = event.as_ref() {
            eprintln!("lathe: warning: [{subagent_type}] {message}");
        }
    }
}

fn line(value: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, value);
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}
