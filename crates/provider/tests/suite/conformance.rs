//! Every entry of `shared/cassettes/manifest.json` decodes to its `expected` meaning — over real
//! HTTP (lathe-mock in cassette mode serves the recorded status, headers and bytes) and from the
//! bytes directly. New manifest entries are picked up without code changes.

use futures::StreamExt;
use lathe_mock::{CassetteSet, MockServer, Mode};
use lathe_provider::{ProviderConfig, build_provider, decode_bytes};
use tokio_util::sync::CancellationToken;

use super::support::{
    cassette_dir, hello_request, manifest, mismatches, no_retries, outcome, terminal_problems,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_cassette_decodes_over_http_to_its_expected_meaning() {
    let entries = manifest();
    let set = CassetteSet::load(&cassette_dir()).unwrap();
    let server = MockServer::start(Mode::Cassette(set)).await.unwrap();
    let mut failures = Vec::new();
    for entry in &entries {
        let protocol = entry.protocol();
        let config = ProviderConfig {
            protocol,
            base_url: Some(format!("{}/cassette/{}", server.url(), entry.file)),
            model: "cassette-model".into(),
            retry: no_retries(),
            ..ProviderConfig::default()
        };
        let provider = build_provider(&config).unwrap();
        let events: Vec<_> = provider.stream(&hello_request(), CancellationToken::new()).collect().await;
        let mut problems = mismatches(&entry.expected, &outcome(protocol, &events));
        problems.extend(terminal_problems(&events));
        if !problems.is_empty() {
            failures.push(format!("{} ({}):\n    {}", entry.file, entry.protocol, problems.join("\n    ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cassettes decoded differently over HTTP:\n{}",
        failures.len(),
        entries.len(),
        failures.join("\n")
    );
    let requests = server.requests();
    assert_eq!(requests.len(), entries.len(), "one request per cassette, no retries");
    for (request, entry) in requests.iter().zip(&entries) {
        assert_eq!(request.status, entry.status, "{}: the mock served the recorded status", entry.file);
        assert_eq!(
            request.body["stream"],
            serde_json::json!(true),
            "{}: streaming was requested",
            entry.file
        );
    }
}

#[test]
fn every_cassette_decodes_from_bytes_to_its_expected_meaning() {
    let entries = manifest();
    let mut failures = Vec::new();
    for entry in &entries {
        let events = decode_bytes(entry.protocol(), entry.status, &entry.body());
        let mut problems = mismatches(&entry.expected, &outcome(entry.protocol(), &events));
        problems.extend(terminal_problems(&events));
        if !problems.is_empty() {
            failures.push(format!("{} ({}):\n    {}", entry.file, entry.protocol, problems.join("\n    ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cassettes:\n{}",
        failures.len(),
        entries.len(),
        failures.join("\n")
    );
}
