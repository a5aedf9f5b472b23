#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

fn kinds(text: &str) -> Vec<&'static str> {
    find_secrets(text).into_iter().map(|hit| hit.kind).collect()
}

#[test]
fn value_shaped_secrets_are_found() {
    let ghp = format!("ghp_{}", "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6");
    let table: Vec<(String, &str)> = vec![
        ("the key is AKIAIOSFODNN7EXAMPLE".into(), "aws-access-key"),
        ("ASIAY34FZKBOKMUTVV7A for the role".into(), "aws-access-key"),
        (format!("token {ghp}"), "github-token"),
        (format!("gho_{}", "a".repeat(18) + &"1".repeat(18)), "github-token"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz".into(), "github-token"),
        ("OPENAI_KEY sk-proj-Abc123Def456Ghi789Jkl012Mno345".into(), "api-key"),
        ("sk-ant-api03-abcDEF123456ghiJKL789mnoPQR".into(), "api-key"),
        ("sk-1234567890abcdefghijABCDEFGHIJ".into(), "api-key"),
        ("slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx".into(), "slack-token"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----".into(), "private-key"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA".into(), "private-key"),
        (
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
                .into(),
            "jwt",
        ),
        ("curl -H 'Authorization: Bearer abcdef0123456789ABCDEFxyz'".into(), "bearer-token"),
        ("password=hunter2!".into(), "credential"),
        ("DB_PASSWORD=s3cr3t-Pa55".into(), "credential"),
        ("passwd: 'c0rrect-horse'".into(), "credential"),
        ("\"api_key\": \"12ab34cd56ef\"".into(), "credential"),
        ("secret = \"Tr0ub4dor&3\"".into(), "credential"),
        ("https://example.com/cb?token=abc123xyz789".into(), "credential"),
        ("API-KEY: zq8Xk2Lm9".into(), "credential"),
        ("export X=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbA==".into(), "high-entropy-token"),
        ("value aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6kL9".into(), "high-entropy-token"),
        // After `_`, which `\b` does not treat as a boundary.
        ("AWS_KEY_AKIAIOSFODNN7EXAMPLE".into(), "aws-access-key"),
        (format!("TOKEN_{ghp}"), "github-token"),
        ("the AWS secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(), "high-entropy-token"),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(), "credential"),
        ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc".into(), "api-key"),
        ("STRIPE_KEY=rk_test_51H8sdfLkj23SDFlkj".into(), "api-key"),
        ("gitlab glpat-xYz12AbCdEfGhIjKlMnOp".into(), "gitlab-token"),
        ("DATABASE_URL=postgres://admin:hunter2@db.internal:5432/app".into(), "credential"),
        ("connect with postgres://user:pass@localhost/db".into(), "credential"),
        ("redis://:s3cret@cache:6379".into(), "credential"),
        ("db_pass: Tr0ub4dor".into(), "credential"),
        ("DB_PASSWORD_PROD=s3cr3t-Pa55".into(), "credential"),
        ("PGPASSWORD=s3cr3t-Pa55 psql".into(), "credential"),
        ("the db password is hunter2".into(), "credential"),
        ("The staging password is `c0rrect-horse`.".into(), "credential"),
        ("the api key is 'q8Xk2Lm9Zt'".into(), "credential"),
        ("client_secret: \"9f8e7d6c5b4a\"".into(), "credential"),
        ("password: \"correct horse battery staple\"".into(), "credential"),
        ("{\"db\": {\"password\": \"my dog rex 1999\"}}".into(), "credential"),
        ("password=CorrectHorseBatteryStaple".into(), "credential"),
        ("the password for prod is hunter2".into(), "credential"),
        ("curl -u admin:S3cr3tP4ss! https://example.com".into(), "credential"),
        ("mysql -u root -pS3cr3tP4ss42 app".into(), "credential"),
        ("./deploy --password S3cr3tP4ss42".into(), "credential"),
        ("sshpass -p 'Tr0ub4dor&3' ssh prod".into(), "credential"),
        ("Authorization: Basic YWRtaW46aHVudGVyMg==".into(), "basic-auth"),
        ("QUtJQUlPU0ZPRE5ON0VYQU1QTEU=".into(), "aws-access-key"),
        ("-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----".into(), "private-key"),
    ];
    for (text, kind) in &table {
        assert_eq!(kinds(text), vec![*kind], "{text}");
    }
}

#[test]
fn ordinary_text_is_not_flagged() {
    let table = [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
        "3F786850E387550FDAB836ED7E6DC881DE23001B",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "session 0193f2a4-7c1e-7b2a-9d3e-5f6a7b8c9d0e turn 2",
        "crates/core/src/memory/command_tests.rs and /home/user/projects/lathe/target/x86_64-unknown-linux-gnu",
        "cargo test --workspace --all-features -- --test-threads=1",
        "We use pnpm, not npm, for dependencies.",
        "the password is in the vault",
        "password: see the 1Password item `deploy`",
        "password=<redacted>",
        "password=${PASSWORD}",
        "password = $DB_PASSWORD",
        "api_key: ${{ secrets.API_KEY }}",
        "token=***",
        "token: xxxxxxxx",
        "password: [REDACTED:credential]",
        "let password = std::env::var(\"PASSWORD\")?;",
        "struct Login { password: String, token: Option<String> }",
        "fn check(password: &str) -> bool { password.len() > 8 }",
        "let token = next_token(); max_tokens=4096; token_limit: 128000",
        "secret_file = /run/secrets/db",
        "secret: env.DEPLOY_SECRET",
        "Bearer authentication_is_described_in_the_rfc",
        "https://docs.rs/regex/latest/regex/struct.Regex.html#method.captures_iter",
        "https://github.com/lathe-dev/lathe/pull/123/files?diff=split",
        "risk-assessment-of-the-deployment-pipeline-is-done",
        "impl<'a> Iterator for Tokens<'a> { type Item = &'a str; }",
        "ThisIsAVeryLongCamelCaseIdentifierWithoutDigits",
        "averyveryveryverylongidentifier_with_some_words_2",
        "the password is stored in the vault",
        "the token is 4096 long",
        "postgres://$PGUSER:$PGPASSWORD@localhost/db",
        "https://user@example.com/path and git@github.com:org/repo.git",
        "bypass: 3, compass = north, passes: 12",
        "password_hint: 'the name of the first pet'",
        "tokens: 4096",
        "ASIAN markets and EURASIA are words",
        "password: Option<String>",
        "the password field is required",
        "basic auth is described here",
        "cargo test --pass-through",
        "mysql -u root -p app (it asks for the password)",
    ];
    for text in table {
        assert_eq!(kinds(text), Vec::<&str>::new(), "{text}");
    }
}

#[test]
fn invisible_characters_inside_a_secret_do_not_hide_it() {
    for text in ["token ghp_aB3dE5fG7hJ9\u{200b}kL1mN3pQ5rS7tU9vW1xY3zA5", "AKIAIOSF\u{200d}ODNN7EXAMPLE x"] {
        let (redacted, kinds) = redact(text);
        assert_eq!(kinds.len(), 1, "{text:?}");
        assert!(!redacted.contains("ODNN7") && !redacted.contains("kL1mN3"), "{redacted:?}");
    }
    let text = "a\u{00ad}b password=hunter2!\u{200b}x end";
    let (redacted, _) = redact(text);
    assert_eq!(redacted, "a\u{00ad}b password=[REDACTED:credential] end");
}

#[test]
fn hex_has_too_little_entropy() {
    assert!(entropy_bits("3f786850e387550fdab836ed7e6dc881de23001b") <= 4.0);
    assert!(entropy_bits("aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6kL9") >= 4.0);
}

#[test]
fn redact_replaces_each_hit_and_reports_kinds_once() {
    let text = "keys AKIAIOSFODNN7EXAMPLE and AKIAIOSFODNN7EXAMPLF, password=hunter2!; done";
    let (redacted, found) = redact(text);
    assert_eq!(
        redacted,
        "keys [REDACTED:aws-access-key] and [REDACTED:aws-access-key], password=[REDACTED:credential]; done"
    );
    assert_eq!(found, vec!["aws-access-key", "credential"]);
    assert_eq!(redact("nothing here"), ("nothing here".to_string(), Vec::new()));
    assert!(find_secrets(&redacted).is_empty(), "redacted text is clean");
}

#[test]
fn redact_value_walks_json() {
    let mut value = serde_json::json!({
        "command": "curl -H 'Authorization: Bearer abcdef0123456789ABCDEFxyz'",
        "nested": [{"key": "AKIAIOSFODNN7EXAMPLE"}, 3, null, true],
        "plain": "hello",
    });
    let found = redact_value(&mut value);
    assert_eq!(found, vec!["bearer-token", "aws-access-key"]);
    assert_eq!(value["nested"][0]["key"], "[REDACTED:aws-access-key]");
    assert_eq!(value["command"], "curl -H 'Authorization: Bearer [REDACTED:bearer-token]'");
    assert_eq!(value["plain"], "hello");
}

#[test]
fn hits_do_not_overlap_and_come_in_order() {
    let text = "token=ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6 then AKIAIOSFODNN7EXAMPLE";
    let hits = find_secrets(text);
    assert_eq!(hits.iter().map(|hit| hit.kind).collect::<Vec<_>>(), ["github-token", "aws-access-key"]);
    assert!(hits[0].end <= hits[1].start);
    assert_eq!(&text[hits[0].start..hits[0].end], "ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6");
}

#[test]
fn a_rule_runs_on_the_case_forms_its_pattern_matches() {
    // `(?i)` folds the Kelvin sign to `k` and the long s to `s`: so does the word check that
    // decides whether a rule runs.
    assert_eq!(kinds("API_\u{212a}EY=Zq8rT2kL9pXw4vB7"), ["credential"]);
    assert_eq!(kinds("pa\u{17f}\u{17f}word=Zq8rT2kL9pXw4vB7"), ["credential"]);
    assert_eq!(kinds("DB_PASSWORD: Zq8rT2kL9pXw4vB7"), ["credential"]);
}

#[test]
fn every_rule_compiles_and_names_its_words_in_lowercase() {
    for (at, spec) in SPECS.iter().enumerate() {
        assert!(regex(at).is_some(), "{} does not compile", spec.pattern);
        assert!(!spec.words.is_empty());
        for word in spec.words {
            assert_eq!(*word, word.to_lowercase(), "{word}");
        }
    }
}
