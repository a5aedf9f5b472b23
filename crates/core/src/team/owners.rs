//! Who is editing which file, `<team>/owners.json`: the first member to change a file (by an
//! edit or write tool) owns it until it leaves the team; another member's change of it is refused
//! naming the owner. Teammates in their own git worktrees never meet: their paths differ.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{TeamError, lock, store};

/// The file owners of the team folder `dir`.
#[derive(Debug, Clone)]
pub struct Owners {
    file: PathBuf,
}

impl Owners {
    /// The owners of the team folder `dir`.
    pub fn new(dir: &Path) -> Owners {
        Owners { file: dir.join("owners.json") }
    }

    /// The owner of `path`, if another member than `member` owns it.
    pub fn other_owner(&self, member: &str, path: &Path) -> Result<Option<String>, TeamError> {
        let owners: BTreeMap<PathBuf, String> = store::read(&self.file)?.unwrap_or_default();
        Ok(owners.get(path).filter(|owner| *owner != member).cloned())
    }

    /// Makes `member` the owner of `paths`; refused (nothing claimed) when another member owns
    /// one of them.
    pub fn claim(&self, member: &str, paths: &[PathBuf]) -> Result<(), TeamError> {
        lock::locked(&self.file.with_extension("lock"), || {
            let mut owners: BTreeMap<PathBuf, String> = store::read(&self.file)?.unwrap_or_default();
            for path in paths {
                if let Some(owner) = owners.get(path).filter(|owner| *owner != member) {
                    return Err(TeamError::Owned { path: path.clone(), owner: owner.clone() });
                }
            }
            for path in paths {
                owners.insert(path.clone(), member.to_string());
            }
            store::write(&self.file, &owners)
        })
    }

    /// Gives up every file `member` owns (it left the team).
    pub fn release(&self, member: &str) -> Result<(), TeamError> {
        lock::locked(&self.file.with_extension("lock"), || {
            let mut owners: BTreeMap<PathBuf, String> = store::read(&self.file)?.unwrap_or_default();
            owners.retain(|_, owner| owner != member);
            store::write(&self.file, &owners)
        })
    }
}

/// `path` with its links resolved (a link to a file is that file): the file itself when it
/// exists, else its folder resolved and its name.
fn resolved(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match (path.parent().and_then(|parent| std::fs::canonicalize(parent).ok()), path.file_name()) {
        (Some(parent), Some(name)) => parent.join(name),
        _ => path.to_path_buf(),
    }
}

/// A file-writing tool of a teammate, wrapped: a call that writes a file another member owns is
/// refused naming the owner; otherwise the member owns the files it writes from then on.
pub struct Owned {
    inner: std::sync::Arc<dyn lathe_tools::DynTool>,
    owners: Owners,
    member: String,
}

impl Owned {
    /// Every tool of `tools`, the ones that declare file writes wrapped for `member` of the team
    /// folder `dir`.
    pub fn wrap_all(
        tools: &lathe_tools::ToolRegistry,
        dir: &Path,
        member: &str,
    ) -> lathe_tools::ToolRegistry {
        tools.map(|inner| {
            std::sync::Arc::new(Owned { inner, owners: Owners::new(dir), member: member.to_string() })
                as std::sync::Arc<dyn lathe_tools::DynTool>
        })
    }

    fn written(&self, args: &serde_json::Value, ctx: &lathe_tools::ToolContext) -> Vec<PathBuf> {
        match self.inner.access(args, ctx) {
            Ok(lathe_tools::Access::Write(paths)) => paths
                .into_iter()
                .map(|path| resolved(&if path.is_absolute() { path } else { ctx.workspace.join(path) }))
                .collect(),
            _ => Vec::new(),
        }
    }

    fn refusal(&self, error: TeamError) -> lathe_tools::ToolError {
        lathe_tools::ToolError::Refused(format!("{}: {error}", self.inner.name()))
    }
}

impl lathe_tools::DynTool for Owned {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn spec(&self) -> lathe_protocol::ToolSpec {
        self.inner.spec()
    }

    fn effect(&self, args: &serde_json::Value) -> lathe_tools::Effect {
        self.inner.effect(args)
    }

    fn summary(&self, args: &serde_json::Value) -> String {
        self.inner.summary(args)
    }

    fn access(
        &self,
        args: &serde_json::Value,
        ctx: &lathe_tools::ToolContext,
    ) -> Result<lathe_tools::Access, lathe_tools::ToolError> {
        self.inner.access(args, ctx)
    }

    fn preview(
        &self,
        args: &serde_json::Value,
        ctx: &lathe_tools::ToolContext,
    ) -> Option<lathe_protocol::ToolPreview> {
        self.inner.preview(args, ctx)
    }

    /// Refused before anyone is asked when another member owns a file the call writes.
    fn precheck(
        &self,
        args: &serde_json::Value,
        ctx: &lathe_tools::ToolContext,
    ) -> Result<(), lathe_tools::ToolError> {
        for path in self.written(args, ctx) {
            if let Some(owner) = self.owners.other_owner(&self.member, &path).map_err(|e| self.refusal(e))? {
                return Err(self.refusal(TeamError::Owned { path, owner }));
            }
        }
        self.inner.precheck(args, ctx)
    }

    fn call<'a>(
        &'a self,
        args: serde_json::Value,
        ctx: &'a lathe_tools::ToolContext,
    ) -> futures::future::BoxFuture<'a, Result<lathe_tools::ToolOutput, lathe_tools::ToolError>> {
        Box::pin(async move {
            let paths = self.written(&args, ctx);
            if !paths.is_empty() {
                self.owners.claim(&self.member, &paths).map_err(|error| self.refusal(error))?;
            }
            self.inner.call(args, ctx).await
        })
    }
}
