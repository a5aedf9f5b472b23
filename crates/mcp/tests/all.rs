//! Integration tests of lathe-mcp against real MCP servers (see scripts/install-test-deps.sh).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
