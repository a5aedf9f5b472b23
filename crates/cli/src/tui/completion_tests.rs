use super::*;
use pretty_assertions::assert_eq;

fn labels(completion: &Completion) -> Vec<String> {
    completion.candidates.iter().map(|c| c.label.clone()).collect()
}

#[test]
fn slash_names_complete_while_the_line_is_one_word() {
    let mut input = InputEditor::default();
    input.insert("/re");
    let completion = Completion::for_input(&input, Path::new("/"), &[]);
    assert_eq!(
        completion.as_ref().map(labels),
        Some(vec!["/report".to_string(), "/resume".into(), "/rewind".into()])
    );
    input.insert(" x");
    assert_eq!(Completion::for_input(&input, Path::new("/"), &[]), None);
}

#[test]
fn a_name_typed_in_full_comes_first_and_is_chosen() {
    let mut input = InputEditor::default();
    input.insert("/mode");
    let completion = Completion::for_input(&input, Path::new("/"), &[]);
    assert_eq!(completion.as_ref().map(labels), Some(vec!["/mode".to_string(), "/model".into()]));
    assert_eq!(completion.and_then(|c| c.chosen().map(|c| c.replacement.clone())), Some("/mode".into()));
    let mut input = InputEditor::default();
    input.insert("/mod");
    let completion = Completion::for_input(&input, Path::new("/"), &[]);
    assert_eq!(completion.as_ref().map(labels), Some(vec!["/model".to_string(), "/mode".into()]));
}

#[test]
fn at_paths_list_matching_entries_one_level_at_a_time() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.path().join("src/bin")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("src/lib.rs"), "").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("README.md"), "").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join(".hidden"), "").unwrap_or_else(|e| panic!("{e}"));
    let mut input = InputEditor::default();
    input.insert("look at @");
    let completion = Completion::for_input(&input, dir.path(), &[]);
    assert_eq!(completion.as_ref().map(labels), Some(vec!["README.md".to_string(), "src/".into()]));
    input.insert("src/");
    let completion = Completion::for_input(&input, dir.path(), &[]);
    assert_eq!(completion.as_ref().map(labels), Some(vec!["src/bin/".to_string(), "src/lib.rs".into()]));
    assert_eq!(completion.as_ref().map(|c| c.range.clone()), Some(8..13));
    assert_eq!(
        completion.and_then(|c| c.chosen().map(|c| c.replacement.clone())),
        Some("@src/bin/".to_string())
    );
    input.insert("nothing");
    assert_eq!(Completion::for_input(&input, dir.path(), &[]), None);
}

#[test]
fn session_commands_and_skills_complete_after_the_built_in_ones() {
    use lathe_protocol::{UserCommand, UserCommandKind};
    let user = [
        UserCommand {
            name: "greet".into(),
            description: "Say hello".into(),
            argument_hint: Some("[name]".into()),
            kind: UserCommandKind::Command,
        },
        UserCommand {
            name: "frontend:lint".into(),
            description: "Lint it".into(),
            argument_hint: None,
            kind: UserCommandKind::Command,
        },
        UserCommand {
            name: "release-notes".into(),
            description: "Writes release notes".into(),
            argument_hint: None,
            kind: UserCommandKind::Skill,
        },
    ];
    let mut input = InputEditor::default();
    input.insert("/re");
    let completion = Completion::for_input(&input, Path::new("/"), &user);
    assert_eq!(
        completion.as_ref().map(labels),
        Some(vec!["/report".to_string(), "/resume".into(), "/rewind".into(), "/release-notes".into()])
    );
    let mut input = InputEditor::default();
    input.insert("/gr");
    let completion = Completion::for_input(&input, Path::new("/"), &user);
    assert_eq!(
        completion.as_ref().map(|c| c.candidates[0].detail.clone()),
        Some("[name] — Say hello".into())
    );
    let mut input = InputEditor::default();
    input.insert("/frontend:");
    let completion = Completion::for_input(&input, Path::new("/"), &user);
    assert_eq!(completion.as_ref().map(labels), Some(vec!["/frontend:lint".to_string()]));
}

#[test]
fn at_paths_follow_the_walk_rule_of_list_dir_ignored_left_out_and_links_to_directories_offered() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let put = |path: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap_or(dir.path())).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(path, "").unwrap_or_else(|e| panic!("{e}"));
    };
    put(".gitignore");
    std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap_or_else(|e| panic!("{e}"));
    put("src/lib.rs");
    put("target/debug/out");
    std::os::unix::fs::symlink(".", dir.path().join("self")).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink("src/lib.rs", dir.path().join("lib-link.rs"))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut input = InputEditor::default();
    input.insert("@");
    let completion = Completion::for_input(&input, dir.path(), &[]);
    assert_eq!(
        completion.as_ref().map(labels),
        Some(vec!["lib-link.rs".to_string(), "self/".into(), "src/".into()])
    );
    // A directory that is named is listed even when ignored, as list_dir lists the path it is given.
    input.insert("target/");
    let completion = Completion::for_input(&input, dir.path(), &[]);
    assert_eq!(completion.as_ref().map(labels), Some(vec!["target/debug/".to_string()]));
    let mut input = InputEditor::default();
    input.insert("@.git");
    let completion = Completion::for_input(&input, dir.path(), &[]);
    assert_eq!(completion.as_ref().map(labels), Some(vec![".gitignore".to_string()]));
}
