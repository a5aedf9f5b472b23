//! Cassette mode: every manifest entry served with its recorded status, headers and exact bytes.

use std::path::PathBuf;

use lathe_mock::{CassetteSet, MockServer, Mode, Protocol};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn cassette_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/cassettes")
}

#[tokio::test]
async fn every_manifest_entry_is_served_byte_for_byte_with_its_status_and_headers() {
    let dir = cassette_dir();
    let manifest: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert!(!manifest.is_empty());
    let server = MockServer::start(Mode::Cassette(CassetteSet::load(&dir).unwrap())).await.unwrap();
    let client = super::http_client();
    for entry in &manifest {
        let file = entry["file"].as_str().unwrap();
        let protocol: Protocol = serde_json::from_value(entry["protocol"].clone()).unwrap();
        let base = format!("{}/cassette/{file}", server.url());
        let url = match protocol {
            Protocol::Anthropic => format!("{base}/v1/messages"),
            Protocol::OpenaiChat => format!("{base}/chat/completions"),
            Protocol::OpenaiResponses => format!("{base}/responses"),
        };
        let resp = client.post(&url).json(&json!({"stream": true})).send().await.unwrap();
        assert_eq!(resp.status().as_u16() as u64, entry["status"].as_u64().unwrap(), "{file}");
        for (name, value) in entry["headers"].as_object().unwrap() {
            assert_eq!(resp.headers()[name.as_str()], value.as_str().unwrap(), "{file}: header {name}");
        }
        let body = resp.bytes().await.unwrap();
        let served = Sha256::digest(&body);
        let recorded = Sha256::digest(std::fs::read(dir.join(file)).unwrap());
        assert_eq!(served, recorded, "{file}: body differs from the recording");
    }
    assert_eq!(server.stats().requests, manifest.len());
}

#[tokio::test]
async fn unknown_cassette_is_a_404_naming_the_file() {
    let server =
        MockServer::start(Mode::Cassette(CassetteSet::load(&cassette_dir()).unwrap())).await.unwrap();
    let resp = super::http_client()
        .post(format!("{}/cassette/anthropic/nope.sse/v1/messages", server.url()))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    assert!(resp.text().await.unwrap().contains("anthropic/nope.sse"));
}

#[test]
fn a_manifest_naming_a_missing_file_fails_to_load_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("manifest.json"),
        r#"[{"file": "anthropic/missing.sse", "protocol": "anthropic", "status": 200, "headers": {}}]"#,
    )
    .unwrap();
    let err = CassetteSet::load(dir.path()).unwrap_err().to_string();
    assert!(err.contains("missing.sse"), "{err}");
}
