//! Decisions on shell commands: deny rules on every simple command, what the analysis cannot
//! follow, ask rules, destructive patterns, allow rules and read-only commands, then the mode and
//! the sandbox fallback; and the prefix rules "always" stores.

use std::path::Path;

use super::{Ctx, Decision, SANDBOX_FALLBACK, Verdict};
use crate::PermissionMode;
use crate::rules::RuleKind;
use crate::sandbox::{self, SandboxMode};
use crate::settings::too_broad;
use crate::shell::{self, Class, Places, SimpleCommand};

impl Ctx<'_> {
    /// A deny on the first path a command line names that a deny `Read(…)` rule covers
    /// (`cat config/prod.key`, `cat config/*`, `cat {config,x}/prod.key` and `< config/prod.key`
    /// under `Read(config/prod.key)`): what the rule forbids the file tools is not read through
    /// the shell either, where the command line names it. (A path computed at run time, or a
    /// directory a command walks, is not seen.)
    fn denied_read(&self, parsed: &shell::Parsed, places: &Places<'_>) -> Option<Decision> {
        let any_read_deny = self.rules.rules.iter().any(|rule| {
            rule.kind == RuleKind::Deny && matches!(rule.specifier, crate::rules::Specifier::Paths(_))
        });
        if !any_read_deny {
            return None;
        }
        let named = parsed
            .commands
            .iter()
            .flat_map(|cmd| cmd.args().iter().map(move |word| (cmd.rule_text(), word, &cmd.cwd)))
            .chain(
                parsed.reads.iter().map(|read| (format!("< {}", read.target.text), &read.target, &read.cwd)),
            );
        for (text, word, cwd) in named {
            let Some(path) = places.path_of(word, cwd) else { continue };
            for path in super::expand::matches(&path) {
                let real = crate::path::real_path(&path);
                let paths = [path.as_path(), real.as_path()];
                if let Some(rule) =
                    self.rules.find(RuleKind::Deny, |rule| rule.matches_path(self.tool, false, &paths))
                {
                    return Some(Decision::deny(
                        rule.to_string(),
                        format!("`{text}` reads {}, which is denied by the {rule}", path.display()),
                    ));
                }
            }
        }
        None
    }

    pub(super) fn command(&self, command: &str, cwd: &Path) -> Decision {
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
        if let Some(decision) = self.denied_read(&parsed, &places) {
            return decision;
        }
        let mut destructive = Vec::new();
        let mut needs = Vec::new();
        let mut suggestions: Vec<String> = Vec::new();
        let mut allowed_by: Vec<String> = Vec::new();
        let mut all_by_rule = !parsed.commands.is_empty();
        for cmd in &parsed.commands {
            let text = cmd.rule_text();
            let allow_text = cmd.allow_text();
            let allow = self.rules.find(RuleKind::Allow, |rule| rule.matches_command(&allow_text));
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
        let network = self.policy.network();
        match sandbox::backend(network) {
            Ok(_) => decision,
            Err(why) => self.ask(Decision::ask(
                SANDBOX_FALLBACK,
                format!(
                    "no OS sandbox is available ({why}), so commands that are not read-only need approval"
                ),
                sandbox::probe::probed(network).advice(),
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
        let i = shell::git_line(&args).at;
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
