//! `lathe-mock` binary (command line in a later commit).
fn main() {}
