#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde::Deserialize;

use super::*;

#[derive(Debug, Deserialize, PartialEq)]
struct Meta {
    name: Option<String>,
    #[serde(default)]
    tools: NameList,
}

fn write(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("f.md");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn head_is_parsed_and_body_read_from_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "---\r\nname: a\ntools: Read, Grep\n---\n\nThe body.\n");
    let head: Head<Meta> = read_head(&path).unwrap();
    let meta = head.meta.unwrap();
    assert_eq!(meta.name.as_deref(), Some("a"));
    assert_eq!(meta.tools.names(), Some(vec!["Read".to_string(), "Grep".to_string()]));
    assert_eq!(read_body(&path, head.body_offset).unwrap(), "The body.");
}

#[test]
fn lists_as_sequences_and_parenthesised_rules() {
    let list: NameList = serde_yaml_ng::from_str("[Read, ' Grep ']").unwrap();
    assert_eq!(list.names(), Some(vec!["Read".to_string(), "Grep".to_string()]));
    let list: NameList = serde_yaml_ng::from_str("'Bash(git add:*) Read'").unwrap();
    assert_eq!(list.names(), Some(vec!["Bash(git add:*)".to_string(), "Read".to_string()]));
    assert_eq!(NameList::None.names(), None);
}

#[test]
fn no_frontmatter_empty_frontmatter_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let head: Head<Meta> = read_head(&write(dir.path(), "just text\n")).unwrap();
    assert_eq!(head, Head { meta: None, body_offset: 0 });
    let head: Head<Meta> = read_head(&write(dir.path(), "---\n---\nbody")).unwrap();
    assert_eq!(head.meta, Some(Meta { name: None, tools: NameList::None }));

    let err = read_head::<Meta>(&write(dir.path(), "---\nname: [unclosed\n---\n")).unwrap_err();
    assert!(matches!(err, FrontmatterError::Yaml { .. }), "{err}");
    assert!(err.to_string().contains("invalid YAML"), "{err}");
    let err = read_head::<Meta>(&write(dir.path(), "---\nname: a\n")).unwrap_err();
    assert!(matches!(err, FrontmatterError::Unclosed { .. }), "{err}");
    let big = format!("---\nname: a\n---\n{}", "x".repeat(MAX_DEFINITION_BYTES as usize));
    let err = read_head::<Meta>(&write(dir.path(), &big)).unwrap_err();
    assert!(matches!(err, FrontmatterError::TooLarge { .. }), "{err}");
}
