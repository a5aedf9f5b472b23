#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn skill(root: &Path, folder: &str, text: &str) {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
}

#[test]
fn bad_files_and_duplicates_are_reported_and_the_rest_load() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join(".claude/skills");
    let user = dir.path().join("home/skills");
    skill(&project, "good", "---\nname: good\ndescription: Does good things\n---\nBody\n");
    skill(&project, "nofront", "Just a body\n");
    skill(&project, "badyaml", "---\nname: [x\n---\n");
    skill(&project, "noname", "---\ndescription: d\n---\n");
    skill(&user, "good", "---\nname: good\ndescription: the user's copy\n---\n");
    skill(&user, "other", "---\nname: other\ndescription: Other\nallowed-tools: Read, Grep\n---\n");
    let big = format!("---\nname: big\ndescription: d\n---\n{}", "x".repeat(5 * 1024 * 1024));
    skill(&user, "big", &big);

    let (set, warnings) = SkillSet::discover(dir.path(), &dir.path().join("home"));
    let names: Vec<&str> = set.all().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["good", "other"]);
    assert_eq!(set.get("good").unwrap().description, "Does good things");
    assert_eq!(set.get("good").unwrap().scope, Scope::Project);
    assert_eq!(set.get("other").unwrap().allowed_tools, ["Read", "Grep"]);
    let joined = warnings.join("\n");
    assert_eq!(warnings.len(), 5, "{joined}");
    for needle in ["nofront", "badyaml", "noname", "over the limit", "same name"] {
        assert!(joined.contains(needle), "{needle}: {joined}");
    }
}

#[test]
fn listing_stays_within_its_budget() {
    let skills = (0..300)
        .map(|i| Skill {
            name: format!("skill-{i:03}"),
            description: "d".repeat(80),
            allowed_tools: Vec::new(),
            dir: PathBuf::from("/x"),
            file: PathBuf::from("/x/SKILL.md"),
            scope: Scope::User,
            body_offset: 0,
        })
        .collect();
    let set = SkillSet::from_skills(skills);
    let (text, left_out) = set.listing(LISTING_BUDGET_BYTES);
    assert!(text.len() <= LISTING_BUDGET_BYTES, "{}", text.len());
    assert!(left_out > 0);
    assert!(text.ends_with(&format!("- … {left_out} more skills not listed\n")));
    assert!(text.starts_with("- skill-000: ddd"));
}
