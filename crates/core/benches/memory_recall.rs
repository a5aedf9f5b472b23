//! Memory recall over 1 000 entries (FEATURES.md §N: ≤ 2 ms per user turn): loads a generated user
//! scope through `SessionMemory::open` (the start-up cost) and times `recall` for a set of prompts,
//! some on a stored topic and some on none. Prints medians and p99 in microseconds. The start is
//! timed with the cache of parsed entries and clean lines the first open writes (as on every start
//! but the first after the memory changed).
//!
//! Run with `cargo bench -p lathe-core --bench memory_recall` (bench/memory.py runs it beside the
//! end-to-end start-up figure).

#![allow(clippy::expect_used)] // a benchmark: a failed set-up step ends it with its reason

use std::time::Instant;

use lathe_core::memory::session::{MemoryMode, SessionMemory};

const TOPICS: &[&str] = &[
    "pnpm",
    "pytest",
    "docker",
    "postgres",
    "rustfmt",
    "release",
    "eslint",
    "webpack",
    "migrations",
    "logging",
    "redis",
    "graphql",
    "terraform",
    "kubernetes",
    "tailwind",
    "storybook",
    "sentry",
    "grafana",
    "kafka",
    "nginx",
];

fn entry(n: usize) -> String {
    let topic = TOPICS[n % TOPICS.len()];
    let other = TOPICS[(n * 7 + 3) % TOPICS.len()];
    // Real notes name tokens, keys and passing tests now and then (words the secret rules look for).
    let token = if n.is_multiple_of(8) { "; its deploy token comes from the vault" } else { "" };
    format!(
        "---\nname: note-{n}\ndescription: How we use {topic} in service {n}{token}\ntype: project\nsource: user\n\
         created: 2026-01-01T00:00:00Z\nmodified: 2026-01-01T00:00:00Z\nuse_count: {uses}\n---\n\
         Service {n} configures {topic} through its own settings file; when it talks to {other}, keep the \
         timeout at {timeout} seconds and log every retry. Ask the platform team before changing it.{key}\n",
        key = if n.is_multiple_of(5) {
            " Its tests pass only with the API key of the staging account."
        } else {
            ""
        },
        uses = n % 5,
        timeout = n % 60,
    )
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn main() {
    let count: usize = std::env::var("ENTRIES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let workspace = tmp.path().join("ws");
    let memory = home.join("memory");
    std::fs::create_dir_all(&memory).expect("memory dir");
    std::fs::create_dir_all(&workspace).expect("ws");
    for n in 0..count {
        std::fs::write(memory.join(format!("note-{n}.md")), entry(n)).expect("entry");
    }
    // Files changed in the last 2 s are never recorded in the cache of parsed entries.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let mut opens = Vec::new();
    let mut session = None;
    for _ in 0..20 {
        let started = Instant::now();
        let (opened, warnings) = SessionMemory::open(&home, &workspace, MemoryMode::ReadOnly, "bench");
        let index = opened.as_ref().map(|memory| memory.index_context()).unwrap_or_default();
        // The first recall waits for the recall index when it is built on its own thread.
        let first = opened.as_ref().and_then(|memory| memory.recall("how do we configure pnpm?", 1));
        opens.push(started.elapsed().as_secs_f64() * 1e6);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(!index.is_empty());
        assert!(first.is_some(), "the first prompt recalls entries");
        session = opened;
    }
    let session = session.expect("memory on");
    let roots = lathe_core::memory::Roots::for_workspace(&home, &workspace);
    let cache = home.join("cache");
    let (mut loads, mut cached, mut builds) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..20 {
        let started = Instant::now();
        let _ = lathe_core::memory::store::load_cached(&roots, Some(&cache));
        cached.push(started.elapsed().as_secs_f64() * 1e6);
        let started = Instant::now();
        let loaded = lathe_core::memory::store::load(&roots);
        loads.push(started.elapsed().as_secs_f64() * 1e6);
        let started = Instant::now();
        let _ = lathe_core::memory::recall::RecallIndex::build(&loaded.entries);
        builds.push(started.elapsed().as_secs_f64() * 1e6);
    }
    loads.sort_by(f64::total_cmp);
    cached.sort_by(f64::total_cmp);
    builds.sort_by(f64::total_cmp);
    let prompts: Vec<String> = (0..200)
        .map(|n| match n % 4 {
            0 => format!("the {} timeout in service {n} is wrong, fix it", TOPICS[n % TOPICS.len()]),
            1 => format!("add a {} check to the CI", TOPICS[(n * 3) % TOPICS.len()]),
            2 => "rename the button label on the settings page".to_string(),
            _ => format!("why does the retry logging of {} fail?", TOPICS[(n * 5) % TOPICS.len()]),
        })
        .collect();
    let mut times = Vec::new();
    let mut given = 0;
    for round in 0..5 {
        for (turn, prompt) in prompts.iter().enumerate() {
            let started = Instant::now();
            let recalled = session.recall(prompt, turn as u32 + 1);
            let elapsed = started.elapsed().as_secs_f64() * 1e6;
            if round > 0 {
                times.push(elapsed);
                given += recalled.map(|(_, record)| record.entries.len()).unwrap_or(0);
            }
        }
    }
    times.sort_by(f64::total_cmp);
    opens.sort_by(f64::total_cmp);
    println!("memory recall over {count} entries ({} prompts x 4 rounds)", prompts.len());
    println!(
        "  recall per user turn (us)   median {:8.1}  p90 {:8.1}  p99 {:8.1}  max {:8.1}  ({} entries given in all)",
        percentile(&times, 0.5),
        percentile(&times, 0.9),
        percentile(&times, 0.99),
        times[times.len() - 1],
        given
    );
    println!(
        "  start: open, index text, first recall (us) median {:8.1}  p90 {:8.1}  max {:8.1}",
        percentile(&opens, 0.5),
        percentile(&opens, 0.9),
        opens[opens.len() - 1]
    );
    println!(
        "    of which load (us)        median {:8.1} (reading every file: {:8.1}); recall index build (us) \
         median {:8.1}",
        percentile(&cached, 0.5),
        percentile(&loads, 0.5),
        percentile(&builds, 0.5)
    );
}
