//! The one permission decision ([`Policy::decide`]): rules, path guard, shell analysis, mode and
//! sandbox, in this order, for one tool call's [`Access`].
//!
//! 1. **Deny rules** bind in every mode, bypass included (also a bare `Bash` or `Read`).
//! 2. **Hard limits**: tools never write `.git` internals or settings files (deny); destructive
//!    commands and writes outside the workspace ask in every mode unless an allow rule names them;
//!    what the shell analysis cannot follow asks.
//! 3. **Ask rules** ask in every mode.
//! 4. **Allow rules** and what is harmless by nature (reading inside the workspace, read-only
//!    commands) allow.
//! 5. **The mode** decides the rest: `bypass` allows, `accept-edits` allows workspace edits,
//!    `default` asks, `dont-ask` denies, `plan` denies everything but the plan file, `auto` allows
//!    workspace edits and hands the rest to the reviewer ([`Decision::review`]), as it does with
//!    the hard limits' asks (ask rules still ask a person).
//! 6. A command that would run without asking but is not read-only asks when the configured OS
//!    sandbox is unavailable.
//!
//! Headless front ends turn an ask into a denial with [`Decision::headless`].

use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::path::Guard;
use crate::rules::{Rule, RuleKind, RuleSet, ToolName};

mod command;
mod expand;
mod files;
use crate::sandbox::{NetworkAccess, SandboxMode};
use crate::settings::{Loaded, Poison};
use crate::{Access, PermissionMode};
pub(crate) use files::url_host;

/// The `by` of a decision that asks because the sandbox is unavailable.
const SANDBOX_FALLBACK: &str = "sandbox fallback";

/// Allow, ask or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Run it without asking.
    Allow,
    /// A person must decide; a headless front end turns this into a denial
    /// ([`Decision::headless`]).
    Ask,
    /// Do not run it; the model gets the denial, naming the rule or mode, as the tool result.
    Deny,
}

/// The policy's answer for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Allow, ask or deny.
    pub verdict: Verdict,
    /// What decided: a rule and its file, a mode, a check (`read-only command`).
    pub by: String,
    /// What the call would do, in words for the model and the prompt.
    pub reason: String,
    /// For an ask: what would let it run without asking (a rule to add, a mode).
    pub hint: Option<String>,
    /// For an ask: the prefix rules an "always" answer stores (empty when none is safe).
    pub suggestions: Vec<String>,
    /// For an ask in mode `auto`: the reviewer decides instead of a person (not for ask rules or
    /// settings problems, which always ask a person).
    pub review: bool,
}

impl Decision {
    fn allow(by: impl Into<String>) -> Decision {
        Decision {
            verdict: Verdict::Allow,
            by: by.into(),
            reason: String::new(),
            hint: None,
            suggestions: Vec::new(),
            review: false,
        }
    }

    fn deny(by: impl Into<String>, reason: impl Into<String>) -> Decision {
        Decision {
            verdict: Verdict::Deny,
            by: by.into(),
            reason: reason.into(),
            hint: None,
            suggestions: Vec::new(),
            review: false,
        }
    }

    fn ask(by: impl Into<String>, reason: impl Into<String>, hint: impl Into<String>) -> Decision {
        Decision {
            verdict: Verdict::Ask,
            by: by.into(),
            reason: reason.into(),
            hint: Some(hint.into()),
            suggestions: Vec::new(),
            review: false,
        }
    }

    fn with_suggestions(mut self, suggestions: Vec<String>) -> Decision {
        self.suggestions = suggestions;
        self
    }

    /// The decision when nobody can answer (headless): an ask becomes a denial that says why and
    /// what would allow the call.
    pub fn headless(self) -> Decision {
        match self.verdict {
            Verdict::Ask => {
                let hint = self.hint.as_deref().unwrap_or("an allow rule in .lathe/settings.json");
                Decision {
                    verdict: Verdict::Deny,
                    reason: format!(
                        "permission denied: {} (decided by {}); it needs approval and Lathe runs headless. \
                         To allow it: {hint}",
                        self.reason, self.by
                    ),
                    ..self
                }
            }
            Verdict::Allow | Verdict::Deny => self,
        }
    }

    /// One line for receipts: `allow (read-only command)`, `deny (rule … in …)`, `review (mode
    /// auto)`.
    pub fn summary(&self) -> String {
        let verdict = match self.verdict {
            Verdict::Allow => "allow",
            Verdict::Ask if self.review => "review",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        };
        format!("{verdict} ({})", self.by)
    }
}

/// A session's permission policy: mode, rules, path guard and sandbox setting.
#[derive(Debug)]
pub struct Policy {
    mode: RwLock<PermissionMode>,
    rules: RwLock<RuleSet>,
    guard: Guard,
    writable: Vec<PathBuf>,
    poison: Vec<Poison>,
    plan_file: Option<PathBuf>,
    sandbox: SandboxMode,
    network: NetworkAccess,
    sandbox_notice_given: AtomicBool,
    /// Directories no file tool reads or writes, outside the workspace ([`Policy::hiding`]).
    hidden: Vec<PathBuf>,
}

/// What a [`Policy`] is built from.
#[derive(Debug, Clone, Default)]
pub struct PolicyConfig {
    /// The permission mode the session starts in (changed later with [`Policy::set_mode`]).
    pub mode: PermissionMode,
    /// The workspace root (absolute): reads and writes inside it are the ones modes allow.
    pub workspace: PathBuf,
    /// The user's home directory (for `~/` in rules and the secret paths under it); `None` when
    /// unknown.
    pub home: Option<PathBuf>,
    /// The settings files' content ([`crate::settings::load`]).
    pub settings: Loaded,
    /// Files tools never write (the settings files).
    pub protected: Vec<PathBuf>,
    /// Folders file tools never write, with what they are for: the memory folders, which only the
    /// `memory` tool writes (so every memory write is checked for secrets and recorded).
    pub protected_dirs: Vec<PathBuf>,
    /// The plan file plan mode may write (`~/.lathe/plans/<session>.md`).
    pub plan_file: Option<PathBuf>,
    /// The sandbox commands run in (decides the fallback when it is unavailable).
    pub sandbox: SandboxMode,
    /// Whether sandboxed commands reach the network (which backend probe applies).
    pub network: NetworkAccess,
}

impl Policy {
    /// A policy from `config`.
    pub fn new(config: PolicyConfig) -> Policy {
        let guard = Guard::new(
            &config.workspace,
            &config.settings.extra_roots,
            config.home.as_deref(),
            &config.protected,
        )
        .with_protected_dirs(&config.protected_dirs);
        Policy {
            mode: RwLock::new(config.mode),
            rules: RwLock::new(config.settings.rules),
            writable: guard.writable_roots(),
            guard,
            poison: config.settings.poison,
            plan_file: config.plan_file.map(|path| crate::path::real_path(&path)),
            sandbox: config.sandbox,
            network: config.network,
            sandbox_notice_given: AtomicBool::new(false),
            hidden: Vec::new(),
        }
    }

    /// This policy with `dirs` closed to file tools (reads and writes denied in every mode),
    /// except the workspace where it lies inside one: what a sandbox hiding the same dirs keeps
    /// from shell commands ([`crate::sandbox::Sandbox::hiding`]).
    pub fn hiding(mut self, dirs: &[PathBuf]) -> Policy {
        self.hidden = dirs.iter().map(|dir| crate::path::real_path(dir)).collect();
        self
    }

    /// The hidden directory `real` (a resolved path) lies in, unless it is in the workspace.
    pub(crate) fn hidden_dir(&self, real: &Path) -> Option<&Path> {
        if self.writable.first().is_some_and(|workspace| real.starts_with(workspace)) {
            return None;
        }
        self.hidden.iter().find(|dir| real.starts_with(dir)).map(PathBuf::as_path)
    }

    /// A policy with no rules for `workspace` under `mode` (tests, tools run outside a session).
    pub fn with_mode(mode: PermissionMode, workspace: &Path) -> Policy {
        Policy::new(PolicyConfig { mode, workspace: workspace.to_path_buf(), ..PolicyConfig::default() })
    }

    /// The current mode (`Default` if the lock was poisoned).
    pub fn mode(&self) -> PermissionMode {
        self.mode.read().map(|mode| *mode).unwrap_or(PermissionMode::Default)
    }

    /// Changes the mode (leaving plan mode is an explicit op).
    pub fn set_mode(&self, mode: PermissionMode) {
        if let Ok(mut slot) = self.mode.write() {
            *slot = mode;
        }
    }

    /// The path guard: which roots are readable and writable, and the protected files.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// The sandbox mode commands run in (as configured; whether it is available is the
    /// sandbox module's question).
    pub fn sandbox(&self) -> SandboxMode {
        self.sandbox
    }

    /// Whether sandboxed commands reach the network (as configured).
    pub fn network(&self) -> NetworkAccess {
        self.network
    }

    /// The first time a decision fell back to asking because the sandbox is unavailable: a line
    /// saying so (shown once per session); afterwards `None`.
    pub fn sandbox_notice(&self, decision: &Decision) -> Option<String> {
        if decision.by != SANDBOX_FALLBACK || self.sandbox_notice_given.swap(true, Ordering::Relaxed) {
            return None;
        }
        Some(format!("{}; {}", decision.reason, crate::sandbox::probe::probed(self.network).advice()))
    }

    /// Adds allow rules approved with "always" for the rest of the session.
    pub fn add_allow_rules(&self, rules: &[String], source: &str) -> Vec<String> {
        let mut problems = Vec::new();
        let anchors = crate::rules::Anchors {
            root: &self.guard.workspace,
            cwd: &self.guard.workspace,
            home: self.guard.home.as_deref(),
        };
        let Ok(mut set) = self.rules.write() else { return problems };
        for text in rules {
            match Rule::parse(text, RuleKind::Allow, source, anchors) {
                Ok(rule) => set.rules.push(rule),
                Err(error) => problems.push(format!("`{text}`: {error}")),
            }
        }
        problems
    }

    /// The deny rule that forbids `tool` to read `path` (as given and as its real path), if one
    /// does: what a search tool's walk leaves out, so that a denied file's lines never show
    /// (`Read(config/prod.key)` hides that file from `grep`, `glob` and `list_dir`).
    pub fn read_denied(&self, tool: &str, path: &Path) -> Option<String> {
        let rules = match self.rules.read() {
            Ok(rules) => rules,
            Err(poisoned) => poisoned.into_inner(),
        };
        if !rules.denies_paths() {
            return None;
        }
        let real = crate::path::real_path(path);
        let paths = [path, real.as_path()];
        rules.find(RuleKind::Deny, |rule| rule.matches_path(tool, false, &paths)).map(Rule::to_string)
    }

    /// Whether some deny rule may forbid reading a path ([`RuleSet::denies_paths`]): a search
    /// tool's walk checks its entries only then.
    pub fn denies_paths(&self) -> bool {
        match self.rules.read() {
            Ok(rules) => rules.denies_paths(),
            Err(poisoned) => poisoned.into_inner().denies_paths(),
        }
    }

    /// Whether some deny rule may forbid a memory call ([`RuleSet::denies_memory`]): memory checks
    /// its entries one by one only then.
    pub fn denies_memory(&self) -> bool {
        match self.rules.read() {
            Ok(rules) => rules.denies_memory(),
            Err(poisoned) => poisoned.into_inner().denies_memory(),
        }
    }

    /// The allow rule that names exactly `host` ([`Rule::names_host`]: `WebFetch(domain:10.0.0.5)`,
    /// no wildcard, not a bare `WebFetch`), when one does and no deny rule covers the host: what
    /// lets `web_fetch` reach a loopback, private or link-local address (no mode does, bypass
    /// included). `host` is written as in a URL (`127.0.0.1`, `[::1]`, `intranet.local`).
    pub fn fetch_host_rule(&self, host: &str) -> Option<String> {
        let rules = match self.rules.read() {
            Ok(rules) => rules,
            Err(poisoned) => poisoned.into_inner(),
        };
        if rules
            .find(RuleKind::Deny, |rule| rule.matches_domain(host) || rule.matches_tool("web_fetch"))
            .is_some()
        {
            return None;
        }
        rules.find(RuleKind::Allow, |rule| rule.names_host(host)).map(Rule::to_string)
    }

    /// What the sandbox lets shell commands reach, in words for a refused fetch (so the model
    /// knows whether a command could reach the host instead): its network policy, or that there
    /// is no sandbox.
    pub fn network_note(&self) -> String {
        match (self.sandbox, self.network) {
            (SandboxMode::Off, _) => "the sandbox is off: shell commands use this machine's network".into(),
            (_, NetworkAccess::Off) => {
                "the sandbox's network policy is off: shell commands cannot reach the network either".into()
            }
            (_, NetworkAccess::On) => {
                "the sandbox's network policy is on: shell commands reach the network".into()
            }
        }
    }

    /// Decides one call of `tool` that touches `access`.
    pub fn decide(&self, tool: &str, access: &Access) -> Decision {
        let rules = match self.rules.read() {
            Ok(rules) => rules,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mode = self.mode();
        let ctx = Ctx { policy: self, rules: &rules, mode, tool };
        if let Some(rule) = rules.find(RuleKind::Deny, |rule| rule.matches_tool(tool)) {
            return Decision::deny(rule.to_string(), format!("{tool} is denied by the {rule}"));
        }
        match access {
            Access::Session => Decision::allow("changes session state only"),
            Access::Read(paths) => ctx.read(paths),
            Access::Write(paths) => ctx.write(paths),
            Access::Execute { command, cwd } => ctx.command(command, cwd),
            Access::Fetch { url } => ctx.fetch(url),
            Access::Memory { path, write } => ctx.memory(path, *write),
            Access::Undeclared { read_only } => ctx.other(*read_only),
        }
    }
}

/// One decision's borrowed state.
pub(crate) struct Ctx<'a> {
    policy: &'a Policy,
    rules: &'a RuleSet,
    mode: PermissionMode,
    tool: &'a str,
}

impl Ctx<'_> {
    fn rule(&self, kind: RuleKind, test: impl Fn(&Rule) -> bool) -> Option<&Rule> {
        self.rules.find(kind, |rule| rule.matches_tool(self.tool) || test(rule))
    }

    fn poisoned(&self, read: bool) -> Option<&Poison> {
        self.policy.poison.iter().find(|poison| match &poison.tool {
            None => !read,
            Some(ToolName::Read) => read,
            Some(name) => name.is(self.tool),
        })
    }

    /// An ask, except in the modes that cannot ask: `dont-ask` denies, and so does `plan`; in
    /// `auto` the reviewer takes it, unless an ask rule or a settings problem made it (those ask a
    /// person in every mode).
    fn ask(&self, decision: Decision) -> Decision {
        match self.mode {
            PermissionMode::Auto => {
                let review = !(decision.by.starts_with("ask rule") || decision.by == "settings problem");
                Decision { review, ..decision }
            }
            PermissionMode::DontAsk => Decision {
                verdict: Verdict::Deny,
                reason: format!("{}; mode dont-ask denies calls that need approval", decision.reason),
                ..decision
            },
            PermissionMode::Plan => Decision {
                verdict: Verdict::Deny,
                reason: format!(
                    "{}; plan mode only reads (and writes the plan file): present a plan instead",
                    decision.reason
                ),
                ..decision
            },
            PermissionMode::Default | PermissionMode::AcceptEdits | PermissionMode::Bypass => decision,
        }
    }

    /// The step "mode decides" for a call that is not harmless by nature.
    fn by_mode(&self, reason: String, hint: &str, edit: bool) -> Decision {
        match self.mode {
            PermissionMode::Bypass => Decision::allow("mode bypass"),
            PermissionMode::Auto if edit => Decision::allow("mode auto (an edit inside the workspace)"),
            PermissionMode::Auto => Decision { review: true, ..Decision::ask("mode auto", reason, hint) },
            PermissionMode::AcceptEdits if edit => Decision::allow("mode accept-edits"),
            PermissionMode::Default | PermissionMode::AcceptEdits => {
                Decision::ask(format!("mode {}", self.mode), reason, hint)
            }
            PermissionMode::DontAsk => Decision::deny(
                "mode dont-ask",
                format!("{reason}; mode dont-ask denies whatever no allow rule covers (to allow it: {hint})"),
            ),
            PermissionMode::Plan => Decision::deny(
                "mode plan",
                format!("{reason}; plan mode only reads (and writes the plan file): present a plan instead"),
            ),
        }
    }
}

pub(crate) fn show(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}
