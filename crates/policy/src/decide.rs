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
//!    `default` asks, `dont-ask` denies, `plan` denies everything but the plan file.
//! 6. A command that would run without asking but is not read-only asks when the configured OS
//!    sandbox is unavailable.
//!
//! Headless front ends turn an ask into a denial with [`Decision::headless`].

use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::path::{Guard, PathCheck};
use crate::rules::{Rule, RuleKind, RuleSet, ToolName};
use crate::sandbox::{self, SandboxMode};
use crate::settings::{Loaded, Poison, too_broad};
use crate::shell::{self, Class, Places, SimpleCommand};
use crate::{Access, PermissionMode};

/// The `by` of a decision that asks because the sandbox is unavailable.
const SANDBOX_FALLBACK: &str = "sandbox fallback";

/// Allow, ask or deny.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Run it.
    Allow,
    /// A person must decide.
    Ask,
    /// Do not run it.
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
}

impl Decision {
    fn allow(by: impl Into<String>) -> Decision {
        Decision {
            verdict: Verdict::Allow,
            by: by.into(),
            reason: String::new(),
            hint: None,
            suggestions: Vec::new(),
        }
    }

    fn deny(by: impl Into<String>, reason: impl Into<String>) -> Decision {
        Decision {
            verdict: Verdict::Deny,
            by: by.into(),
            reason: reason.into(),
            hint: None,
            suggestions: Vec::new(),
        }
    }

    fn ask(by: impl Into<String>, reason: impl Into<String>, hint: impl Into<String>) -> Decision {
        Decision {
            verdict: Verdict::Ask,
            by: by.into(),
            reason: reason.into(),
            hint: Some(hint.into()),
            suggestions: Vec::new(),
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

    /// One line for receipts: `allow (read-only command)`, `deny (rule … in …)`.
    pub fn summary(&self) -> String {
        let verdict = match self.verdict {
            Verdict::Allow => "allow",
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
    sandbox_notice_given: AtomicBool,
}

/// What a [`Policy`] is built from.
#[derive(Debug, Clone, Default)]
pub struct PolicyConfig {
    /// The permission mode.
    pub mode: PermissionMode,
    /// The workspace root.
    pub workspace: PathBuf,
    /// The user's home directory.
    pub home: Option<PathBuf>,
    /// The settings files' content ([`crate::settings::load`]).
    pub settings: Loaded,
    /// Files tools never write (the settings files).
    pub protected: Vec<PathBuf>,
    /// The plan file plan mode may write (`~/.lathe/plans/<session>.md`).
    pub plan_file: Option<PathBuf>,
    /// The sandbox commands run in (decides the fallback when it is unavailable).
    pub sandbox: SandboxMode,
}

impl Policy {
    /// A policy from `config`.
    pub fn new(config: PolicyConfig) -> Policy {
        let guard = Guard::new(
            &config.workspace,
            &config.settings.extra_roots,
            config.home.as_deref(),
            &config.protected,
        );
        Policy {
            mode: RwLock::new(config.mode),
            rules: RwLock::new(config.settings.rules),
            writable: guard.writable_roots(),
            guard,
            poison: config.settings.poison,
            plan_file: config.plan_file.map(|path| crate::path::real_path(&path)),
            sandbox: config.sandbox,
            sandbox_notice_given: AtomicBool::new(false),
        }
    }

    /// A policy with no rules for `workspace` under `mode` (tests, tools run outside a session).
    pub fn with_mode(mode: PermissionMode, workspace: &Path) -> Policy {
        Policy::new(PolicyConfig { mode, workspace: workspace.to_path_buf(), ..PolicyConfig::default() })
    }

    /// The current mode.
    pub fn mode(&self) -> PermissionMode {
        self.mode.read().map(|mode| *mode).unwrap_or(PermissionMode::Default)
    }

    /// Changes the mode (leaving plan mode is an explicit op).
    pub fn set_mode(&self, mode: PermissionMode) {
        if let Ok(mut slot) = self.mode.write() {
            *slot = mode;
        }
    }

    /// The path guard.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// The sandbox setting.
    pub fn sandbox(&self) -> SandboxMode {
        self.sandbox
    }

    /// The first time a decision fell back to asking because the sandbox is unavailable: a line
    /// saying so (shown once per session); afterwards `None`.
    pub fn sandbox_notice(&self, decision: &Decision) -> Option<String> {
        if decision.by != SANDBOX_FALLBACK || self.sandbox_notice_given.swap(true, Ordering::Relaxed) {
            return None;
        }
        Some(format!(
            "{}; install bubblewrap (apt-get install bubblewrap) or set `[sandbox] mode = \"off\"`",
            decision.reason
        ))
    }

    /// Adds allow rules approved with "always" for the rest of the session.
    pub fn add_allow_rules(&self, rules: &[String], source: &str) -> Vec<String> {
        let mut problems = Vec::new();
        let anchors = crate::rules::Anchors { root: &self.guard.workspace, home: self.guard.home.as_deref() };
        let Ok(mut set) = self.rules.write() else { return problems };
        for text in rules {
            match Rule::parse(text, RuleKind::Allow, source, anchors) {
                Ok(rule) => set.rules.push(rule),
                Err(error) => problems.push(format!("`{text}`: {error}")),
            }
        }
        problems
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
            Access::Undeclared { read_only } => ctx.other(*read_only),
        }
    }
}

/// One decision's borrowed state.
struct Ctx<'a> {
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

    /// An ask, except in the modes that cannot ask: `dont-ask` denies, and so does `plan`.
    fn ask(&self, decision: Decision) -> Decision {
        match self.mode {
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

    fn read(&self, paths: &[PathBuf]) -> Decision {
        let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        let reals: Vec<PathBuf> = paths.iter().map(|p| crate::path::real_path(p)).collect();
        let all: Vec<&Path> = refs.iter().copied().chain(reals.iter().map(PathBuf::as_path)).collect();
        if let Some(rule) = self.rules.find(RuleKind::Deny, |rule| rule.matches_path(self.tool, false, &all))
        {
            return Decision::deny(
                rule.to_string(),
                format!("reading {} is denied by the {rule}", show(paths)),
            );
        }
        if let Some(rule) = self.rule(RuleKind::Ask, |rule| rule.matches_path(self.tool, false, &all)) {
            return self.ask(Decision::ask(
                rule.to_string(),
                format!("reading {} asks by the {rule}", show(paths)),
                "remove the ask rule",
            ));
        }
        if let Some(poison) = self.poisoned(true) {
            return self.ask(Decision::ask("settings problem", poison.why.clone(), "fix the settings file"));
        }
        let allow = self.rule(RuleKind::Allow, |rule| rule.matches_path(self.tool, false, &all));
        for path in paths {
            let (what, real) = match self.policy.guard.check_read(path) {
                PathCheck::Inside(_) => continue,
                PathCheck::Outside(real) => ("outside the workspace".to_string(), real),
                PathCheck::Sensitive(real, what) => (format!("{what}, a possible secret"), real),
            };
            if let Some(rule) = allow {
                return Decision::allow(rule.to_string());
            }
            let rule = format!("Read(/{}{})", real.display(), if real.is_dir() { "/**" } else { "" });
            let reason = format!("reads {}, {what}", real.display());
            return match self.mode {
                PermissionMode::Bypass => Decision::allow("mode bypass"),
                PermissionMode::Default
                | PermissionMode::AcceptEdits
                | PermissionMode::Plan
                | PermissionMode::DontAsk => {
                    let hint = format!(
                        "add `{rule}` to permissions.allow in .lathe/settings.json, or rerun with --yolo"
                    );
                    let decision = Decision::ask("path guard", reason, hint).with_suggestions(vec![rule]);
                    if self.mode == PermissionMode::Plan { decision } else { self.ask(decision) }
                }
            };
        }
        match allow {
            Some(rule) => Decision::allow(rule.to_string()),
            None => Decision::allow("reads inside the workspace"),
        }
    }

    fn write(&self, paths: &[PathBuf]) -> Decision {
        let reals: Vec<PathBuf> = paths.iter().map(|p| crate::path::real_path(p)).collect();
        let all: Vec<&Path> = paths.iter().chain(&reals).map(PathBuf::as_path).collect();
        if let Some(rule) = self.rules.find(RuleKind::Deny, |rule| rule.matches_path(self.tool, true, &all)) {
            return Decision::deny(
                rule.to_string(),
                format!("writing {} is denied by the {rule}", show(paths)),
            );
        }
        let mut outside = Vec::new();
        for path in paths {
            match self.policy.guard.check_write(path) {
                PathCheck::Sensitive(real, what) => {
                    return Decision::deny(
                        "path guard",
                        format!("{} is {what}, which tools never write", real.display()),
                    );
                }
                PathCheck::Outside(real) => outside.push(real),
                PathCheck::Inside(_) => {}
            }
        }
        if let Some(rule) = self.rule(RuleKind::Ask, |rule| rule.matches_path(self.tool, true, &all)) {
            return self.ask(Decision::ask(
                rule.to_string(),
                format!("writing {} asks by the {rule}", show(paths)),
                "remove the ask rule",
            ));
        }
        if self.mode == PermissionMode::Plan {
            let plan = self.policy.plan_file.as_deref();
            return if plan.is_some() && reals.iter().all(|real| Some(real.as_path()) == plan) {
                Decision::allow("the plan file")
            } else {
                Decision::deny(
                    "mode plan",
                    format!(
                        "plan mode is read-only: only the plan file{} may be written; present a plan instead",
                        plan.map(|p| format!(" ({})", p.display())).unwrap_or_default()
                    ),
                )
            };
        }
        if let Some(poison) = self.poisoned(false) {
            return self.ask(Decision::ask("settings problem", poison.why.clone(), "fix the settings file"));
        }
        let allow = self.rule(RuleKind::Allow, |rule| rule.matches_path(self.tool, true, &all));
        if let Some(real) = outside.first() {
            if let Some(rule) = allow {
                return Decision::allow(rule.to_string());
            }
            let rule = format!("Edit(/{})", real.display());
            let hint = format!(
                "add `{rule}` (or the directory, or permissions.additionalDirectories) to .lathe/settings.json"
            );
            return self.ask(
                Decision::ask(
                    "path guard",
                    format!("writes {}, outside the workspace", real.display()),
                    hint,
                )
                .with_suggestions(vec![rule]),
            );
        }
        if let Some(rule) = allow {
            return Decision::allow(rule.to_string());
        }
        let suggestion = self.edit_suggestion(&reals);
        let hint = format!(
            "rerun with --permission-mode accept-edits or --yolo, or add {} to permissions.allow in .lathe/settings.json",
            suggestion.as_deref().map(|s| format!("`{s}`")).unwrap_or_else(|| "an Edit rule".into())
        );
        self.by_mode(format!("edits {}", show(paths)), &hint, true)
            .with_suggestions(suggestion.into_iter().collect())
    }

    /// `Edit(src/**)` for a file in `src/`, `Edit(/name)` for one at the root.
    fn edit_suggestion(&self, reals: &[PathBuf]) -> Option<String> {
        let rel = reals.first()?.strip_prefix(&self.policy.guard.workspace).ok()?;
        let rule = match rel.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            Some(dir) => format!("Edit({}/**)", dir.display()),
            None => format!("Edit(/{})", rel.display()),
        };
        (!too_broad(&rule)).then_some(rule)
    }

    fn fetch(&self, url: &str) -> Decision {
        let host = url.split("://").nth(1).unwrap_or(url).split(['/', '?', '#']).next().unwrap_or("");
        let host =
            host.rsplit('@').next().unwrap_or(host).split(':').next().unwrap_or(host).to_ascii_lowercase();
        if let Some(rule) = self.rules.find(RuleKind::Deny, |rule| rule.matches_domain(&host)) {
            return Decision::deny(rule.to_string(), format!("fetching from {host} is denied by the {rule}"));
        }
        if let Some(rule) = self.rule(RuleKind::Ask, |rule| rule.matches_domain(&host)) {
            return self.ask(Decision::ask(
                rule.to_string(),
                format!("fetching from {host} asks by the {rule}"),
                "remove the ask rule",
            ));
        }
        if let Some(rule) = self.rule(RuleKind::Allow, |rule| rule.matches_domain(&host)) {
            return Decision::allow(rule.to_string());
        }
        let rule = format!("WebFetch(domain:{host})");
        let hint = format!("add `{rule}` to permissions.allow in .lathe/settings.json, or rerun with --yolo");
        self.by_mode(format!("fetches {url}"), &hint, false).with_suggestions(vec![rule])
    }

    fn other(&self, read_only: bool) -> Decision {
        if let Some(rule) = self.rules.find(RuleKind::Ask, |rule| rule.matches_tool(self.tool)) {
            return self.ask(Decision::ask(
                rule.to_string(),
                format!("{} asks by the {rule}", self.tool),
                "remove the ask rule",
            ));
        }
        if let Some(rule) = self.rules.find(RuleKind::Allow, |rule| rule.matches_tool(self.tool)) {
            return Decision::allow(rule.to_string());
        }
        if read_only {
            return Decision::allow("read-only tool");
        }
        let hint =
            format!("add `{}` to permissions.allow in .lathe/settings.json, or rerun with --yolo", self.tool);
        self.by_mode(format!("{} is not read-only", self.tool), &hint, false)
    }

    fn command(&self, command: &str, cwd: &Path) -> Decision {
        let parsed = shell::parse(command);
        for cmd in &parsed.commands {
            for text in deny_texts(cmd) {
                if let Some(rule) = self.rules.find(RuleKind::Deny, |rule| rule.matches_command(&text)) {
                    return Decision::deny(rule.to_string(), format!("`{text}` is denied by the {rule}"));
                }
            }
        }
        if !parsed.unknown.is_empty() {
            let whole = command.split_whitespace().collect::<Vec<_>>().join(" ");
            if let Some(rule) = self.rules.find(RuleKind::Deny, |rule| rule.matches_command(&whole)) {
                return Decision::deny(rule.to_string(), format!("the command is denied by the {rule}"));
            }
            let reason = format!("Lathe cannot analyse this command: {}", parsed.unknown.join("; "));
            return self.ask(Decision::ask(
                "shell analysis",
                reason,
                "approve it interactively, or write it as plain commands",
            ));
        }
        for cmd in &parsed.commands {
            for text in deny_texts(cmd) {
                if let Some(rule) = self.rules.find(RuleKind::Ask, |rule| rule.matches_command(&text)) {
                    return self.ask(Decision::ask(
                        rule.to_string(),
                        format!("`{text}` asks by the {rule}"),
                        "remove the ask rule",
                    ));
                }
            }
        }
        let home = self.policy.guard.home.as_deref();
        let start = crate::path::real_path(cwd);
        let places = Places { start: &start, home, writable: &self.policy.writable };
        let mut destructive = Vec::new();
        let mut needs = Vec::new();
        let mut suggestions: Vec<String> = Vec::new();
        let mut allowed_by: Vec<String> = Vec::new();
        let mut all_by_rule = !parsed.commands.is_empty();
        for cmd in &parsed.commands {
            let text = cmd.rule_text();
            let allow = self.rules.find(RuleKind::Allow, |rule| rule.matches_command(&text));
            match shell::classify(cmd, &places) {
                Class::ReadOnly => all_by_rule &= allow.is_some(),
                Class::Mutating => match allow {
                    Some(rule) => allowed_by.push(rule.to_string()),
                    None => {
                        all_by_rule = false;
                        if let Some(rule) = prefix_rule(cmd)
                            && !suggestions.contains(&rule)
                        {
                            suggestions.push(rule);
                        }
                        needs.push(format!("`{text}`"));
                    }
                },
                Class::Destructive(what) => match allow.filter(|rule| !rule.is_blanket()) {
                    Some(rule) => allowed_by.push(rule.to_string()),
                    None => destructive.push((text, what)),
                },
            }
        }
        for name in &parsed.fork_bombs {
            destructive.push((format!("{name}()"), "defines a fork bomb".into()));
        }
        for write in &parsed.writes {
            match shell::classify_write(write, &places) {
                Class::ReadOnly => {}
                Class::Mutating if all_by_rule => {}
                Class::Mutating => needs.push(format!("a redirection writing {}", write.target.text)),
                Class::Destructive(what) => destructive.push((format!("> {}", write.target.text), what)),
            }
        }
        if let Some((text, what)) = destructive.first() {
            let rule = prefix_rule_text(text);
            return self.ask(Decision::ask(
                "destructive-command check",
                format!("`{text}` {what}"),
                format!(
                    "this asks in every mode; only an allow rule that names the command (such as `{rule}`) lets it run without asking"
                ),
            ));
        }
        let sandboxed = |decision: Decision| self.sandbox_fallback(decision);
        if needs.is_empty() && allowed_by.is_empty() {
            return Decision::allow("read-only command");
        }
        if self.mode == PermissionMode::Plan {
            return Decision::deny(
                "mode plan",
                "plan mode runs only read-only commands (and writes the plan file): present a plan instead",
            );
        }
        if needs.is_empty() {
            if let Some(poison) = self.poisoned(false) {
                return self.ask(Decision::ask(
                    "settings problem",
                    poison.why.clone(),
                    "fix the settings file",
                ));
            }
            allowed_by.dedup();
            return sandboxed(Decision::allow(allowed_by.join(", ")));
        }
        suggestions.retain(|rule| !too_broad(rule));
        let hint = match suggestions.as_slice() {
            [] => "an allow rule for it in .lathe/settings.json, or rerun with --yolo".to_string(),
            rules => format!(
                "add {} to permissions.allow in .lathe/settings.json, or rerun with --yolo",
                rules.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(" and ")
            ),
        };
        let reason = format!("runs {}, which is not read-only", needs.join(", "));
        let decision = self.by_mode(reason, &hint, false).with_suggestions(suggestions);
        if decision.verdict == Verdict::Allow {
            if let Some(poison) = self.poisoned(false) {
                return self.ask(Decision::ask(
                    "settings problem",
                    poison.why.clone(),
                    "fix the settings file",
                ));
            }
            return sandboxed(decision);
        }
        decision
    }

    /// A command that would run without asking asks when the configured sandbox cannot be set up.
    fn sandbox_fallback(&self, decision: Decision) -> Decision {
        if self.policy.sandbox == SandboxMode::Off {
            return decision;
        }
        match sandbox::backend() {
            Ok(_) => decision,
            Err(why) => self.ask(Decision::ask(
                SANDBOX_FALLBACK,
                format!(
                    "no OS sandbox is available ({why}), so commands that are not read-only need approval"
                ),
                "install bubblewrap (apt-get install bubblewrap), or set `[sandbox] mode = \"off\"` in ~/.lathe/config.toml",
            )),
        }
    }
}

/// The texts deny and ask rules are matched against: the rule text, and for `git` the same without
/// global options (`git -C x push` → `git push`).
fn deny_texts(cmd: &SimpleCommand) -> Vec<String> {
    let mut texts = vec![cmd.rule_text()];
    // With the wrappers that were removed in front (`sudo ls` for `Bash(sudo *)`).
    let mut wrapped = texts[0].clone();
    for wrapper in cmd.wrappers.iter().rev() {
        wrapped = format!("{wrapper} {wrapped}");
        texts.push(wrapped.clone());
    }
    if cmd.program() == Some("git") {
        let args: Vec<&str> = cmd.args().iter().map(|w| w.text.as_str()).collect();
        let mut i = 0;
        while i < args.len() && args[i].starts_with('-') {
            i += if matches!(args[i], "-C" | "-c" | "--git-dir" | "--work-tree") { 2 } else { 1 };
        }
        if i > 0 && i < args.len() {
            texts.push(format!("git {}", args[i..].join(" ")));
        }
    }
    texts
}

/// Programs whose first argument names what they do (`cargo test`, `git commit`).
const SUBCOMMANDS: &[&str] = &[
    "git",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "go",
    "docker",
    "podman",
    "kubectl",
    "pip",
    "pip3",
    "poetry",
    "uv",
    "gradle",
    "mvn",
    "dotnet",
    "rustup",
    "apt",
    "apt-get",
    "brew",
    "gh",
    "terraform",
    "helm",
    "deno",
    "make",
    "just",
    "systemctl",
    "conda",
];

/// The prefix rule "always" stores for `cmd`: `Bash(cargo test *)`, `Bash(npm run build *)`,
/// `Bash(pytest *)`.
fn prefix_rule(cmd: &SimpleCommand) -> Option<String> {
    let program = cmd.program()?;
    let mut words = vec![program.to_string()];
    let args: Vec<&str> = cmd.args().iter().filter(|w| !w.dynamic).map(|w| w.text.as_str()).collect();
    if SUBCOMMANDS.contains(&program)
        && let Some(sub) = args.iter().find(|a| !a.starts_with('-'))
    {
        words.push(sub.to_string());
        if matches!(program, "npm" | "pnpm" | "yarn" | "bun") && *sub == "run" {
            let after: Vec<&&str> = args.iter().skip_while(|a| **a != "run").skip(1).collect();
            if let Some(script) = after.iter().find(|a| !a.starts_with('-')) {
                words.push(script.to_string());
            }
        }
    }
    Some(format!("Bash({} *)", words.join(" ")))
}

fn prefix_rule_text(text: &str) -> String {
    let words: Vec<&str> = text.split_whitespace().take(2).collect();
    format!("Bash({} *)", words.join(" "))
}

fn show(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
}
