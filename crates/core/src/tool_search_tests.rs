#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use lathe_tools::DynTool;
use serde_json::json;

fn spec(name: &str, description: &str) -> ToolSpec {
    ToolSpec { name: name.into(), description: description.into(), input_schema: json!({"type": "object"}) }
}

fn search() -> ToolSearch {
    ToolSearch::new(&[
        spec("mcp__gh__list_issues", "List the issues of a repository.\nPaged."),
        spec("mcp__gh__create_issue", "Open a new issue"),
        spec("mcp__db__query", "Run a read-only SQL query against the issue tracker's database"),
        spec("mcp__db__schema", "Describe the tables"),
    ])
}

fn names(found: &[&Entry]) -> Vec<String> {
    found.iter().map(|entry| entry.name.clone()).collect()
}

#[test]
fn words_match_names_before_descriptions_and_the_limit_holds() {
    let search = search();
    let (found, unknown) = search.search("issue", 5);
    // Names containing the word outrank a description that does; ties keep the listing's order.
    assert_eq!(names(&found), ["mcp__gh__list_issues", "mcp__gh__create_issue", "mcp__db__query"]);
    assert!(unknown.is_empty());
    assert_eq!(names(&search.search("SQL, Database", 1).0), ["mcp__db__query"]);
    assert_eq!(names(&search.search("mcp__db__schema", 5).0)[0], "mcp__db__schema");
    assert!(search.search("kubernetes", 5).0.is_empty());
}

#[test]
fn select_picks_exact_names_once_and_names_the_unknown_ones() {
    let search = search();
    let (found, unknown) =
        search.search("select: mcp__db__schema, mcp__gh__create_issue,mcp__db__schema,nope", 1);
    assert_eq!(names(&found), ["mcp__db__schema", "mcp__gh__create_issue"], "select ignores the limit");
    assert_eq!(unknown, ["nope"]);
}

#[tokio::test]
async fn a_search_records_what_it_loaded_and_says_so() {
    let ctx = ToolContext::new(std::env::temp_dir());
    let tool: Arc<dyn DynTool> = Arc::new(search());
    let out = tool.call(json!({"query": "select:mcp__db__query,missing"}), &ctx).await.expect("search");
    let text = format!("{:?}", out.content);
    assert!(
        text.contains("Loaded 1 tool") && text.contains("mcp__db__query — Run a read-only SQL"),
        "{text}"
    );
    assert!(text.contains("Not deferred tools: missing."), "{text}");
    assert_eq!(out.ledger, vec![Meta::ToolsLoaded { names: vec!["mcp__db__query".into()] }]);

    let none = tool.call(json!({"query": "kubernetes"}), &ctx).await.expect("search");
    assert!(none.ledger.is_empty() && !none.is_error);
    assert!(format!("{:?}", none.content).contains("No deferred tool matches `kubernetes`"));
    assert!(tool.call(json!({}), &ctx).await.is_err(), "query is required");
}

#[test]
fn install_adds_the_listing_and_the_tool_only_when_something_is_deferred() {
    let mut tools = ToolRegistry::builtin();
    let mut system = vec![SystemBlock { text: "core".into(), cache_breakpoint: true }];
    install(&mut tools, &mut system);
    assert_eq!(system.len(), 1);
    assert!(tools.get(TOOL_SEARCH).is_none());

    let mut tools = ToolRegistry::empty();
    for tool in lathe_tools::builtin::all() {
        if matches!(tool.name(), "grep" | "glob") {
            tools.register_deferred(tool)
        } else {
            tools.register(tool)
        }
    }
    install(&mut tools, &mut system);
    assert_eq!(tools.names().last().map(String::as_str), Some(TOOL_SEARCH));
    let block = &system[1].text;
    assert!(block.starts_with("# Deferred tools\n"), "{block}");
    let lines: Vec<&str> = block.lines().skip(2).collect();
    assert_eq!(lines.len(), 2, "{block}");
    assert!(lines[0].starts_with("grep — ") && lines[1].starts_with("glob — "), "{block}");
    assert!(!block.contains("\"properties\""), "no schema in the listing: {block}");
    let spec = serde_json::to_string(&tools.get(TOOL_SEARCH).unwrap().spec()).unwrap();
    assert!(spec.len() <= 500, "tool_search's spec takes {} bytes: {spec}", spec.len());
}

#[test]
fn a_line_is_the_first_line_of_the_description_cut_short() {
    assert_eq!(line("t", "\n  First line.  \nSecond"), "t — First line.");
    assert_eq!(line("t", ""), "t");
    let long = line("t", &"x".repeat(300));
    assert_eq!(long.chars().count(), "t — ".chars().count() + LINE_CHARS + 1);
}
