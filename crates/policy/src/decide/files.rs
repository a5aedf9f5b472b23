//! Decisions on files and other tools: reading (path guard, secrets, `Read(…)` rules), writing
//! (protected files, plan file, outside the roots, `Edit(…)` rules, accept-edits), fetching
//! (`WebFetch(domain:…)`) and tools that declare nothing.

use std::path::{Path, PathBuf};

use super::{Ctx, Decision, show};
use crate::PermissionMode;
use crate::path::PathCheck;
use crate::rules::RuleKind;
use crate::settings::too_broad;

impl Ctx<'_> {
    /// A denial when one of `reals` lies in a hidden directory.
    fn hidden(&self, reals: &[PathBuf]) -> Option<Decision> {
        reals.iter().find_map(|real| {
            let dir = self.policy.hidden_dir(real)?;
            Some(Decision::deny(
                "hidden directory",
                format!("{} is in {}, which this session may not see", real.display(), dir.display()),
            ))
        })
    }

    pub(super) fn read(&self, paths: &[PathBuf]) -> Decision {
        let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        let reals: Vec<PathBuf> = paths.iter().map(|p| crate::path::real_path(p)).collect();
        if let Some(denied) = self.hidden(&reals) {
            return denied;
        }
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
                | PermissionMode::Auto
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

    pub(super) fn write(&self, paths: &[PathBuf]) -> Decision {
        let reals: Vec<PathBuf> = paths.iter().map(|p| crate::path::real_path(p)).collect();
        if let Some(denied) = self.hidden(&reals) {
            return denied;
        }
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

    /// A fetch from `url`'s host: deny, ask and allow `WebFetch(domain:…)` rules, then the mode as
    /// for anything that is not an edit (`accept-edits` asks too). A decision that does not allow
    /// says what the sandbox lets shell commands reach ([`super::Policy::network_note`]), so the
    /// model knows whether a command could fetch it instead.
    pub(super) fn fetch(&self, url: &str) -> Decision {
        let mut decision = self.fetch_rules(url);
        if decision.verdict != super::Verdict::Allow {
            decision.reason = format!("{} ({})", decision.reason, self.policy.network_note());
        }
        decision
    }

    fn fetch_rules(&self, url: &str) -> Decision {
        let host = url_host(url);
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

    /// A memory call: deny, ask and allow rules of `Memory` (bare or with a path glob), then a read
    /// is allowed and a write goes to the mode as an edit: `accept-edits` and `bypass` allow,
    /// `default` asks, `plan` and `dont-ask` deny. An allow rule from a project settings file
    /// never allows the user scope (`user/…`): a cloned repository must not be able to make Lathe
    /// write the user's memory unasked.
    pub(super) fn memory(&self, path: &str, write: bool) -> Decision {
        if let Some(rule) = self.rules.find(RuleKind::Deny, |rule| rule.matches_memory(path, write)) {
            return Decision::deny(rule.to_string(), format!("memory `{path}` is denied by the {rule}"));
        }
        if let Some(rule) = self.rule(RuleKind::Ask, |rule| rule.matches_memory(path, write)) {
            return self.ask(Decision::ask(
                rule.to_string(),
                format!("writing memory `{path}` asks by the {rule}"),
                "remove the ask rule",
            ));
        }
        let user_scope = path == "user" || path.starts_with("user/");
        if let Some(rule) = self.rules.find(RuleKind::Allow, |rule| {
            (rule.matches_tool(self.tool) || rule.matches_memory(path, write))
                && !(user_scope && rule.project)
        }) {
            return Decision::allow(rule.to_string());
        }
        if !write {
            return Decision::allow("memory read");
        }
        if self.mode == PermissionMode::Auto {
            // The user's memory is read by every project's sessions (and, recalled, by nobody as
            // the user's words): the reviewer decides its writes; a project's memory is an edit.
            return if user_scope {
                let hint = format!("add `Memory({path})` to permissions.allow in ~/.lathe/settings.json");
                Decision {
                    review: true,
                    ..Decision::ask("mode auto", format!("writes user memory `{path}`"), hint)
                }
            } else {
                Decision::allow("mode auto (a project memory write)")
            };
        }
        let rule = format!("Memory({path})");
        let hint = format!(
            "add `{rule}` (or `Memory` for every memory write) to permissions.allow in \
             ~/.lathe/settings.json (a project's settings cannot allow user memory), or rerun with \
             --permission-mode accept-edits"
        );
        self.by_mode(format!("writes memory `{path}`"), &hint, true).with_suggestions(vec![rule])
    }

    pub(super) fn other(&self, read_only: bool) -> Decision {
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
        if read_only && self.mode == PermissionMode::Auto && self.tool == "task" {
            // A sub-agent's own calls are decided one by one; in auto mode starting one is
            // reviewed too (it spends the session's budget on the model's say-so).
            let hint = "add `task` to permissions.allow in ~/.lathe/settings.json";
            return Decision { review: true, ..Decision::ask("mode auto", "starts a sub-agent", hint) };
        }
        if read_only {
            return Decision::allow("read-only tool");
        }
        let hint =
            format!("add `{}` to permissions.allow in .lathe/settings.json, or rerun with --yolo", self.tool);
        let mut decision = self.by_mode(format!("{} is not read-only", self.tool), &hint, false);
        // An MCP tool's own name is a rule as narrow as it gets: "always" stores it.
        if decision.verdict == super::Verdict::Ask && self.tool.starts_with("mcp__") {
            decision.suggestions = vec![self.tool.to_string()];
        }
        decision
    }
}

/// The host of `url`, lower-cased, without user info and port (`https://u@Docs.rs:443/x` → `docs.rs`);
/// an IPv6 address keeps its brackets (`http://[::1]:8080/` → `[::1]`), as URL parsers write it.
pub(crate) fn url_host(url: &str) -> String {
    let authority = url.split("://").nth(1).unwrap_or(url).split(['/', '?', '#', '\\']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    let host = match host_port.find(']') {
        Some(end) if host_port.starts_with('[') => &host_port[..=end],
        _ => host_port.split(':').next().unwrap_or(host_port),
    };
    host.to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::url_host;

    #[test]
    fn hosts_of_urls() {
        for (url, host) in [
            ("https://u@Docs.rs:443/x", "docs.rs"),
            ("https://docs.rs", "docs.rs"),
            ("http://127.0.0.1:8080/a?b#c", "127.0.0.1"),
            ("http://[::1]:8080/", "[::1]"),
            ("http://[::ffff:7f00:1]/", "[::ffff:7f00:1]"),
            ("http://user:pw@[fe80::1]/", "[fe80::1]"),
            ("https://example.com?q=1", "example.com"),
        ] {
            assert_eq!(url_host(url), host, "{url}");
        }
    }
}
