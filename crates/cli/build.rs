//! Link options of the `lathe` binary.
//!
//! On Linux with glibc 2.36 or newer (the C library the binary is built against and runs with) the
//! binary's relative relocations are packed (`-z pack-relative-relocs`, DT_RELR): the table the
//! dynamic loader reads at every start shrinks from about 1.1 MB (47 000 entries of 24 bytes) to a
//! few kilobytes, which is less to map and read before `main` and less resident memory. An
//! optimised x86-64 build also places the code a typical run executes together
//! ([`hot_code_first`]). Nothing else changes; cross builds and other platforms link as before.

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
    hot_code_first(&target);
}

/// In an optimised build for x86-64 Linux linked by rustc's own LLD (the default from Rust 1.90
/// on, unless a linker is configured), the functions a typical run executes are placed together at
/// the start of `.text` (`--symbol-ordering-file`: one symbol per line, hottest first, written by
/// `bench/hot_symbols.py` from callgrind runs of the benchmark scenarios). The kernel maps code
/// in 64 KB windows around each page a run touches; with the 3.4 MB that runs spread over 13 MB of
/// code, most of the binary became resident (8.6 MB); packed together, only those windows do.
/// Symbols the file names that a build lacks (other features, changed code) are skipped: a stale
/// list costs memory, never correctness.
fn hot_code_first(target: &str) {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let path = std::path::Path::new(&dir).join("hot-symbols.txt");
    println!("cargo:rerun-if-changed={}", path.display());
    let optimised = std::env::var("PROFILE").is_ok_and(|profile| profile == "release");
    let own_linker = std::env::var_os("RUSTC_LINKER").is_none()
        && !std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default().contains("link")
        && rustc_minor().is_some_and(|minor| minor >= 90);
    if optimised && own_linker && target == "x86_64-unknown-linux-gnu" && path.exists() {
        println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}", path.display());
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// The minor version of the compiler building this crate (`rustc 1.95.0 (…)` → 95).
fn rustc_minor() -> Option<u32> {
    let rustc = std::env::var_os("RUSTC")?;
    let output = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace().nth(1)?.split('.').nth(1)?.parse().ok()
}

/// The host's glibc version from the first line of `ldd --version` (`ldd (GNU libc) 2.36`).
fn glibc_version() -> Option<(u32, u32)> {
    let output = Command::new("ldd").arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let version = text.lines().next()?.split_whitespace().last()?;
    let (major, minor) = version.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}
