//! The workspace's `rust-version` is true: no locked dependency needs a newer compiler. (Lathe's own
//! code is held to it by clippy's `incompatible_msrv` lint, which reads the same field.)

use std::process::Command;

use serde_json::Value;

/// `1.89` and `1.89.0` as the same comparable triple.
fn version(text: &str) -> [u64; 3] {
    let mut parts = text.split('.').map(|part| part.parse().unwrap_or(0));
    [parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0)]
}

/// `cargo metadata` of the whole lock file, every platform's packages included: from the local cache
/// when it holds them all, else fetched from the registry. Fails naming the fix when neither works.
fn metadata() -> Vec<u8> {
    let cargo = std::env::var("CARGO").expect("CARGO is set when tests run under cargo");
    let run = |offline: bool| {
        let mut command = Command::new(&cargo);
        command.args(["metadata", "--format-version", "1", "--locked", "--all-features"]);
        if offline {
            command.arg("--offline");
        }
        command.current_dir(env!("CARGO_MANIFEST_DIR")).output().expect("run cargo metadata")
    };
    let cached = run(true);
    if cached.status.success() {
        return cached.stdout;
    }
    let fetched = run(false);
    assert!(
        fetched.status.success(),
        "cargo metadata needs every package of Cargo.lock, for every platform; they are not all cached \
         and the registry could not supply them. Run `cargo fetch --locked` (scripts/test.sh does) with \
         the registry reachable.\noffline: {}\nonline: {}",
        String::from_utf8_lossy(&cached.stderr),
        String::from_utf8_lossy(&fetched.stderr)
    );
    fetched.stdout
}

#[test]
fn rust_version_covers_every_locked_dependency() {
    let output = metadata();
    let metadata: Value = serde_json::from_slice(&output).expect("metadata JSON");
    let packages = metadata["packages"].as_array().expect("packages");
    let ours = packages.iter().find(|package| package["name"] == "lathe").expect("the lathe package");
    let declared = ours["rust_version"].as_str().expect("lathe declares rust-version");
    let mut newer: Vec<String> = packages
        .iter()
        .filter_map(|package| {
            let needs = package["rust_version"].as_str()?;
            (version(needs) > version(declared))
                .then(|| format!("{} {} needs {needs}", package["name"], package["version"]))
        })
        .collect();
    newer.sort();
    assert!(newer.is_empty(), "rust-version = {declared} in Cargo.toml, but: {}", newer.join(", "));
}
