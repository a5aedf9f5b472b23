//! Integration tests of the `lathe` binary: headless mode, permissions end to end, and end-to-end
//! replay of recorded runs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
