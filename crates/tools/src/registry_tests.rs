#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::context::ToolContext;
use crate::tool::{Effect, ToolError};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn keys_anywhere(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                found.push(k.clone());
                keys_anywhere(v, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys_anywhere(v, found)),
        _ => {}
    }
}

#[test]
fn builtin_registry_offers_exactly_the_eleven_tools_in_order() {
    let registry = ToolRegistry::builtin();
    assert_eq!(
        registry.names(),
        [
            "read_file",
            "write_file",
            "edit_file",
            "grep",
            "glob",
            "list_dir",
            "shell",
            "shell_output",
            "shell_kill",
            "todo_write",
            "web_fetch"
        ]
    );
    let effects: Vec<Effect> =
        registry.names().iter().map(|n| registry.get(n).unwrap().effect(&json!({}))).collect();
    use Effect::{Mutating, Network, ReadOnly};
    assert_eq!(
        effects,
        [
            ReadOnly, Mutating, Mutating, ReadOnly, ReadOnly, ReadOnly, Mutating, ReadOnly, Mutating,
            ReadOnly, Network
        ]
    );
    assert!(registry.get("no_such_tool").is_none());
    assert!(ToolRegistry::empty().names().is_empty());
}

#[test]
fn specs_are_compact_and_self_contained() {
    let specs = ToolRegistry::builtin().specs();
    let total = serde_json::to_string(&specs).unwrap().len();
    assert!(total <= 8 * 1024, "all specs take {total} bytes of JSON");
    for spec in &specs {
        let size = serde_json::to_string(spec).unwrap().len();
        if spec.name == "web_fetch" {
            assert!(size <= 500, "web_fetch's spec takes {size} bytes of JSON");
        }
        let mut keys = Vec::new();
        keys_anywhere(&spec.input_schema, &mut keys);
        for banned in ["$schema", "title", "$ref", "$defs", "format"] {
            assert!(!keys.iter().any(|k| k == banned), "{}: has {banned}", spec.name);
        }
        assert_eq!(spec.input_schema["type"], "object", "{}", spec.name);
    }
}

/// Schema keywords that mean the same in draft 7 and in draft 2020-12 (built-in validators compile
/// as draft 7, see `tool::compile_own`; the model is sent the schemas as 2020-12).
const SAME_IN_DRAFT_7: [&str; 14] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "minimum",
    "maximum",
    "minItems",
    "description",
    "default",
];

/// The schema keywords of `schema` (not the property names under `properties`).
fn schema_keywords(schema: &Value, found: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                found.push(key.clone());
                match (key.as_str(), value) {
                    ("properties", Value::Object(props)) => {
                        props.values().for_each(|v| schema_keywords(v, found))
                    }
                    ("enum" | "const" | "default" | "required" | "description", _) => {}
                    _ => schema_keywords(value, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| schema_keywords(v, found)),
        _ => {}
    }
}

#[test]
fn builtin_schemas_are_valid_2020_12_and_check_the_same_as_draft_7() {
    for spec in ToolRegistry::builtin().specs() {
        assert!(
            jsonschema::draft202012::meta::is_valid(&spec.input_schema),
            "{}: not a 2020-12 schema",
            spec.name
        );
        let mut keywords = Vec::new();
        schema_keywords(&spec.input_schema, &mut keywords);
        for keyword in keywords {
            assert!(SAME_IN_DRAFT_7.contains(&keyword.as_str()), "{}: keyword {keyword}", spec.name);
        }
    }
    // The compiled validator rejects what the schema rejects, naming the field.
    let read = ToolRegistry::builtin().get("read_file").unwrap();
    let error = read.access(&json!({"path": 3}), &ToolContext::new(std::env::temp_dir())).unwrap_err();
    assert!(error.to_string().contains("/path"), "{error}");
}

#[test]
fn model_facing_parameters_match_the_contract() {
    let registry = ToolRegistry::builtin();
    let params = |name: &str| -> (Vec<String>, Vec<String>) {
        let schema = registry.get(name).unwrap().spec().input_schema;
        let props = schema["properties"].as_object().unwrap().keys().cloned().collect();
        let required = schema["required"]
            .as_array()
            .map(|r| r.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        (props, required)
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(params("read_file"), (s(&["path", "offset", "limit", "column"]), s(&["path"])));
    assert_eq!(params("write_file"), (s(&["path", "content"]), s(&["path", "content"])));
    assert_eq!(
        params("edit_file"),
        (s(&["path", "old_string", "new_string", "replace_all"]), s(&["path", "old_string", "new_string"]))
    );
    assert_eq!(
        params("grep"),
        (
            s(&["pattern", "path", "glob", "case_insensitive", "context", "output_mode", "include_ignored"]),
            s(&["pattern"])
        )
    );
    assert_eq!(params("glob"), (s(&["pattern", "path", "include_ignored"]), s(&["pattern"])));
    assert_eq!(params("list_dir"), (s(&["path", "depth", "include_ignored"]), s(&["path"])));
    assert_eq!(
        params("shell"),
        (s(&["command", "timeout_ms", "workdir", "run_in_background"]), s(&["command"]))
    );
    assert_eq!(params("shell_output"), (s(&["id", "filter", "wait_ms"]), s(&["id"])));
    assert_eq!(params("shell_kill"), (s(&["id"]), s(&["id"])));
    assert_eq!(params("todo_write"), (s(&["items"]), s(&["items"])));
    assert_eq!(params("web_fetch"), (s(&["url", "max_bytes"]), s(&["url"])));
}

#[tokio::test]
async fn invalid_arguments_are_rejected_naming_the_field_and_nothing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(dir.path().to_path_buf());
    let registry = ToolRegistry::builtin();
    let shell = registry.get("shell").unwrap();
    let err = shell.call(json!({"command": "touch ran", "timeout_ms": "soon"}), &ctx).await.unwrap_err();
    match &err {
        ToolError::InvalidArguments { tool, message } => {
            assert_eq!(tool, "shell");
            assert!(message.contains("timeout_ms"), "{message}");
        }
        other => panic!("expected InvalidArguments, got {other:?}"),
    }
    let write = registry.get("write_file").unwrap();
    let err = write.call(json!({"path": "new.txt"}), &ctx).await.unwrap_err();
    assert!(
        matches!(&err, ToolError::InvalidArguments { message, .. } if message.contains("content")),
        "{err}"
    );
    let err = write.call(json!("new.txt"), &ctx).await.unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
    assert!(!dir.path().join("ran").exists(), "the shell command must not have run");
    assert!(!dir.path().join("new.txt").exists(), "write_file must not have run");
}

#[test]
fn summaries_name_the_path_command_or_pattern() {
    let registry = ToolRegistry::builtin();
    let summary = |tool: &str, args: Value| registry.get(tool).unwrap().summary(&args);
    assert_eq!(summary("read_file", json!({"path": "src/lib.rs"})), "src/lib.rs");
    assert_eq!(summary("shell", json!({"command": "cargo test"})), "cargo test");
    assert_eq!(summary("grep", json!({"pattern": "fn main", "path": "src"})), "fn main in src");
    assert_eq!(summary("web_fetch", json!({"url": "https://docs.rs/tokio"})), "https://docs.rs/tokio");
}

#[test]
fn enums_are_plain_string_enums() {
    let registry = ToolRegistry::builtin();
    let grep = registry.get("grep").unwrap().spec().input_schema;
    assert_eq!(
        grep["properties"]["output_mode"],
        json!({"type": ["string", "null"], "enum": ["content", "files", "count", null], "description": "content (default), files, or count."})
    );
    let todo = registry.get("todo_write").unwrap().spec().input_schema;
    assert_eq!(
        todo["properties"]["items"]["items"]["properties"]["status"]["enum"],
        json!(["pending", "in_progress", "completed"])
    );
}

#[test]
fn retain_keeps_only_the_named_tools_in_order() {
    let mut registry = ToolRegistry::builtin();
    registry.retain(|name| matches!(name, "shell" | "read_file"));
    assert_eq!(registry.names(), ["read_file", "shell"]);
    assert!(registry.get("grep").is_none());
    assert_eq!(registry.specs().len(), 2);
}

#[test]
fn deferred_tools_are_left_out_until_loaded_then_come_last_in_load_order() {
    let mut registry = ToolRegistry::empty();
    let kept = ["read_file", "write_file", "edit_file", "grep", "glob", "list_dir", "shell", "todo_write"];
    for tool in builtin::all().into_iter().filter(|tool| kept.contains(&tool.name())) {
        if matches!(tool.name(), "grep" | "glob" | "list_dir") {
            registry.register_deferred(tool);
        } else {
            registry.register(tool);
        }
    }
    let offered = ["read_file", "write_file", "edit_file", "shell", "todo_write"];
    assert_eq!(registry.names(), offered);
    assert_eq!(registry.deferred_names(), ["grep", "glob", "list_dir"]);
    assert!(registry.get("glob").is_none());
    assert_eq!(registry.get_deferred("glob").map(|tool| tool.name().to_string()).as_deref(), Some("glob"));
    let before = registry.specs();

    assert!(registry.load("list_dir"));
    assert!(registry.load("grep"));
    assert!(!registry.load("grep"), "a second load changes nothing");
    assert!(!registry.load("read_file") && !registry.load("no_such_tool"));
    assert_eq!(
        registry.names(),
        ["read_file", "write_file", "edit_file", "shell", "todo_write", "list_dir", "grep"]
    );
    assert_eq!(registry.deferred_names(), ["glob"]);
    let after = registry.specs();
    assert_eq!(after[..before.len()], before[..], "the tools offered before are unchanged");
    assert_eq!(after[before.len()].name, "list_dir");
    assert!(registry.get("grep").is_some() && registry.get_deferred("grep").is_none());
    assert_eq!(registry.deferred_specs().iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["glob"]);
}

#[test]
fn map_and_retain_keep_what_is_deferred() {
    let mut registry = ToolRegistry::empty();
    for tool in builtin::all() {
        if tool.name() == "grep" { registry.register_deferred(tool) } else { registry.register(tool) }
    }
    let mapped = registry.map(|tool| tool);
    assert_eq!(mapped.names(), registry.names());
    assert_eq!(mapped.deferred_names(), ["grep"]);
    registry.retain(|name| matches!(name, "shell" | "grep"));
    assert_eq!(registry.names(), ["shell"]);
    assert_eq!(registry.deferred_names(), ["grep"]);
}
