use super::*;
use pretty_assertions::assert_eq;

#[test]
fn commands_parse_with_and_without_arguments() {
    assert_eq!(parse("/help"), Ok(SlashCommand::Help));
    assert_eq!(parse("  /model  gpt-4.1 "), Ok(SlashCommand::Model(Some("gpt-4.1".into()))));
    assert_eq!(parse("/mode"), Ok(SlashCommand::Mode(None)));
    assert_eq!(parse("/exit"), Ok(SlashCommand::Quit));
    assert_eq!(parse("/mcp"), Ok(SlashCommand::Mcp));
    assert_eq!(parse("/jobs"), Ok(SlashCommand::Jobs));
    assert_eq!(parse("/jobs all"), Err(SlashError::UnexpectedArgument { name: "jobs" }));
    assert_eq!(parse("/report"), Ok(SlashCommand::Report));
    assert_eq!(parse("/report all"), Err(SlashError::UnexpectedArgument { name: "report" }));
    assert_eq!(parse("/compact"), Ok(SlashCommand::Compact(None)));
    assert_eq!(
        parse("/compact keep the API names"),
        Ok(SlashCommand::Compact(Some("keep the API names".into())))
    );
    assert_eq!(parse("/cost now"), Err(SlashError::UnexpectedArgument { name: "cost" }));
}

#[test]
fn unknown_commands_suggest_the_nearest() {
    assert_eq!(
        parse("/staus"),
        Err(SlashError::Unknown { name: "staus".into(), suggestion: Some("status") })
    );
    assert_eq!(
        parse("/frobnicate"),
        Err(SlashError::Unknown { name: "frobnicate".into(), suggestion: None })
    );
}

#[test]
fn paths_are_prompts_not_commands() {
    assert!(is_command("/help"));
    assert!(is_command("/rewind "));
    assert!(!is_command("/usr/bin/env is missing"));
    assert!(!is_command("/"));
    assert!(!is_command("why /help?"));
}

#[test]
fn completion_filters_by_prefix() {
    let names: Vec<&str> = complete("mo").iter().map(|c| c.name).collect();
    assert_eq!(names, vec!["model", "mode"]);
    assert_eq!(complete("").len(), COMMANDS.len());
}

#[test]
fn session_commands_and_skills_parse_as_user_commands_and_built_ins_win() {
    use lathe_protocol::{UserCommand, UserCommandKind};
    let user = |name: &str| UserCommand {
        name: name.into(),
        description: String::new(),
        argument_hint: None,
        kind: UserCommandKind::Skill,
    };
    let user = [user("greet"), user("frontend:lint"), user("help")];
    assert!(is_command("/frontend:lint src"));
    assert_eq!(parse_with("/greet Bob", &user), Ok(SlashCommand::User { name: "greet".into() }));
    assert_eq!(parse_with("/frontend:lint", &user), Ok(SlashCommand::User { name: "frontend:lint".into() }));
    assert_eq!(parse_with("/help", &user), Ok(SlashCommand::Help));
    assert_eq!(parse_with("/skills", &user), Ok(SlashCommand::Skills));
    assert_eq!(
        parse_with("/gret", &user),
        Err(SlashError::Unknown { name: "gret".into(), suggestion: None })
    );
}

#[test]
fn goal_takes_a_condition_and_an_optional_quoted_check() {
    assert_eq!(parse("/goal"), Ok(SlashCommand::Goal(None)));
    let Ok(SlashCommand::Goal(Some(argument))) = parse("/goal tests pass --check \"python3 -m pytest -q\"")
    else {
        panic!("not a goal")
    };
    let goal = goal_spec(&argument);
    assert_eq!(goal.condition, "tests pass");
    assert_eq!(goal.check.as_deref(), Some("python3 -m pytest -q"));
    assert_eq!(goal_spec("the build is green").check, None);
    assert_eq!(goal_spec("x --check 'make test'").check.as_deref(), Some("make test"));
}
