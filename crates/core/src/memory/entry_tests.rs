#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;
use crate::memory::test_support::meta;

fn full() -> Frontmatter {
    let mut meta = meta("pnpm", "We use pnpm, not npm", MemoryType::Project);
    meta.source = "session 0193 turn 2".to_string();
    meta.last_used = Some("2025-05-30T10:00:00Z".to_string());
    meta.use_count = 3;
    meta.expires = Some("2026-01-01".to_string());
    meta.evidence = vec!["package.json@0123abcd".to_string(), "pnpm-lock.yaml".to_string()];
    meta
}

#[test]
fn render_round_trips_through_parse() {
    for meta in [
        full(),
        meta("a", "plain", MemoryType::User),
        meta("colon: name", "has: a colon # and a hash", MemoryType::Feedback),
        meta("quote's", "\"double\" and 'single' quotes", MemoryType::Reference),
        meta("true", "123", MemoryType::Project),
        meta("- dash", "[brackets] {braces}", MemoryType::Project),
        meta("ünïcode", "café — naïve", MemoryType::User),
    ] {
        let text = render(&meta, "\n\nBody line 1\n\nline 3\n\n");
        let (back, body) = parse(&text).unwrap();
        assert_eq!(back, meta, "{text}");
        assert_eq!(body, "Body line 1\n\nline 3");
        assert_eq!(render(&back, &body), text);
    }
}

#[test]
fn line_parser_agrees_with_yaml() {
    for meta in
        [full(), meta("a", "plain text here", MemoryType::User), meta("x", "it's", MemoryType::Feedback)]
    {
        let text = render(&meta, "b");
        let (yaml, _) = split(&text).unwrap();
        let flat = parse_flat(yaml).expect("the rendered form is flat");
        assert_eq!(flat, parse_yaml(yaml).unwrap());
    }
}

#[test]
fn optional_fields_are_skipped_and_defaulted() {
    let meta = meta("a", "b", MemoryType::User);
    let text = render(&meta, "x");
    assert!(!text.contains("last_used") && !text.contains("expires") && !text.contains("evidence"), "{text}");
    assert!(text.contains("type: user\n"), "{text}");
    let (parsed, _) = parse("---\nname: n\ndescription: d\ntype: reference\n---\nbody").unwrap();
    assert_eq!(parsed.kind, MemoryType::Reference);
    assert_eq!((parsed.use_count, parsed.source.as_str(), parsed.evidence.len()), (0, "", 0));
}

#[test]
fn broken_frontmatter_says_what_is_wrong() {
    assert!(parse("no frontmatter").unwrap_err().contains("no YAML frontmatter"));
    assert!(parse("---\nname: a\n").unwrap_err().contains("no closing"));
    assert!(parse("---").unwrap_err().contains("no closing"));
    let error = parse("---\nname: [unclosed\n---\nbody").unwrap_err();
    assert!(error.contains("invalid YAML"), "{error}");
    let error = parse("---\nname: a\ndescription: b\ntype: other\n---\nbody").unwrap_err();
    assert!(error.contains("invalid YAML"), "{error}");
}

#[test]
fn ids_and_virtual_paths_drop_md() {
    let entry = Entry {
        scope: Scope::Project,
        file: "pnpm.md".to_string(),
        path: PathBuf::from("/x/pnpm.md"),
        meta: meta("pnpm", "d", MemoryType::Project),
        body: String::new(),
        warning: None,
    };
    assert_eq!(entry.id(), "project/pnpm");
    assert_eq!(entry.virtual_path(), "/memories/project/pnpm.md");
    let nested = Entry { scope: Scope::User, file: "feedback/tone.md".to_string(), ..entry };
    assert_eq!(nested.id(), "user/feedback/tone");
}

#[test]
fn memory_types_parse_and_serialise_lowercase() {
    for kind in [MemoryType::User, MemoryType::Feedback, MemoryType::Project, MemoryType::Reference] {
        assert_eq!(kind.as_str().parse::<MemoryType>().unwrap(), kind);
        assert_eq!(serde_json::to_value(kind).unwrap(), serde_json::json!(kind.as_str()));
    }
    assert!("People".parse::<MemoryType>().unwrap_err().contains("user, feedback, project or reference"));
}

#[test]
fn fallback_takes_the_stem_and_first_line() {
    let long = "x".repeat(300);
    let meta = Frontmatter::fallback(Scope::Project, "dir/notes.md", &format!("\n\n# {long}\nmore"));
    assert_eq!(meta.name, "notes");
    assert_eq!(meta.description.chars().count(), MAX_DERIVED_DESCRIPTION_CHARS);
    assert_eq!(meta.kind, MemoryType::Project);
    assert_eq!(Frontmatter::fallback(Scope::User, "a.md", "b").kind, MemoryType::User);
}
