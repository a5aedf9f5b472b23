//! Helpers for the tools' tests: a temporary workspace with its own spill directory.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use serde_json::Value;

use crate::context::ToolContext;
use crate::registry::ToolRegistry;
use crate::tool::{ToolError, ToolOutput};

/// A temp-dir workspace and a context pointing at it (spills go to a sibling temp dir).
pub struct Workspace {
    /// Kept so the directory lives as long as the workspace.
    _dir: tempfile::TempDir,
    pub spill: tempfile::TempDir,
    pub ctx: ToolContext,
    registry: ToolRegistry,
}

impl Workspace {
    pub fn new() -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let spill = tempfile::tempdir().unwrap();
        let mut ctx = ToolContext::new(dir.path().canonicalize().unwrap());
        ctx.spill_dir = spill.path().to_path_buf();
        Workspace { _dir: dir, spill, ctx, registry: ToolRegistry::builtin() }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.ctx.workspace.join(rel)
    }

    pub fn put(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, bytes).unwrap();
    }

    pub fn bytes(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.path(rel)).unwrap()
    }

    pub async fn call(&self, tool: &str, args: Value) -> Result<ToolOutput, ToolError> {
        self.registry.get(tool).unwrap().call(args, &self.ctx).await
    }

    /// Calls and expects `Ok`; returns the text.
    pub async fn ok(&self, tool: &str, args: Value) -> String {
        match self.call(tool, args).await {
            Ok(out) => out.text_content(),
            Err(e) => panic!("{tool} failed: {e}"),
        }
    }

    /// Calls and expects `Err(Failed)`; returns the message.
    pub async fn fails(&self, tool: &str, args: Value) -> String {
        match self.call(tool, args).await {
            Ok(out) => panic!("{tool} unexpectedly succeeded: {}", out.text_content()),
            Err(ToolError::Failed(message)) => message,
            Err(other) => panic!("{tool}: expected Failed, got {other:?}"),
        }
    }
}
