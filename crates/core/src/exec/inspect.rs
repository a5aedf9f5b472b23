//! The checks a tool call meets before it runs, as one [`Inspector`] each, in one order
//! ([`ORDER`]); the first refusal answers the call, with its true status (`denied` for a rule, a
//! scope, a hook or the user; `failed` for a call that cannot run as written) and the reason the
//! receipt records.
//!
//! Order, and why: a response cut short runs none of its calls ([`CutShort`]); arguments that did
//! not arrive whole are not guessed at ([`Complete`]); an unknown tool has nothing to judge
//! ([`Known`]); the tool reads its arguments — validation, a skill's or a sub-agent's tool scope,
//! its own preconditions (read before edit, unchanged on disk, `old_string` found) — and says what
//! the call touches ([`Arguments`]); PreToolUse hooks run
//! on a valid call only, and their block binds in every mode ([`PreToolUse`]); last the
//! permission decision, with the hook's allow or ask folded in, an `ask` put to the user or,
//! headless, denied ([`Permission`]). The call guard (too many calls in one response, repeats)
//! runs before all of these, in model order across the response ([`crate::guards`]).

use std::sync::Arc;

use futures::future::BoxFuture;
use lathe_policy::{Access, Decision, Policy, Verdict};
use lathe_protocol::{Receipt, StopReason, ToolCall, ToolStatus};
use lathe_tools::{DynTool, ToolContext, ToolError, ToolRegistry};

use crate::hooks::{HookVerdict, Hooks, PermissionVerdict};

/// What the checks read from the executor of one response.
pub(crate) trait CallEnv: Sync {
    /// Set when the response did not end on its own (see [`CutShort`]).
    fn cut_short(&self) -> Option<StopReason>;
    /// The tools on offer.
    fn tools(&self) -> &ToolRegistry;
    /// The context calls run in.
    fn tool_ctx(&self) -> &ToolContext;
    /// The session's hooks.
    fn hooks(&self) -> &Hooks;
    /// The permission policy.
    fn policy(&self) -> &Policy;
    /// Shows a hook's messages to the user and remembers a `"continue": false`.
    fn report(&self, verdict: &HookVerdict);
    /// Shows `message` to the user.
    fn warn(&self, message: String);
    /// Settles an `ask`: puts it to the user, or denies it headless.
    fn settle<'a>(
        &'a self,
        tool: &'a dyn DynTool,
        call: &'a ToolCall,
        decision: Decision,
    ) -> BoxFuture<'a, Decision>;
}

/// Why a call was not run: the text of its result, its status, and the receipt's decision.
pub(crate) struct Refused {
    text: String,
    status: ToolStatus,
    decision: String,
}

impl Refused {
    fn failed(decision: &str, text: String) -> Refused {
        Refused { text, status: ToolStatus::Failed, decision: decision.into() }
    }

    fn denied(decision: String, text: String) -> Refused {
        Refused { text, status: ToolStatus::Denied, decision }
    }
}

/// What the checks learn about a call as it passes them.
pub(crate) struct Inspected<'a> {
    call: &'a ToolCall,
    tool: Option<Arc<dyn DynTool>>,
    access: Option<Access>,
    hook: Option<PermissionVerdict>,
    /// The permission decision that allowed the call, as the receipt records it.
    allowed: Option<String>,
}

/// One check before a call runs: `Ok` passes the call to the next one.
pub(crate) trait Inspector: Sync {
    /// Inspects `call`, learning what later checks need.
    fn inspect<'a>(
        &'a self,
        env: &'a dyn CallEnv,
        call: &'a mut Inspected<'_>,
    ) -> BoxFuture<'a, Result<(), Refused>>;
}

/// The checks, in the order they run (see the module docs).
pub(crate) const ORDER: [&dyn Inspector; 6] =
    [&CutShort, &Complete, &Known, &Arguments, &PreToolUse, &Permission];

/// Runs `call` through [`ORDER`]. `Ok`: the tool to run (the receipt has the permission decision
/// and the call's summary); `Err`: the result text and status to answer the call with instead.
pub(crate) async fn inspect(
    env: &dyn CallEnv,
    call: &ToolCall,
    receipt: &mut Receipt,
) -> Result<Arc<dyn DynTool>, (String, ToolStatus)> {
    let mut inspected = Inspected { call, tool: None, access: None, hook: None, allowed: None };
    let mut refusal = None;
    for inspector in ORDER {
        if let Err(refused) = inspector.inspect(env, &mut inspected).await {
            refusal = Some(refused);
            break;
        }
    }
    if let Some(tool) = &inspected.tool {
        receipt.summary = tool.summary(&call.arguments);
    }
    match (refusal, inspected.tool, inspected.allowed) {
        (Some(refused), _, _) => {
            receipt.decision = refused.decision;
            Err((refused.text, refused.status))
        }
        (None, Some(tool), Some(allowed)) => {
            receipt.decision = allowed;
            Ok(tool)
        }
        // Every check passes a call only once it knows the tool and the permission allowed it.
        (None, _, _) => Err(("error: the call was not checked; not run".to_string(), ToolStatus::Failed)),
    }
}

/// A response cut by the output-token limit (`MaxTokens`) or stopped by the provider
/// (`Refusal`: a refusal or content filter): none of its calls runs, whatever its JSON.
pub(crate) struct CutShort;

impl Inspector for CutShort {
    fn inspect<'a>(
        &'a self,
        env: &'a dyn CallEnv,
        call: &'a mut Inspected<'_>,
    ) -> BoxFuture<'a, Result<(), Refused>> {
        Box::pin(async move {
            let Some(stop) = env.cut_short() else { return Ok(()) };
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
            Err(Refused::failed(
                decision,
                format!(
                    "error: your response {why}, so this {} call was not run (a call from an unfinished \
                     response may be incomplete). {retry}",
                    call.call.name
                ),
            ))
        })
    }
}

/// Arguments that did not arrive as a complete JSON object.
pub(crate) struct Complete;

impl Inspector for Complete {
    fn inspect<'a>(
        &'a self,
        _env: &'a dyn CallEnv,
        call: &'a mut Inspected<'_>,
    ) -> BoxFuture<'a, Result<(), Refused>> {
        Box::pin(async move {
            let Some(raw) = &call.call.incomplete else { return Ok(()) };
            let excerpt: String = raw.chars().take(120).collect();
            let ellipsis = if raw.chars().count() > 120 { "…" } else { "" };
            Err(Refused::failed(
                "not run: incomplete arguments",
                format!(
                    "error: the arguments of this {} call did not arrive as a complete JSON object ({} bytes: \
                     {excerpt}{ellipsis}), so it was not run. If your output was cut off by the token limit, \
                     retry with smaller arguments (write a large file in parts); otherwise send the arguments \
                     as one JSON object.",
                    call.call.name,
                    raw.len()
                ),
            ))
        })
    }
}

/// A tool that is not on offer.
pub(crate) struct Known;

impl Inspector for Known {
    fn inspect<'a>(
        &'a self,
        env: &'a dyn CallEnv,
        call: &'a mut Inspected<'_>,
    ) -> BoxFuture<'a, Result<(), Refused>> {
        Box::pin(async move {
            call.tool = env.tools().get(&call.call.name);
            if call.tool.is_some() {
                return Ok(());
            }
            if env.tools().get_deferred(&call.call.name).is_some() {
                return Err(Refused::failed(
                    "not run: deferred tool not loaded",
                    crate::tool_search::not_loaded(&call.call.name),
                ));
            }
            Err(Refused::failed(
                "not run: unknown tool",
                format!(
                    "error: unknown tool `{}`. Available tools: {}.",
                    call.call.name,
                    env.tools().names().join(", ")
                ),
            ))
        })
    }
}

/// The tool reads the arguments: invalid ones fail, a scope that does not grant the call denies it,
/// a valid call says what it touches, and a call its tool's own preconditions refuse
/// ([`DynTool::precheck`]: a file not read, changed on disk, `old_string` not found) fails.
pub(crate) struct Arguments;

impl Inspector for Arguments {
    fn inspect<'a>(
        &'a self,
        env: &'a dyn CallEnv,
        call: &'a mut Inspected<'_>,
    ) -> BoxFuture<'a, Result<(), Refused>> {
        Box::pin(async move {
            let Some(tool) = &call.tool else { return Ok(()) };
            match tool.access(&call.call.arguments, env.tool_ctx()) {
                Ok(access) => {
                    call.access = Some(access);
                    // The tool's own preconditions: a call that would fail is answered now,
                    // before a hook or the user is asked about it.
                    tool.precheck(&call.call.arguments, env.tool_ctx()).map_err(|error| match error {
                        // A refusal (web_fetch of a loopback address) is a denial, as its run's would be.
                        ToolError::Refused(reason) => {
                            Refused::denied(format!("deny ({reason})"), format!("error: {reason}"))
                        }
                        error => Refused::failed("not run: its own precondition failed", error.to_string()),
                    })
                }
                Err(ToolError::Refused(reason)) => {
                    Err(Refused::denied(format!("deny ({reason})"), format!("error: {reason}")))
                }
                Err(error) => Err(Refused::failed("not run: invalid arguments", format!("error: {error}"))),
            }
        })
    }
}

/// PreToolUse hooks: a block (or `"continue": false`) denies the call in every mode; an allow or
/// ask is kept for the permission decision.
pub(crate) struct PreToolUse;

impl Inspector for PreToolUse {
    fn inspect<'a>(
        &'a self,
        env: &'a dyn CallEnv,
        call: &'a mut Inspected<'_>,
    ) -> BoxFuture<'a, Result<(), Refused>> {
        Box::pin(async move {
            let ToolCall { id, name, arguments, .. } = call.call;
            let verdict = env.hooks().pre_tool_use(id, name, arguments, &env.tool_ctx().cancel).await;
            env.report(&verdict);
            if let Some(reason) = verdict.block.as_ref().or(verdict.stop.as_ref()) {
                return Err(Refused::denied(
                    format!("deny (PreToolUse hook: {reason})"),
                    format!("error: a PreToolUse hook blocked this call: {reason}"),
                ));
            }
            call.hook = verdict.permission;
            Ok(())
        })
    }
}

/// The policy's decision (rules, path guard, shell analysis, mode, sandbox) with the hook's
/// allow or ask folded in; an `ask` is settled by the user or, headless, denied.
pub(crate) struct Permission;

impl Inspector for Permission {
    fn inspect<'a>(
        &'a self,
        env: &'a dyn CallEnv,
        call: &'a mut Inspected<'_>,
    ) -> BoxFuture<'a, Result<(), Refused>> {
        Box::pin(async move {
            let (Some(tool), Some(access)) = (&call.tool, &call.access) else { return Ok(()) };
            let decision = with_hook(env.policy().decide(&call.call.name, access), call.hook.take());
            if let Some(message) = env.policy().sandbox_notice(&decision) {
                env.warn(message);
            }
            let decision = env.settle(tool.as_ref(), call.call, decision).await;
            let summary = decision.summary();
            match decision.verdict {
                Verdict::Allow => {
                    call.allowed = Some(summary);
                    Ok(())
                }
                Verdict::Deny => Err(Refused::denied(
                    summary,
                    format!("error: {}. The call was not run.", decision.reason),
                )),
                Verdict::Ask => Err(Refused::denied(
                    summary,
                    format!("error: permission needed ({}); not run.", decision.reason),
                )),
            }
        })
    }
}

/// The policy's decision adjusted by a PreToolUse hook's `permissionDecision`: its allow turns an
/// ask into an allow (a deny stays a deny), its ask turns an allow into an ask.
fn with_hook(decision: Decision, hook: Option<PermissionVerdict>) -> Decision {
    match (hook, decision.verdict) {
        // A repository's hook does not stand in for auto mode's reviewer.
        (Some(PermissionVerdict::ProjectAllow(_)), Verdict::Ask) if decision.review => decision,
        (Some(PermissionVerdict::Allow(reason) | PermissionVerdict::ProjectAllow(reason)), Verdict::Ask) => {
            Decision {
                verdict: Verdict::Allow,
                by: format!("PreToolUse hook: {reason}"),
                suggestions: Vec::new(),
                ..decision
            }
        }
        (Some(PermissionVerdict::Ask(reason)), Verdict::Allow) => Decision {
            verdict: Verdict::Ask,
            by: "a PreToolUse hook".into(),
            reason: format!("a PreToolUse hook asks: {reason}"),
            hint: Some("the PreToolUse hook's approval".into()),
            suggestions: Vec::new(),
            review: false,
        },
        (
            Some(
                PermissionVerdict::Allow(_) | PermissionVerdict::ProjectAllow(_) | PermissionVerdict::Ask(_),
            )
            | None,
            _,
        ) => decision,
    }
}
