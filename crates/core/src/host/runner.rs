//! The session task: takes ops one at a time and runs user turns. While a turn runs, `Cancel`,
//! `Permission`, `PlanAnswer`, `QuestionAnswer`, `SetMode`, `RunCommand` and `Quit` act at once, and so does `RaiseGoalBudget`
//! for a running goal (`ClearGoal` cancels it, then clears it); `UserInput`, `Note`, `SetModel`,
//! `ListTurns`, `Report`, `Compact` and the loop ops wait for the turn's end, in order; `Rewind` is
//! refused (the front end cancels first). The goal ops are in `goals.rs`, the loop's (a tick is a
//! turn of its own kind, which never starts a goal) in `loops.rs`. A user's own command (`RunCommand`) runs beside all of that: its end
//! is taken whenever it comes, and `Cancel` kills it when no turn runs. When the session ends, a
//! running command is killed, the background jobs of `shell` still running are stopped (a warning
//! names them), SessionEnd hooks run and the MCP servers are stopped before the event stream
//! closes. Background sub-agents still running then are stopped (a warning names each) before that.

use std::collections::VecDeque;
use std::sync::Arc;

use lathe_policy::PermissionMode;
use lathe_protocol::{
    AgentEvent, AgentOp, Content, LedgerItem, Meta, RunStats, StopCause, UserMessage, UserOrigin,
};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

mod goals;
mod loops;

use super::approver::ChannelApprover;
use super::command::UserCommands;
use super::config::Config;
use crate::Agent;
use crate::agent::GoalControl;
use crate::commands::{self, ExpandContext};
use crate::context::CompactOutcome;
use crate::plan::PlanDesk;
use crate::question::QuestionDesk;
use crate::skills::SkillSet;
use crate::skills::gate::ToolGate;
use crate::subagent::select_tools;
use crate::tool_scope::ToolList;

/// Whether the session goes on after an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    Quit,
}

/// What a turn answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TurnKind {
    /// The user's input: it works toward the goal, if one is set.
    User,
    /// A loop's tick: a normal turn that never starts or continues a goal.
    Tick,
}

pub(crate) struct Runner {
    agent: Agent,
    config: Config,
    approver: Option<Arc<ChannelApprover>>,
    modes: watch::Sender<PermissionMode>,
    events: mpsc::UnboundedSender<AgentEvent>,
    ops: mpsc::UnboundedReceiver<AgentOp>,
    queued: VecDeque<AgentOp>,
    skills: Arc<SkillSet>,
    gate: Arc<ToolGate>,
    mcp: Arc<lathe_mcp::McpServers>,
    /// The user's own commands.
    commands: UserCommands,
    /// The goal the next user input works toward ([`AgentOp::SetGoal`]).
    goal: Option<lathe_protocol::goal::GoalSpec>,
    /// A goal the resumed session's ledger holds as active: the next user input goes on with it.
    resumed_goal: Option<crate::agent::ResumedGoal>,
    /// The running loop, as its ledger items say.
    looping: Option<lathe_protocol::loops::LoopState>,
    /// Plans presented with `exit_plan_mode`, waiting for `PlanAnswer`.
    plans: Option<Arc<PlanDesk>>,
    /// Questions asked with `ask_user`, waiting for `QuestionAnswer`.
    questions: Option<Arc<QuestionDesk>>,
}

impl Runner {
    pub(crate) fn new(
        agent: Agent,
        config: Config,
        approver: Option<Arc<ChannelApprover>>,
        modes: watch::Sender<PermissionMode>,
        events: mpsc::UnboundedSender<AgentEvent>,
        ops: mpsc::UnboundedReceiver<AgentOp>,
        mcp: Arc<lathe_mcp::McpServers>,
    ) -> Runner {
        Runner {
            agent,
            commands: UserCommands::new(config.workspace.clone(), Box::new(command_summary)),
            config,
            approver,
            modes,
            events,
            ops,
            queued: VecDeque::new(),
            skills: Arc::new(SkillSet::default()),
            gate: Arc::new(ToolGate::default()),
            mcp,
            goal: None,
            resumed_goal: None,
            looping: None,
            plans: None,
            questions: None,
        }
    }

    /// The desk that `PlanAnswer` ops are delivered to.
    pub(crate) fn with_plans(mut self, plans: Arc<PlanDesk>) -> Runner {
        self.plans = Some(plans);
        self
    }

    /// The desk that `QuestionAnswer` ops are delivered to.
    pub(crate) fn with_questions(mut self, questions: Arc<QuestionDesk>) -> Runner {
        self.questions = Some(questions);
        self
    }

    /// The skills `/<skill-name>` expands, and the gate of a loaded skill's `allowed-tools`
    /// (opened at the end of every turn).
    pub(crate) fn with_skills(mut self, skills: Arc<SkillSet>, gate: Arc<ToolGate>) -> Runner {
        self.skills = skills;
        self.gate = gate;
        self
    }

    pub(crate) async fn run(mut self) {
        if let Some(goal) = self.agent.active_goal() {
            self.warn(format!(
                "resuming the goal \"{}\" at iteration {} of {}",
                goal.spec.condition, goal.iterations, goal.spec.max_iterations
            ));
            self.announce_resumed_goal(&goal);
            self.resumed_goal = Some(goal);
        }
        self.restore_loop();
        loop {
            let op = match self.queued.pop_front() {
                Some(op) => op,
                None => tokio::select! {
                    op = self.ops.recv() => match op {
                        Some(op) => op,
                        None => break,
                    },
                    () = self.commands.finished(&self.events) => continue,
                },
            };
            if self.idle_op(op).await == Flow::Quit {
                break;
            }
            self.agent.send_warnings(&self.events);
        }
        if self.commands.is_running() {
            self.commands.kill();
            self.commands.finished(&self.events).await;
        }
        for message in self.agent.end_background().await {
            self.warn(message);
        }
        for message in self.agent.end_team().await {
            self.warn(message);
        }
        let jobs = self.agent.tool_context().jobs.end_all().await;
        if !jobs.is_empty() {
            let list: Vec<String> = jobs
                .iter()
                .map(|job| format!("{} ({})", job.id, lathe_tools::one_line(&job.command)))
                .collect();
            self.warn(format!(
                "stopped the background job{} still running at the end of the session: {}",
                if jobs.len() == 1 { "" } else { "s" },
                list.join(", ")
            ));
        }
        self.agent.sync();
        self.agent.send_warnings(&self.events);
        for message in self.agent.session_end("other").await {
            self.warn(message);
        }
        self.mcp.shutdown().await;
    }

    fn warn(&self, message: String) {
        let _ = self.events.send(AgentEvent::Warning { message });
    }

    async fn idle_op(&mut self, op: AgentOp) -> Flow {
        match op {
            AgentOp::UserInput { content } => return self.user_input(content).await,
            AgentOp::Steer { content, from } => {
                if let Some(text) = from {
                    self.agent.append(LedgerItem::Meta(Meta::Note { text }));
                }
                return self.user_input(content).await;
            }
            AgentOp::Permission { call_id, .. } => {
                self.warn(format!("no permission request is waiting for call {call_id}"));
            }
            AgentOp::PlanAnswer { call_id, .. } => {
                self.warn(format!("no plan is waiting for call {call_id}"))
            }
            AgentOp::QuestionAnswer { call_id, .. } => {
                self.warn(format!("no question is waiting for call {call_id}"))
            }
            AgentOp::Cancel => self.commands.kill(),
            AgentOp::SetMode { mode } => {
                self.modes.send_replace(mode);
                if self.agent.set_permission_mode(mode) {
                    let _ = self.events.send(AgentEvent::ModeChanged { mode });
                }
            }
            AgentOp::SetModel { model, provider } => self.switch_model(&model, provider.as_deref()),
            AgentOp::ListTurns => {
                let _ = self.events.send(AgentEvent::UserTurns { turns: self.agent.user_turns() });
            }
            AgentOp::Report => {
                let report = lathe_protocol::RunReport::from_ledger(self.agent.ledger(), 0);
                let _ = self.events.send(AgentEvent::Report { report });
            }
            AgentOp::Rewind { turn } => match self.agent.rewind(turn) {
                Ok(done) => {
                    let _ = self.events.send(AgentEvent::Rewound {
                        turn: done.turn,
                        prompt: done.prompt,
                        files: done.files,
                    });
                }
                Err(error) => self.warn(format!("rewind: {error}")),
            },
            AgentOp::Compact { focus } => {
                let cancel = CancellationToken::new();
                match self.agent.compact_now(focus.as_deref(), &self.events, &cancel).await {
                    CompactOutcome::Compacted | CompactOutcome::Cancelled => {}
                    CompactOutcome::NothingToCompact => {
                        self.warn("compact: nothing to compact yet; the conversation is all recent".into())
                    }
                    CompactOutcome::Exhausted(detail) => self.warn(format!("compact: {detail}")),
                }
            }
            AgentOp::RunCommand { command } => self.commands.start(command, &self.events),
            AgentOp::SetGoal { goal } => match goal.problem() {
                Some(problem) => self.warn(format!("goal not set: {problem}")),
                None => {
                    self.goal = Some(goal);
                    self.resumed_goal = None;
                }
            },
            AgentOp::ClearGoal => self.clear_goal(),
            AgentOp::RaiseGoalBudget { by } => self.raise_goal_budget(by),
            AgentOp::StartLoop { spec } => self.start_loop(spec),
            AgentOp::StopLoop => self.stop_loop("stopped by the user"),
            AgentOp::LoopTick => return self.loop_tick().await,
            AgentOp::Note { text } => self.agent.append(LedgerItem::Meta(Meta::Note { text })),
            AgentOp::Quit => return Flow::Quit,
        }
        Flow::Continue
    }

    fn switch_model(&mut self, model: &str, provider: Option<&str>) {
        match self.config.build_provider(provider, Some(model)) {
            Ok(resolved) => {
                let settings = self.config.agent_settings(&resolved);
                if let Some(name) = provider {
                    self.config.provider = name.to_string();
                }
                self.config.layer.model = Some(resolved.model.clone());
                self.agent.switch_model(resolved.provider, settings);
                let _ = self
                    .events
                    .send(AgentEvent::ModelChanged { model: resolved.model, provider: resolved.label });
            }
            Err(error) => self.warn(format!("model not changed: {error}")),
        }
    }

    /// Runs a user turn for `content`; a first text `/name args` naming a custom command or a skill
    /// is expanded first ([`crate::commands`]), on the command's model when it names one, and with
    /// only the tools its `allowed-tools` names (when it names any) for that turn.
    async fn user_input(&mut self, mut content: Vec<Content>) -> Flow {
        content.splice(0..0, self.commands.take_context());
        let command = match content.first() {
            Some(Content::Text { text }) if text.trim_start().starts_with('/') => text.clone(),
            _ => return self.turn(UserMessage { content, origin: UserOrigin::User }, TurnKind::User).await.0,
        };
        let ctx = ExpandContext {
            workspace: self.config.workspace.clone(),
            lathe_home: self.config.home.clone(),
            skills: self.skills.clone(),
            policy: self.agent.policy().clone(),
            shell: self.agent.tools().get("shell"),
            tool_ctx: self.agent.tool_context().clone(),
        };
        let expansion = match commands::expand(&command, &ctx).await {
            None => None,
            Some(Ok(expansion)) => Some(expansion),
            Some(Err(error)) => {
                let message = format!("command not run: {error}");
                let _ = self.events.send(AgentEvent::Finished {
                    cause: StopCause::Error { kind: "command".into(), message },
                    stats: RunStats::default(),
                    final_text: String::new(),
                    report: None,
                });
                return Flow::Continue;
            }
        };
        let Some(expansion) = expansion else {
            // The one rule of every front end: a `/name` no one knows is refused, not sent.
            if let Some(name) = lathe_protocol::extensions::command_name(&command) {
                let message = format!(
                    "unknown command /{name}: no custom command or skill of this session has that name \
                     (to send text that starts with /{name} to the model, put another character first)"
                );
                // A usage error, as an unknown flag is (print mode exits 2).
                let _ = self.events.send(AgentEvent::Finished {
                    cause: StopCause::Error { kind: "usage".into(), message },
                    stats: RunStats::default(),
                    final_text: String::new(),
                    report: None,
                });
                return Flow::Continue;
            }
            return self.turn(UserMessage { content, origin: UserOrigin::User }, TurnKind::User).await.0;
        };
        for message in &expansion.warnings {
            self.warn(format!("/{}: {message}", expansion.name));
        }
        content[0] = Content::text(expansion.text);
        let previous = self.agent.model().to_string();
        let switched = match expansion.model {
            Some(model) if model != previous => {
                self.switch_model(&model, None);
                true
            }
            Some(_) | None => false,
        };
        let saved = (!expansion.allowed_tools.is_empty()).then(|| {
            let owner = format!("the allowed-tools of /{}", expansion.name);
            let list = ToolList::parse(&expansion.allowed_tools, &owner, &self.config.workspace);
            let (tools, notes) = select_tools(self.agent.tools(), &list, true);
            for note in notes {
                self.warn(format!("/{} allowed-tools: {note}", expansion.name));
            }
            self.agent.replace_tools(tools)
        });
        let flow = self.turn(UserMessage { content, origin: UserOrigin::User }, TurnKind::User).await.0;
        if let Some(tools) = saved {
            self.agent.replace_tools(tools);
        }
        if switched {
            self.switch_model(&previous, None);
        }
        flow
    }

    /// Runs one turn, taking the ops that act during it; returns how it ended.
    async fn turn(&mut self, input: UserMessage, kind: TurnKind) -> (Flow, StopCause) {
        let cancel = CancellationToken::new();
        let control = GoalControl::default();
        let mut flow = Flow::Continue;
        let mut ops_open = true;
        let (resumed, goal) = match kind {
            TurnKind::User => {
                let resumed = if self.goal.is_none() { self.resumed_goal.take() } else { None };
                let goal = self.goal.take().or_else(|| resumed.as_ref().map(|goal| goal.spec.clone()));
                (resumed, goal)
            }
            TurnKind::Tick => (None, None),
        };
        let steering = self.agent.steering();
        let Runner { agent, approver, modes, events, ops, queued, gate, commands, plans, questions, .. } =
            self;
        let stop = |approver: &Option<Arc<ChannelApprover>>| {
            cancel.cancel();
            if let Some(approver) = approver {
                approver.deny_all();
            }
        };
        let run = async {
            match &goal {
                Some(goal) => {
                    agent.run_goal(input, goal, resumed.as_ref(), &control, events, &cancel).await.0
                }
                None => agent.run(input, events, &cancel).await,
            }
        };
        tokio::pin!(run);
        let cause = loop {
            tokio::select! {
                cause = &mut run => break cause,
                () = commands.finished(events) => {}
                op = ops.recv(), if ops_open => match op {
                    None => {
                        // The front end is gone: nobody will see the rest of this turn.
                        ops_open = false;
                        stop(approver);
                        flow = Flow::Quit;
                    }
                    Some(AgentOp::Cancel) => stop(approver),
                    Some(AgentOp::Quit) => {
                        stop(approver);
                        flow = Flow::Quit;
                    }
                    Some(AgentOp::Permission { call_id, answer }) => {
                        let delivered = approver.as_ref().is_some_and(|approver| approver.answer(&call_id, answer));
                        if !delivered {
                            let message = format!("no permission request is waiting for call {call_id}");
                            let _ = events.send(AgentEvent::Warning { message });
                        }
                    }
                    Some(AgentOp::PlanAnswer { call_id, answer }) => {
                        if !plans.as_ref().is_some_and(|plans| plans.answer(&call_id, answer)) {
                            let message = format!("no plan is waiting for call {call_id}");
                            let _ = events.send(AgentEvent::Warning { message });
                        }
                    }
                    Some(AgentOp::QuestionAnswer { call_id, answer }) => {
                        if !questions.as_ref().is_some_and(|questions| questions.answer(&call_id, answer)) {
                            let message = format!("no question is waiting for call {call_id}");
                            let _ = events.send(AgentEvent::Warning { message });
                        }
                    }
                    Some(AgentOp::SetMode { mode }) => {
                        modes.send_replace(mode);
                    }
                    Some(AgentOp::Steer { content, from }) => steering.push(content, from),
                    Some(AgentOp::RunCommand { command }) => commands.start(command, events),
                    Some(AgentOp::RaiseGoalBudget { by }) if goal.is_some() => control.raise(by),
                    Some(AgentOp::ClearGoal) => {
                        // The goal's turns stop; it is cleared once the run has ended.
                        if goal.is_some() {
                            stop(approver);
                        }
                        queued.push_back(AgentOp::ClearGoal);
                    }
                    Some(AgentOp::Rewind { .. }) => {
                        let message = "rewind: a turn is running; cancel it first".to_string();
                        let _ = events.send(AgentEvent::Warning { message });
                    }
                    Some(
                        op @ (AgentOp::UserInput { .. }
                        | AgentOp::SetModel { .. }
                        | AgentOp::ListTurns
                        | AgentOp::SetGoal { .. }
                        | AgentOp::RaiseGoalBudget { .. }
                        | AgentOp::StartLoop { .. }
                        | AgentOp::StopLoop
                        | AgentOp::Note { .. }
                        | AgentOp::LoopTick
                        | AgentOp::Report
                        | AgentOp::Compact { .. }),
                    ) => {
                        queued.push_back(op);
                    }
                },
            }
        };
        // Steering that came after the turn's last request starts the next turn.
        for (at, (content, from)) in steering.take().into_iter().enumerate() {
            queued.insert(at, AgentOp::Steer { content, from });
        }
        // A skill the model loaded restricts the tools until the turn ends.
        gate.clear();
        (flow, cause)
    }
}

/// The one-line summary of a user's command: the shell tool's, so it reads like a call of it.
fn command_summary(command: &str) -> String {
    let arguments = serde_json::json!({ "command": command });
    lathe_tools::DynTool::summary(&lathe_tools::builtin::Shell::default(), &arguments)
}
