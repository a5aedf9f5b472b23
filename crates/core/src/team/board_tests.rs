#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The board on a real file: items, blocked-by kept both ways, the rules of taking an item.

use super::TeamError;
use super::board::{Board, Change, Status};

fn status(status: Status) -> Change {
    Change { status: Some(status), ..Change::default() }
}

fn refused(result: Result<super::board::Item, TeamError>) -> String {
    match result {
        Err(TeamError::Board(message)) => message,
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn blocked_by_is_kept_both_ways_and_a_blocked_item_waits_for_its_blocker() {
    let dir = tempfile::tempdir().expect("tempdir");
    let board = Board::new(dir.path());
    let parser = board.add("lead", "Write the parser", None, vec![]).expect("add");
    let docs = board.add("lead", "Write the docs", Some("bob".into()), vec![]).expect("add");
    let tests = board.add("lead", "Test the parser", None, vec![parser.id]).expect("add");
    assert_eq!((parser.id, docs.id, tests.id), (1, 2, 3));
    assert_eq!(board.get(1).expect("get").blocks, vec![3]);
    assert_eq!(board.get(3).expect("get").blocked_by, vec![1]);
    assert_eq!(board.get(2).expect("get").owner.as_deref(), Some("bob"));

    let message = refused(board.update("bob", 3, &status(Status::InProgress)));
    assert_eq!(message, "#3 cannot be taken: it is blocked by #1 \"Write the parser\" (open)");
    assert_eq!(board.get(3).expect("get").status, Status::Open, "unchanged");

    let taken = board.update("alice", 1, &status(Status::InProgress)).expect("take");
    assert_eq!((taken.status, taken.owner.as_deref()), (Status::InProgress, Some("alice")));
    let message = refused(board.update("bob", 1, &status(Status::InProgress)));
    assert_eq!(message, "#1 is already in progress, owned by `alice`");
    let message = refused(board.update("bob", 3, &status(Status::Done)));
    assert!(message.contains("blocked by #1 \"Write the parser\" (in_progress, owner alice)"), "{message}");

    board.update("alice", 1, &status(Status::Done)).expect("done");
    let taken = board.update("bob", 3, &status(Status::InProgress)).expect("take after the blocker");
    assert_eq!(taken.owner.as_deref(), Some("bob"));
    assert_eq!(board.list().expect("list").len(), 3);
}

#[test]
fn dependencies_are_checked_and_replaced_on_both_sides() {
    let dir = tempfile::tempdir().expect("tempdir");
    let board = Board::new(dir.path());
    for title in ["a", "b", "c"] {
        board.add("lead", title, None, vec![]).expect("add");
    }
    assert_eq!(refused(board.add("lead", "d", None, vec![9])), "no item #9; the items are #1, #2, #3");
    assert_eq!(board.list().expect("list").len(), 3, "a refused add adds nothing");
    board.update("lead", 2, &Change { blocked_by: Some(vec![1]), ..Change::default() }).expect("block");
    let cycle = refused(board.update("lead", 1, &Change { blocked_by: Some(vec![2]), ..Change::default() }));
    assert!(cycle.contains("a cycle"), "{cycle}");
    assert_eq!(board.get(1).expect("get").blocked_by, Vec::<u32>::new());
    board.update("lead", 2, &Change { blocked_by: Some(vec![3]), ..Change::default() }).expect("move");
    assert_eq!(board.get(1).expect("get").blocks, Vec::<u32>::new());
    assert_eq!(board.get(3).expect("get").blocks, vec![2]);
    assert_eq!(refused(board.add("lead", " ", None, vec![])), "an item needs a title");
    assert!(refused(board.get(7)).contains("no item #7"));
    let empty = tempfile::tempdir().expect("tempdir");
    assert_eq!(refused(Board::new(empty.path()).get(1)), "no item #1: the board is empty");
}
