//! Integration tests of the `lathe` binary: headless mode and end-to-end replay of recorded runs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
