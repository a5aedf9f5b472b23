//! Integration tests of lathe-core against lathe-mock over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
