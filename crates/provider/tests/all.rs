//! Integration tests of lathe-provider: cassette conformance over real HTTP (lathe-mock), request
//! encoding snapshots, retries against scripted failures, byte-split robustness and bad input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
