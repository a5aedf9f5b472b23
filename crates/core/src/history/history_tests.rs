#![allow(clippy::unwrap_used, clippy::expect_used)]

use lathe_protocol::{LedgerItem, Meta, RewindAction, UserMessage};
use pretty_assertions::assert_eq;

use super::*;

fn user(text: &str) -> LedgerItem {
    LedgerItem::User(UserMessage::text(text))
}

fn texts(items: &[LedgerItem]) -> Vec<String> {
    items
        .iter()
        .map(|item| match item {
            LedgerItem::User(message) => message_text(message),
            LedgerItem::Meta(Meta::Rewind { turn }) => format!("rewind {turn}"),
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn replayed_rewinds_cut_the_conversation_before_the_turn() {
    let items = vec![
        user("one"),
        user("two"),
        LedgerItem::User(UserMessage::injected("reminder")),
        user("three"),
        LedgerItem::Meta(Meta::Rewind { turn: 2 }),
        user("two again"),
        LedgerItem::Meta(Meta::Rewind { turn: 2 }),
        user("two, third try"),
    ];
    let kept = apply_rewinds(items);
    // The in-memory ledger after the same rewinds holds both markers too.
    assert_eq!(texts(&kept), ["one", "rewind 2", "rewind 2", "two, third try"]);
    assert_eq!(turn_starts(&kept), vec![0, 3]);
}

#[test]
fn plan_restores_the_first_snapshot_from_the_turn_on_and_skips_unchanged_files() {
    let dir = tempfile::tempdir().unwrap();
    let history = FileHistory::new(dir.path().join("files"));
    let edited = dir.path().join("edited.txt");
    let created = dir.path().join("created.txt");
    let same = dir.path().join("same.txt");
    std::fs::write(&edited, b"v1\r\n").unwrap();
    std::fs::write(&same, b"same").unwrap();
    let snap = |turn: u32, path: &std::path::Path| {
        LedgerItem::Meta(Meta::FileSnapshot {
            turn,
            path: path.display().to_string(),
            blob: history.save(path).unwrap(),
        })
    };
    let mut items = vec![user("one"), snap(1, &edited), snap(1, &same)];
    std::fs::write(&edited, b"v2\n").unwrap();
    items.push(user("two"));
    items.push(snap(2, &edited));
    items.push(snap(2, &created));
    std::fs::write(&edited, b"v3\n").unwrap();
    std::fs::write(&created, b"new").unwrap();

    let actions = |turn| {
        plan(&items, &history, turn)
            .unwrap()
            .into_iter()
            .map(|step| (step.file.path.clone(), step.file.action))
            .collect::<Vec<_>>()
    };
    let name = |path: &std::path::Path| path.display().to_string();
    let both = vec![(name(&edited), RewindAction::Restore), (name(&created), RewindAction::Delete)];
    assert_eq!(actions(1), both);
    assert_eq!(actions(2), both);
    for step in plan(&items, &history, 2).unwrap() {
        step.apply(&history).unwrap();
    }
    assert_eq!(std::fs::read(&edited).unwrap(), b"v2\n");
    assert!(!created.exists());
    for step in plan(&items, &history, 1).unwrap() {
        step.apply(&history).unwrap();
    }
    assert_eq!(std::fs::read(&edited).unwrap(), b"v1\r\n");
    assert_eq!(std::fs::read(&same).unwrap(), b"same");
    assert!(matches!(plan(&items, &history, 3), Err(RewindError::NoSuchTurn { turn: 3, count: 2 })));
}

#[test]
fn a_damaged_blob_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let history = FileHistory::new(dir.path().join("files"));
    let file = dir.path().join("a.txt");
    std::fs::write(&file, b"original").unwrap();
    let blob = history.save(&file).unwrap().unwrap();
    std::fs::write(history.dir().join(&blob), b"tampered").unwrap();
    assert!(history.read(&blob).is_err());
    assert_eq!(history.save(&dir.path().join("missing")).unwrap(), None);
}
