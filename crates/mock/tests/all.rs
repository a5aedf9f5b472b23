//! Integration tests of `lathe-mock` over real HTTP on loopback.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
