//! Integration tests of lathe-policy: decisions over real settings files in temp dirs, bad input,
//! and the OS sandbox on this machine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod suite;
