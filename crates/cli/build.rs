//! Link options of the `lathe` binary.
//!
//! On Linux with glibc 2.36 or newer (the C library the binary is built against and runs with) the
//! binary's relative relocations are packed (`-z pack-relative-relocs`, DT_RELR): the table the
//! dynamic loader reads at every start shrinks from about 1.1 MB (47 000 entries of 24 bytes) to a
//! few kilobytes, which is less to map and read before `main` and less resident memory. Nothing
//! else changes; cross builds and other platforms link as before.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    if target != host || !target.ends_with("-linux-gnu") {
        return;
    }
    if glibc_version().is_some_and(|version| version >= (2, 36)) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// The host's glibc version from the first line of `ldd --version` (`ldd (GNU libc) 2.36`).
fn glibc_version() -> Option<(u32, u32)> {
    let output = Command::new("ldd").arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let version = text.lines().next()?.split_whitespace().last()?;
    let (major, minor) = version.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}
