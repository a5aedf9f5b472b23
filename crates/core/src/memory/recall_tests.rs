#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use pretty_assertions::assert_eq;

use super::*;
use crate::memory::test_support::{meta, now};
use crate::memory::{MemoryType, Scope};

fn entry(file: &str, name: &str, description: &str, body: &str) -> Entry {
    Entry {
        scope: Scope::Project,
        file: format!("{file}.md"),
        path: PathBuf::from(format!("/m/{file}.md")),
        meta: meta(name, description, MemoryType::Project),
        body: body.to_string(),
        warning: None,
    }
}

fn fixture() -> Vec<Entry> {
    vec![
        entry("pnpm", "pnpm", "Package manager", "We use pnpm, not npm, for dependencies."),
        entry("tests", "tests", "How to run tests", "Run cargo test -p lathe-core before pushing."),
        entry("style", "style", "Code style", "Modules stay under 500 lines; tests go in sibling files."),
        entry("deploy", "deploy", "Deployment", "Deploys go through the release workflow on tags."),
    ]
}

fn ids(entries: &[Entry], hits: &[Hit]) -> Vec<String> {
    hits.iter().map(|hit| entries[hit.index].id()).collect()
}

#[test]
fn a_dependency_question_finds_the_pnpm_memory() {
    let entries = fixture();
    let index = RecallIndex::build(&entries);
    for query in
        ["how do I add dependencies?", "add a dependency", "which package manager", "install packages"]
    {
        let hits = index.rank(&entries, query, now());
        assert_eq!(ids(&entries, &hits).first().map(String::as_str), Some("project/pnpm"), "{query}");
    }
    let hits = index.rank(&entries, "add a dependency", now());
    assert_eq!(hits[0].terms[0], "dependency");
    assert!(hits[0].terms.iter().skip(1).all(|term| term.starts_with("dependency~")), "{:?}", hits[0].terms);
}

#[test]
fn an_unrelated_query_returns_nothing() {
    let entries = fixture();
    let index = RecallIndex::build(&entries);
    assert_eq!(index.rank(&entries, "rename the button label", now()), Vec::<Hit>::new());
    assert_eq!(index.rank(&entries, "the and of is", now()), Vec::<Hit>::new(), "stop words only");
    assert_eq!(index.rank(&entries, "", now()), Vec::<Hit>::new());
}

#[test]
fn expired_entries_are_never_returned() {
    let mut entries = fixture();
    entries[0].meta.expires = Some("2025-05-31".to_string());
    entries[1].meta.expires = Some("2025-07-01T00:00:00Z".to_string());
    let index = RecallIndex::build(&entries);
    let hits = ids(&entries, &index.rank(&entries, "pnpm dependencies", now()));
    assert!(!hits.contains(&entries[0].id()), "{hits:?}");
    assert_eq!(
        ids(&entries, &index.rank(&entries, "cargo", now())).first().map(String::as_str),
        Some("project/tests")
    );
}

#[test]
fn use_and_recency_boost_and_ties_go_to_the_smaller_id() {
    let mut entries = vec![
        entry("b", "b", "note", "cache the build"),
        entry("a", "a", "note", "cache the build"),
        entry("c", "c", "note", "cache the build"),
    ];
    let index = RecallIndex::build(&entries);
    assert_eq!(ids(&entries, &index.rank(&entries, "cache", now())), ["project/a", "project/b", "project/c"]);
    entries[2].meta.use_count = 10;
    assert_eq!(ids(&entries, &index.rank(&entries, "cache", now()))[0], "project/c");
    entries[0].meta.last_used = Some("2025-06-01T11:00:00Z".to_string());
    // Used an hour ago: ×1.2 (recency), below c's ×1.24 (ln 11 uses), above a's ×1.
    assert_eq!(ids(&entries, &index.rank(&entries, "cache", now())), ["project/c", "project/b", "project/a"]);
}

#[test]
fn name_and_description_weigh_more_than_the_body() {
    let entries = vec![
        entry("one", "one", "note", "about docker compose and other things"),
        entry("two", "docker", "docker setup", "about compose and other things"),
    ];
    let index = RecallIndex::build(&entries);
    assert_eq!(ids(&entries, &index.rank(&entries, "docker", now())), ["project/two", "project/one"]);
}

#[test]
fn at_most_five_hits_from_a_thousand_entries() {
    let topics = ["cargo", "pnpm", "docker", "postgres", "kubernetes", "terraform", "react", "python"];
    let entries: Vec<Entry> = (0..1000)
        .map(|i| {
            let topic = topics[i % topics.len()];
            let body = format!(
                "Entry {i}: notes about {topic} in service{i}. Remember the {topic} settings and check the \
                 logs before restarting anything; {} marker{i}",
                "filler words here ".repeat(10)
            );
            entry(&format!("e{i:04}"), &format!("{topic}-{i}"), &format!("{topic} notes {i}"), &body)
        })
        .collect();
    let index = RecallIndex::build(&entries);
    let hits = index.rank(&entries, "docker", now());
    assert_eq!(hits.len(), MAX_RECALL_ENTRIES);
    assert!(hits.iter().all(|hit| entries[hit.index].body.contains("docker")));
    assert!(hits.windows(2).all(|pair| pair[0].score >= pair[1].score));
    let hits = index.rank(&entries, "what about marker737", now());
    assert_eq!(ids(&entries, &hits), ["project/e0737"]);
    assert!(index.rank(&entries, "rename the button label", now()).is_empty());
    let again = index.rank(&entries, "docker", now());
    assert_eq!(index.rank(&entries, "docker", now()), again, "deterministic");
}

#[test]
fn attach_renders_headers_stale_marks_and_caps() {
    let mut entries = fixture();
    entries[0].meta.source = "session 0193 turn 2".to_string();
    let hits = vec![
        Hit { index: 0, score: 2.0, terms: vec!["pnpm".into()] },
        Hit { index: 1, score: 1.0, terms: vec!["tests".into()] },
    ];
    let block =
        attach(
            &entries,
            &hits,
            |entry| if entry.file == "pnpm.md" { vec!["package.json".into()] } else { vec![] },
        );
    assert!(block.starts_with("<memory-recall>\n"), "{block}");
    assert!(block.ends_with("</memory-recall>\n"), "{block}");
    assert!(
        block.contains(
            "## project/pnpm (project; source: session 0193 turn 2) — possibly stale (package.json changed)\n\
             We use pnpm, not npm, for dependencies.\n"
        ),
        "{block}"
    );
    assert!(block.contains("## project/tests (project; source: user)\n"), "{block}");
    assert_eq!(attach(&entries, &[], |_| vec![]), "");

    let big: Vec<Entry> =
        (0..5).map(|i| entry(&format!("big{i}"), "big", "big", &"é".repeat(5000))).collect();
    let hits: Vec<Hit> = (0..5).map(|index| Hit { index, score: 1.0, terms: vec![] }).collect();
    let block = attach(&big, &hits, |_| vec![]);
    assert!(block.len() <= MAX_RECALL_BYTES, "{}", block.len());
    assert_eq!(block.matches("## project/big").count(), 2, "later hits dropped");
    assert!(block.contains("[… cut; view /memories/project/big0.md for the rest]"));
}

#[test]
fn stems_join_singular_and_plural() {
    for (a, b) in [
        ("dependencies", "dependency"),
        ("packages", "package"),
        ("boxes", "box"),
        ("renamed", "rename"),
        ("building", "build"),
        ("keys", "key"),
        ("caches", "cache"),
    ] {
        assert_eq!(stem(a), stem(b), "{a} / {b}");
    }
    assert_eq!(stem("use"), "use");
    assert_eq!(stem("pnpm"), "pnpm");
    assert!(STOP_WORDS.windows(2).all(|pair| pair[0] < pair[1]), "sorted, each once");
}

#[test]
fn a_topic_word_finds_an_entry_without_the_word_at_a_lower_score() {
    let entries = fixture();
    let index = RecallIndex::build(&entries);
    let direct = index.rank(&entries, "use pnpm", now());
    let topic = index.rank(&entries, "install the requirements", now());
    assert_eq!(ids(&entries, &topic).first().map(String::as_str), Some("project/pnpm"));
    assert!(topic[0].terms.iter().all(|term| term.contains('~')), "{:?}", topic[0].terms);
    assert!(topic[0].score < direct[0].score);
}
