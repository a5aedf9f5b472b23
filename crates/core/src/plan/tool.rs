//! `exit_plan_mode {plan}` (Claude Code's `ExitPlanMode`): the model presents its finished plan.
//! Declares a write of the plan file (which plan mode allows), refuses outside plan mode before
//! anyone is asked, saves the plan and hands it to the [`PlanDesk`]; the call's result tells the
//! model what the user decided.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use lathe_policy::PermissionMode;
use lathe_protocol::ResultView;
use lathe_protocol::plan::{PlanAnswer, PlanReady};
use lathe_tools::{Access, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{EXIT_PLAN_MODE, PlanDesk, Reviewed};

const DESCRIPTION: &str = "\
Plan mode: only read-only tools and commands run. When the plan is ready (markdown: files to change, \
what in each, in order, how to verify), call this to present it; the user approves it (then carry \
it out) or sends feedback (keep planning). Do not ask for approval in text.";

/// The `exit_plan_mode` tool of a session.
pub struct ExitPlanMode {
    desk: Arc<PlanDesk>,
    plan_file: PathBuf,
}

impl ExitPlanMode {
    /// The tool presenting plans through `desk`, saving them to `plan_file`
    /// (`<lathe_home>/plans/<session>.md`).
    pub fn new(desk: Arc<PlanDesk>, plan_file: PathBuf) -> ExitPlanMode {
        ExitPlanMode { desk, plan_file }
    }

    /// The plan: the argument, or (when it is blank) what the model wrote to the plan file.
    fn plan_text(&self, args: &ExitPlanArgs) -> Result<String, ToolError> {
        let plan = if args.plan.trim().is_empty() {
            std::fs::read_to_string(&self.plan_file).unwrap_or_default()
        } else {
            args.plan.clone()
        };
        if plan.trim().is_empty() {
            return Err(ToolError::Failed(format!(
                "{EXIT_PLAN_MODE}: the plan is empty: pass it as `plan` (markdown), or write it to {} first",
                self.plan_file.display()
            )));
        }
        Ok(format!("{}\n", plan.trim_end()))
    }
}

/// Arguments of `exit_plan_mode`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExitPlanArgs {
    /// The plan, in markdown. Empty: the plan file as you wrote it.
    pub plan: String,
}

/// The session's permission mode, as the policy in force for this call has it.
fn mode_of(ctx: &ToolContext) -> PermissionMode {
    ctx.policy.as_ref().map_or(PermissionMode::Default, |policy| policy.mode())
}

fn not_in_plan_mode(mode: PermissionMode) -> ToolError {
    ToolError::Failed(format!(
        "{EXIT_PLAN_MODE}: the session is not in plan mode (the permission mode is {mode}), so there is \
         no plan to present: carry on with the task"
    ))
}

/// Writes `plan` to `file` unless it already holds it.
fn save(file: &Path, plan: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(file).is_ok_and(|old| old.trim_end() == plan.trim_end()) {
        return Ok(());
    }
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(file, plan)
}

/// What the model is told of the user's answer, and the line the user sees for it.
fn answered(answer: PlanAnswer, mode: PermissionMode) -> (String, String) {
    match answer {
        PlanAnswer::KeepPlanning { feedback } => {
            let said = if feedback.trim().is_empty() {
                "They gave no feedback: ask them what to change.".to_string()
            } else {
                format!("Their feedback: {}", feedback.trim())
            };
            let text = format!(
                "The user did not approve the plan and wants you to keep planning: the session stays in plan \
                 mode and nothing was changed. {said}\nRevise the plan (read more where needed) and call \
                 {EXIT_PLAN_MODE} again with the new plan."
            );
            let line = if feedback.trim().is_empty() {
                "keep planning".to_string()
            } else {
                format!("keep planning: {}", lathe_tools::one_line(feedback.trim()))
            };
            (text, line)
        }
        PlanAnswer::Approve if mode == PermissionMode::Plan => (
            "The user approved the plan, but the session is still in plan mode, so edits are still denied: \
             end your turn, saying that the plan is ready to run once the mode allows edits."
                .to_string(),
            "plan approved (still in plan mode)".to_string(),
        ),
        PlanAnswer::Approve => {
            let how = if mode == PermissionMode::AcceptEdits {
                " (file edits in the workspace run without asking; other commands may still ask)"
            } else if mode == PermissionMode::Default {
                " (each edit, and each command that is not read-only, is put to the user first)"
            } else {
                ""
            };
            let text = format!(
                "The user approved the plan and left plan mode: the permission mode is now {mode}{how}. Carry \
                 out the plan now, step by step, and verify the result."
            );
            (text, format!("plan approved · {mode}"))
        }
    }
}

impl Tool for ExitPlanMode {
    type Args = ExitPlanArgs;

    fn name(&self) -> &'static str {
        EXIT_PLAN_MODE
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn access(&self, _args: &ExitPlanArgs, _ctx: &ToolContext) -> Access {
        Access::Write(vec![self.plan_file.clone()])
    }

    /// The plan's first line that is not blank.
    fn summary(&self, args: &Value) -> String {
        let plan = args.get("plan").and_then(Value::as_str).unwrap_or("");
        let first = plan.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("the plan file");
        lathe_tools::one_line(first)
    }

    fn precheck(&self, _args: &ExitPlanArgs, ctx: &ToolContext) -> Result<(), ToolError> {
        match mode_of(ctx) {
            PermissionMode::Plan => Ok(()),
            other => Err(not_in_plan_mode(other)),
        }
    }

    async fn run(&self, args: ExitPlanArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let mode = mode_of(ctx);
        if mode != PermissionMode::Plan {
            return Err(not_in_plan_mode(mode));
        }
        let plan = self.plan_text(&args)?;
        let (plan_file, not_saved) = match save(&self.plan_file, &plan) {
            Ok(()) => (Some(self.plan_file.display().to_string()), String::new()),
            Err(error) => {
                (None, format!("\n(The plan could not be saved to {}: {error}.)", self.plan_file.display()))
            }
        };
        let ready = PlanReady { call_id: ctx.call_id.clone(), plan, plan_file };
        let (text, line, ends_run) = match self.desk.present(ready, &ctx.cancel).await {
            Reviewed::Cancelled => return Err(ToolError::Cancelled),
            Reviewed::Headless => (
                format!(
                    "The plan was presented and is this run's result: a headless plan run ends here without \
                     carrying it out, and nothing was changed.{not_saved}"
                ),
                "plan presented".to_string(),
                true,
            ),
            Reviewed::Answered { answer, mode } => {
                let (text, line) = answered(answer, mode);
                (format!("{text}{not_saved}"), line, false)
            }
        };
        Ok(ToolOutput { view: Some(ResultView::Line { text: line }), ends_run, ..ToolOutput::text(text) })
    }
}
