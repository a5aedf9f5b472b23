//! Hooks, compatible with Claude Code's: user-configured shell commands run at fixed points of a
//! session, which can add context, block a tool call or a prompt, or keep the model going
//! (FEATURES.md §H).
//!
//! Flow for one event: the hooks whose matcher matches (tool events match Claude's and Lathe's tool
//! name, e.g. `Bash` and `shell`; SessionStart matches its source, PreCompact its trigger) → the
//! event as JSON on stdin of each (`session_id`, `transcript_path`, `cwd`, `hook_event_name`,
//! `permission_mode` and the event's own fields), all run in parallel ([`runner`]) → each one's
//! result read the Claude way → one [`HookVerdict`]:
//! - exit 0: stdout is context for UserPromptSubmit and SessionStart; JSON stdout is read for
//!   `continue`/`stopReason`, `decision`/`reason`, `systemMessage` and `hookSpecificOutput`
//!   (`permissionDecision` allow/deny/ask, `additionalContext`);
//! - exit 2: a block, with stderr as the reason (PreToolUse: the call does not run and the model
//!   reads why; PostToolUse: the model reads it; UserPromptSubmit: the prompt is refused; Stop: the
//!   model continues with it); for other events stderr is shown to the user;
//! - any other end (exit code, timeout, cannot start, invalid JSON): a message for the user, and the
//!   session goes on.
//!
//! What the verdict means for the loop is decided where the event happens (`exec` for tool events,
//! `agent` for prompts and stops). With no hooks configured for an event nothing is spawned or
//! serialised.

mod event;
pub mod payload;
pub mod runner;
pub mod settings;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use lathe_policy::{PermissionMode, Policy};
use lathe_protocol::ToolResult;
use lathe_protocol::tool_names::every_name;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

pub use self::event::HookEvent;
use self::runner::{Ended, Ran};
pub use self::settings::{HookTable, settings_files};

/// Facts about the session that every hook input carries.
#[derive(Debug, Clone, Default)]
pub struct HookSession {
    /// Session id.
    pub session_id: String,
    /// The session's JSONL ledger.
    pub transcript_path: PathBuf,
    /// Working directory (the project); hooks run here with `CLAUDE_PROJECT_DIR` set to it.
    pub cwd: PathBuf,
    /// The permission mode at the start; hook inputs carry it in Claude's spelling (`acceptEdits`,
    /// `bypassPermissions`, …) unless `policy` gives the live one.
    pub permission_mode: PermissionMode,
    /// The session's policy: hook inputs carry its mode at the time of the event, so a change by
    /// `/mode` or Shift+Tab shows in the next hook's input.
    pub policy: Option<Arc<Policy>>,
}

impl HookSession {
    /// The permission mode in force now.
    pub fn mode(&self) -> PermissionMode {
        self.policy.as_ref().map_or(self.permission_mode, |policy| policy.mode())
    }
}

/// A hook's say on a tool call's permission (deny is a block).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PermissionVerdict {
    /// Run without asking (a rule or mode that denies still denies).
    Allow(String),
    /// An allow from a project's hook: like [`PermissionVerdict::Allow`], except that it never
    /// stands in for auto mode's reviewer (a repository cannot loosen auto mode).
    ProjectAllow(String),
    /// Ask the user even if the mode would allow it.
    Ask(String),
}

/// What the hooks of one event decided, combined.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookVerdict {
    /// Set when a hook blocked (exit 2, `decision: "block"`, `permissionDecision: "deny"`): the
    /// reasons, one per line.
    pub block: Option<String>,
    /// An allow or ask from `permissionDecision` (PreToolUse).
    pub permission: Option<PermissionVerdict>,
    /// Context for the model: stdout of UserPromptSubmit / SessionStart hooks, `additionalContext`.
    pub context: Vec<String>,
    /// Set when a hook said `"continue": false`: the `stopReason` for the user.
    pub stop: Option<String>,
    /// For the user only: failed or timed-out hooks, invalid output, `systemMessage`s, stderr of
    /// exit 2 where it cannot block.
    pub messages: Vec<String>,
}

impl HookVerdict {
    fn add_block(&mut self, reason: String) {
        self.block = Some(match self.block.take() {
            Some(previous) => format!("{previous}\n{reason}"),
            None => reason,
        });
    }
}

/// The configured hooks of a session; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    inner: Arc<(HookTable, HookSession)>,
    /// The hook commands already warned about output fields Lathe does not understand.
    warned: Arc<Mutex<HashSet<String>>>,
}

impl Hooks {
    /// Hooks from `table` for `session`.
    pub fn new(table: HookTable, session: HookSession) -> Hooks {
        Hooks { inner: Arc::new((table, session)), warned: Arc::default() }
    }

    /// Reads the `"hooks"` of `files` (see [`settings_files`]); the warnings name each bad file or
    /// entry.
    pub fn load(files: &[PathBuf], session: HookSession) -> (Hooks, Vec<String>) {
        let (table, warnings) = HookTable::load(files);
        (Hooks::new(table, session), warnings)
    }

    /// The hooks of a session in `project`, from the settings files already read (`settings`, see
    /// `crate::config::SettingsSources`); their inputs carry `policy`'s permission mode at the time
    /// of each event.
    pub fn for_session(
        settings: &[lathe_policy::settings::ReadSettings],
        project: &std::path::Path,
        session_id: &str,
        transcript_path: PathBuf,
        policy: Arc<Policy>,
    ) -> (Hooks, Vec<String>) {
        let session = HookSession {
            session_id: session_id.to_string(),
            transcript_path,
            cwd: project.to_path_buf(),
            permission_mode: policy.mode(),
            policy: Some(policy),
        };
        let (table, warnings) = HookTable::from_read(settings);
        (Hooks::new(table, session), warnings)
    }

    /// Whether no hook is configured for `event`.
    pub fn is_empty(&self, event: HookEvent) -> bool {
        self.inner.0.is_empty(event)
    }

    /// The session facts hooks receive.
    pub fn session(&self) -> &HookSession {
        &self.inner.1
    }

    /// Runs the hooks of `event` that match one of `names` (all of them when `None`) with `fields`
    /// added to the common input, and combines their results.
    pub async fn run(
        &self,
        event: HookEvent,
        names: Option<&[&str]>,
        fields: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> HookVerdict {
        let commands = self.inner.0.matching(event, names);
        let mut verdict = HookVerdict::default();
        if commands.is_empty() {
            return verdict;
        }
        let session = self.session();
        let mut input = json!({
            "session_id": session.session_id,
            "transcript_path": session.transcript_path,
            "cwd": session.cwd,
            "hook_event_name": event.name(),
            "permission_mode": session.mode().claude_name(),
        });
        if let Value::Object(map) = &mut input {
            map.extend(fields);
        }
        let bytes = serde_json::to_vec(&input).unwrap_or_default();
        let runs = futures::future::join_all(
            commands.iter().map(|command| runner::run(command, &bytes, &session.cwd, cancel)),
        )
        .await;
        for ran in runs {
            read_result(event, &ran, &mut verdict, &self.warned);
        }
        verdict
    }

    /// PreToolUse for a call of `tool` with `args` (matched and reported under Claude's name when
    /// the tool has one).
    pub async fn pre_tool_use(
        &self,
        call_id: &str,
        tool: &str,
        args: &Value,
        cancel: &CancellationToken,
    ) -> HookVerdict {
        if self.is_empty(HookEvent::PreToolUse) {
            return HookVerdict::default();
        }
        let (name, input) = payload::claude_tool(tool, args, &self.session().cwd);
        let fields = fields([
            ("tool_name", Value::from(name.as_str())),
            ("tool_input", input),
            ("tool_use_id", call_id.into()),
        ]);
        self.run(HookEvent::PreToolUse, Some(&every_name(tool)), fields, cancel).await
    }

    /// PostToolUse for a call that ran, with its result.
    pub async fn post_tool_use(
        &self,
        tool: &str,
        args: &Value,
        result: &ToolResult,
        exit_code: Option<i32>,
        cancel: &CancellationToken,
    ) -> HookVerdict {
        if self.is_empty(HookEvent::PostToolUse) {
            return HookVerdict::default();
        }
        let (name, input) = payload::claude_tool(tool, args, &self.session().cwd);
        let response = payload::tool_response(tool, &input, result, exit_code);
        let fields = fields([
            ("tool_name", Value::from(name.as_str())),
            ("tool_input", input),
            ("tool_response", response),
            ("tool_use_id", result.call_id.clone().into()),
        ]);
        self.run(HookEvent::PostToolUse, Some(&every_name(tool)), fields, cancel).await
    }

    /// UserPromptSubmit for `prompt`.
    pub async fn user_prompt_submit(&self, prompt: &str, cancel: &CancellationToken) -> HookVerdict {
        self.run(HookEvent::UserPromptSubmit, None, fields([("prompt", prompt.into())]), cancel).await
    }

    /// Stop (or SubagentStop) as the model ends its turn; `active` is `stop_hook_active`: whether the
    /// model is already continuing because of a Stop hook.
    pub async fn stop(&self, event: HookEvent, active: bool, cancel: &CancellationToken) -> HookVerdict {
        self.run(event, None, fields([("stop_hook_active", active.into())]), cancel).await
    }

    /// SessionStart; `source` is `startup`, `resume`, `clear` or `compact` (matched by the matcher).
    pub async fn session_start(&self, source: &str) -> HookVerdict {
        let cancel = CancellationToken::new();
        self.run(HookEvent::SessionStart, Some(&[source]), fields([("source", source.into())]), &cancel).await
    }

    /// SessionEnd; `reason` is `clear`, `logout`, `prompt_input_exit` or `other`.
    pub async fn session_end(&self, reason: &str) -> HookVerdict {
        let cancel = CancellationToken::new();
        self.run(HookEvent::SessionEnd, None, fields([("reason", reason.into())]), &cancel).await
    }

    /// PreCompact; `trigger` is `manual` or `auto` (matched by the matcher).
    pub async fn pre_compact(&self, trigger: &str, custom_instructions: &str) -> HookVerdict {
        let cancel = CancellationToken::new();
        let fields =
            fields([("trigger", trigger.into()), ("custom_instructions", custom_instructions.into())]);
        self.run(HookEvent::PreCompact, Some(&[trigger]), fields, &cancel).await
    }

    /// Notification with `message` (e.g. "Lathe needs your permission to use shell").
    pub async fn notification(&self, message: &str) -> HookVerdict {
        let cancel = CancellationToken::new();
        self.run(HookEvent::Notification, None, fields([("message", message.into())]), &cancel).await
    }
}

fn fields<const N: usize>(pairs: [(&str, Value); N]) -> Map<String, Value> {
    pairs.into_iter().map(|(key, value)| (key.to_string(), value)).collect()
}

/// The command as shown in messages: its first line, at most 60 characters.
fn label(command: &str) -> String {
    let line = command.lines().next().unwrap_or("");
    let short: String = line.chars().take(60).collect();
    if short.len() < command.len() { format!("{short}…") } else { short }
}

/// Folds one hook's end into `verdict`.
fn read_result(event: HookEvent, ran: &Ran, verdict: &mut HookVerdict, warned: &Mutex<HashSet<String>>) {
    let who = format!("{} hook `{}`", event.name(), label(&ran.command));
    let stderr = ran.stderr.trim();
    match &ran.ended {
        Ended::Exited(0) => {
            let stdout = ran.stdout.trim();
            if stdout.starts_with('{') {
                match serde_json::from_str::<Value>(stdout) {
                    Ok(json) => {
                        read_json(event, &who, &json, verdict);
                        if ran.project
                            && let Some(PermissionVerdict::Allow(reason)) = verdict.permission.take()
                        {
                            verdict.permission = Some(PermissionVerdict::ProjectAllow(reason));
                        }
                        // Once per hook: the first output with fields outside the schema is named.
                        let unknown = unknown_fields(&json);
                        if !unknown.is_empty()
                            && warned
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .insert(ran.command.clone())
                        {
                            verdict.messages.push(unknown_fields_message(&who, &unknown));
                        }
                    }
                    Err(error) => verdict
                        .messages
                        .push(format!("{who} printed invalid JSON ({error}); its output was ignored")),
                }
            } else if event.stdout_is_context() && !stdout.is_empty() {
                verdict.context.push(stdout.to_string());
            }
        }
        Ended::Exited(2) if event.can_block() => {
            let reason = if stderr.is_empty() { format!("blocked by {who}") } else { stderr.to_string() };
            verdict.add_block(reason);
        }
        Ended::Exited(2) => verdict.messages.push(format!("{who} exited with 2: {stderr}")),
        Ended::Exited(code) => {
            let detail = if stderr.is_empty() { String::new() } else { format!(": {}", first_lines(stderr)) };
            verdict.messages.push(format!("{who} failed with exit code {code}{detail}"));
        }
        Ended::Signalled(signal) => verdict.messages.push(format!("{who} was killed by signal {signal}")),
        Ended::TimedOut(limit) => {
            verdict.messages.push(format!("{who} timed out after {} s and was killed", limit.as_secs_f64()))
        }
        Ended::Cancelled => {}
        Ended::NotStarted(error) => verdict.messages.push(format!("{who} could not be started: {error}")),
    }
}

fn first_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().take(3).collect();
    let joined = lines.join(" | ");
    joined.chars().take(300).collect()
}

/// The output fields of Claude Code's hook schema (hooks reference, "JSON output"): the common
/// ones, and those under `hookSpecificOutput`. `suppressOutput` is known and has no effect here.
const KNOWN_FIELDS: [&str; 7] =
    ["continue", "stopReason", "suppressOutput", "decision", "reason", "systemMessage", "hookSpecificOutput"];
const KNOWN_SPECIFIC_FIELDS: [&str; 4] =
    ["hookEventName", "permissionDecision", "permissionDecisionReason", "additionalContext"];

/// The fields of `json` that Lathe does not understand, `hookSpecificOutput.` ones prefixed.
fn unknown_fields(json: &Value) -> Vec<String> {
    let Some(top) = json.as_object() else { return Vec::new() };
    let mut unknown: Vec<String> =
        top.keys().filter(|key| !KNOWN_FIELDS.contains(&key.as_str())).cloned().collect();
    if let Some(specific) = top.get("hookSpecificOutput").and_then(Value::as_object) {
        unknown.extend(
            specific
                .keys()
                .filter(|key| !KNOWN_SPECIFIC_FIELDS.contains(&key.as_str()))
                .map(|key| format!("hookSpecificOutput.{key}")),
        );
    }
    unknown
}

fn unknown_fields_message(who: &str, unknown: &[String]) -> String {
    let named: Vec<String> = unknown
        .iter()
        .map(|field| {
            if KNOWN_SPECIFIC_FIELDS.contains(&field.as_str()) {
                format!("`{field}` (it belongs under hookSpecificOutput)")
            } else {
                format!("`{field}`")
            }
        })
        .collect();
    let fields = if unknown.len() == 1 { "field" } else { "fields" };
    format!(
        "{who} printed output {fields} Lathe does not understand, which had no effect: {}",
        named.join(", ")
    )
}

/// Reads Claude Code's JSON hook output.
fn read_json(event: HookEvent, who: &str, json: &Value, verdict: &mut HookVerdict) {
    let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_string);
    if json.get("continue").and_then(Value::as_bool) == Some(false) {
        verdict.stop = Some(text(json.get("stopReason")).unwrap_or_else(|| format!("stopped by {who}")));
    }
    if let Some(message) = text(json.get("systemMessage")) {
        verdict.messages.push(message);
    }
    let reason = text(json.get("reason"));
    match json.get("decision").and_then(Value::as_str) {
        Some("block") if event.can_block() => {
            verdict.add_block(reason.clone().unwrap_or_else(|| format!("blocked by {who}")))
        }
        Some("approve") if event == HookEvent::PreToolUse => {
            verdict.permission =
                Some(PermissionVerdict::Allow(reason.clone().unwrap_or_else(|| format!("allowed by {who}"))))
        }
        _ => {}
    }
    let Some(specific) = json.get("hookSpecificOutput") else { return };
    if let Some(context) = text(specific.get("additionalContext")).filter(|c| !c.trim().is_empty()) {
        verdict.context.push(context);
    }
    if event != HookEvent::PreToolUse {
        return;
    }
    let why = text(specific.get("permissionDecisionReason"));
    match specific.get("permissionDecision").and_then(Value::as_str) {
        Some("deny") => verdict.add_block(why.unwrap_or_else(|| format!("denied by {who}"))),
        Some("allow") => {
            verdict.permission =
                Some(PermissionVerdict::Allow(why.unwrap_or_else(|| format!("allowed by {who}"))))
        }
        Some("ask") => {
            verdict.permission =
                Some(PermissionVerdict::Ask(why.unwrap_or_else(|| format!("{who} asks for approval"))))
        }
        Some(other) => {
            verdict.messages.push(format!("{who}: unknown permissionDecision \"{other}\" was ignored"))
        }
        None => {}
    }
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;
