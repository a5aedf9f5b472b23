use super::*;

use crossterm::event::{KeyEventKind, KeyEventState};
use lathe_protocol::{AgentEvent, Content, Receipt, ResultView, ToolCall, ToolResult, ToolStatus};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::super::test_screen::Screen;

fn key(code: KeyCode) -> KeyEvent {
    KeyEvent { code, modifiers: KeyModifiers::NONE, kind: KeyEventKind::Press, state: KeyEventState::NONE }
}

fn question(options: &[&str]) -> Question {
    Question {
        call_id: "call_ask".into(),
        question: "Which database should the service use?".into(),
        options: options.iter().map(|option| option.to_string()).collect(),
    }
}

fn card(options: &[&str]) -> QuestionCard {
    QuestionCard::new(question(options))
}

fn answered(text: &str) -> Option<QuestionAnswer> {
    Some(QuestionAnswer::Answered { text: text.into() })
}

fn text(rows: &[Line<'static>]) -> String {
    rows.iter()
        .map(|row| row.spans.iter().map(|span| span.content.as_ref()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_number_or_the_arrows_and_enter_choose_an_option() {
    let mut card = card(&["PostgreSQL", "SQLite", "MySQL"]);
    assert_eq!(card.key(key(KeyCode::Char('2'))), answered("SQLite"));

    let mut card = self::card(&["PostgreSQL", "SQLite", "MySQL"]);
    assert_eq!(card.key(key(KeyCode::Up)), None);
    assert_eq!(card.key(key(KeyCode::Down)), None);
    assert_eq!(card.key(key(KeyCode::Down)), None);
    assert_eq!(card.selected, 2);
    assert_eq!(card.key(key(KeyCode::Enter)), answered("MySQL"));
}

#[test]
fn the_last_choice_or_any_other_character_types_an_answer() {
    let mut card = card(&["PostgreSQL", "SQLite"]);
    assert_eq!(card.key(key(KeyCode::Char('3'))), None);
    assert_eq!(card.typed.as_deref(), Some(""));
    assert_eq!(card.key(key(KeyCode::Enter)), None, "an empty answer is not sent");
    for c in "DuckDBx".chars() {
        card.key(key(KeyCode::Char(c)));
    }
    card.key(key(KeyCode::Backspace));
    assert_eq!(card.key(key(KeyCode::Enter)), answered("DuckDB"));

    // A character that is no option's number starts the answer with it.
    let mut card = self::card(&["PostgreSQL", "SQLite"]);
    for c in "9 of them".chars() {
        card.key(key(KeyCode::Char(c)));
    }
    assert_eq!(card.selected, 2);
    assert_eq!(card.key(key(KeyCode::Enter)), answered("9 of them"));

    // Esc on the answer line goes back to the options; Down stops at the last choice.
    let mut card = self::card(&["PostgreSQL"]);
    card.key(key(KeyCode::Char('x')));
    assert_eq!(card.key(key(KeyCode::Esc)), None);
    assert_eq!(card.typed, None);
    card.key(key(KeyCode::Down));
    card.key(key(KeyCode::Down));
    assert_eq!(card.selected, 1);
    assert_eq!(card.key(key(KeyCode::Enter)), None);
    assert_eq!(card.typed.as_deref(), Some(""));
}

#[test]
fn esc_declines_and_without_options_the_answer_line_is_open() {
    let mut card = card(&["PostgreSQL"]);
    assert_eq!(card.key(key(KeyCode::Esc)), Some(QuestionAnswer::Declined));

    let mut card = self::card(&[]);
    assert_eq!(card.typed.as_deref(), Some(""));
    card.paste("use\nSQLite");
    assert_eq!(card.key(key(KeyCode::Enter)), answered("use SQLite"));
    let mut card = self::card(&[]);
    assert_eq!(card.key(key(KeyCode::Esc)), Some(QuestionAnswer::Declined));
}

#[test]
fn the_card_keeps_the_choices_when_space_is_short() {
    let long = "Which database should the service use? ".repeat(6);
    let card = QuestionCard::new(Question { question: long, ..question(&["PostgreSQL", "SQLite"]) });
    let (rows, cursor) = card.rows(40, 30);
    let shown = text(&rows);
    assert!(shown.starts_with('─'), "{shown}");
    assert!(shown.contains("The model asks you (ask_user)"), "{shown}");
    assert_eq!(cursor, None);
    let (rows, _) = card.rows(40, 6);
    assert_eq!(rows.len(), 6);
    let shown = text(&rows);
    assert!(!shown.contains("The model asks you"), "the title goes first:\n{shown}");
    assert!(shown.contains("Which database should the"), "{shown}");
    assert!(shown.contains("…"), "{shown}");
    for line in ["1 PostgreSQL", "2 SQLite", "3 type an answer of your own", "esc declines"] {
        assert!(shown.contains(line), "`{line}` in:\n{shown}");
    }
}

#[test]
fn keys_reach_the_card_and_its_answer_goes_to_the_session() {
    let mut screen = Screen::new(70, 16);
    screen.state.start_turn(screen.now);
    screen.event(AgentEvent::Question(question(&["PostgreSQL", "SQLite"])));
    assert!(screen.state.has_dialog());
    let actions = screen.key(KeyCode::Char('1'));
    let answer = QuestionAnswer::Answered { text: "PostgreSQL".into() };
    assert_eq!(actions, vec![Action::Op(AgentOp::QuestionAnswer { call_id: "call_ask".into(), answer })]);
    assert!(screen.state.question.is_none());

    screen.event(AgentEvent::Question(question(&[])));
    screen.state.on_paste("SQLite", screen.now);
    let answer = QuestionAnswer::Answered { text: "SQLite".into() };
    let actions = screen.key(KeyCode::Enter);
    assert_eq!(actions, vec![Action::Op(AgentOp::QuestionAnswer { call_id: "call_ask".into(), answer })]);

    // Ctrl+C closes the card and cancels the turn, as for any running call.
    screen.event(AgentEvent::Question(question(&["PostgreSQL"])));
    let actions = screen.key_with(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(actions, vec![Action::Op(AgentOp::Cancel)]);
    assert!(screen.state.question.is_none());
}

#[test]
fn question_card_on_screen() {
    let mut screen = Screen::new(70, 16);
    screen.state.show_prompt("add a cache");
    screen.state.start_turn(screen.now);
    let arguments =
        json!({"question": "Which database should the service use?", "options": ["PostgreSQL", "SQLite"]});
    let call = ToolCall { id: "call_ask".into(), name: "ask_user".into(), arguments, incomplete: None };
    let summary = "Which database should the service use?".to_string();
    screen.event(AgentEvent::ToolCallStarted { call, summary });
    screen.event(AgentEvent::Question(question(&["PostgreSQL", "SQLite"])));
    insta::assert_snapshot!("question_card", screen.text());
    screen.key(KeyCode::Down);
    screen.key(KeyCode::Down);
    screen.key(KeyCode::Enter);
    screen.type_text("DuckDB, in memory");
    insta::assert_snapshot!("question_typed", screen.screen_text());
    let actions = screen.key(KeyCode::Enter);
    assert_eq!(actions.len(), 1);
    screen.event(AgentEvent::ToolResult {
        result: ToolResult {
            call_id: "call_ask".into(),
            content: vec![Content::text("The user answered: DuckDB, in memory")],
            is_error: false,
            status: ToolStatus::Completed,
            receipt: Some(Receipt::default()),
        },
        tool: "ask_user".into(),
        elapsed_ms: 4_000,
        view: Some(ResultView::Line { text: "answered: DuckDB, in memory".into() }),
    });
    let all = screen.all_text();
    assert!(all.contains("answered: DuckDB, in memory"), "{all}");
}
