//! The workspace's `rust-version` is true: no locked dependency needs a newer compiler. (Lathe's own
//! code is held to it by clippy's `incompatible_msrv` lint, which reads the same field.)

use std::process::Command;

use serde_json::Value;

/// `1.89` and `1.89.0` as the same comparable triple.
fn version(text: &str) -> [u64; 3] {
    let mut parts = text.split('.').map(|part| part.parse().unwrap_or(0));
    [parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0)]
}

#[test]
fn rust_version_covers_every_locked_dependency() {
    let cargo = std::env::var("CARGO").expect("CARGO is set when tests run under cargo");
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline", "--all-features"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo metadata");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("metadata JSON");
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
