//! Helpers for the tools' tests: a temporary workspace with its own spill directory.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use serde_json::Value;

use crate::context::ToolContext;
use crate::registry::ToolRegistry;
use crate::tool::{ToolError, ToolOutput};

/// A real 1×1 PNG (70 bytes).
pub const PIXEL_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00,
    0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00,
    0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05,
    0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42,
    0x60, 0x82,
];

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

    /// Replaces (or adds) a tool, e.g. a variant of a built-in one.
    pub fn with_tool(mut self, tool: std::sync::Arc<dyn crate::tool::DynTool>) -> Workspace {
        self.registry.register(tool);
        self
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
