//! GBNF grammars that force the model's output into parseable, schema-valid tool calls.
//!
//! The grammar is generated per request from the offered tools ([`crate::chatml::offered_tools`]):
//!
//! ```text
//! root  ::= calls | text                      (AnswerMode::Text)
//! root  ::= final | calls                     (AnswerMode::FinalAnswerTool)
//! root  ::= calls                             (AnswerMode::ToolRequired)
//! calls ::= call ("\n" call)*                 (at most Shape::max_calls calls)
//! call  ::= "<tool_call>\n{\"name\": " ( "\"read_file\", \"arguments\": " read-file-args | … ) "}\n</tool_call>"
//! ```
//!
//! The layout is exactly what the Qwen2.5 template renders for a call (Python `json.dumps`
//! spacing, no newline inside the JSON), so a generated call re-renders byte for byte in the next
//! prompt. Argument rules come from `schema`: the subset the built-in tools use (objects with
//! required/optional properties, strings, integers, numbers, booleans, enums, arrays, `$ref`,
//! `anyOf`, nullable types); anything else falls back to a generic JSON value. In text mode, the
//! text may not start with `<`, `{`, `[` or a backtick, so JSON the model means as a call cannot
//! slip out as text. With [`Shape::edit_targets`], `edit_file` arguments are limited to edits
//! that apply to the files the model has read (`edit`); with [`Shape::cite_line`], the `answer`
//! call's thought starts by citing a line of the tool results.

mod edit;
mod schema;

use lathe_protocol::ToolSpec;

use crate::chatml::FINAL_ANSWER_TOOL;
use crate::config::AnswerMode;

pub use edit::{EditTarget, MAX_EDIT_LINES, MAX_FILE_BYTES};
pub use schema::literal;

/// What a request's grammar allows beyond the tool schemas.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shape<'a> {
    /// Tool calls allowed in one response; 0 = any number.
    pub max_calls: u32,
    /// The files the model has read, for edits that always apply (`edit`); `None` leaves
    /// `edit_file` to its schema, `Some(&[])` (nothing read yet) leaves it out of the grammar.
    pub edit_targets: Option<&'a [EditTarget]>,
    /// The `answer` call's `thought` starts by citing a line of the tool results:
    /// `{"thought": "Line N: …", "answer": "…"}` ([`CITED_THOUGHT_START`]).
    pub cite_line: bool,
}

/// How a cited `thought` starts; a line number (1–9999) and `": "` follow.
pub const CITED_THOUGHT_START: &str = "Line ";

/// The `answer` tool's arguments with a cited thought: `{"thought": "Line N: …", "answer": "…"}`.
fn cited_answer_rule(builder: &mut schema::Builder) -> String {
    let string = builder.primitive("string");
    let character = builder.primitive("char");
    let body = format!(
        "{} [1-9] [0-9]{{0,3}} {} {character}* {} {string} {}",
        literal(&format!("{{\"thought\": \"{CITED_THOUGHT_START}")),
        literal(": "),
        literal("\", \"answer\": "),
        literal("}")
    );
    builder.named("cited-answer-args", &body)
}

/// The name of the tool whose arguments [`Shape::edit_targets`] constrains.
pub const EDIT_TOOL: &str = "edit_file";

/// The name of the start rule of every generated grammar.
pub const ROOT: &str = "root";

/// Builds the grammar for `tools` (the offered tools, `answer` included when `mode` uses it).
/// `None` when there are no tools: the output is free text.
pub fn build_grammar(tools: &[ToolSpec], mode: AnswerMode) -> Option<String> {
    build_shaped_grammar(tools, mode, Shape::default())
}

/// [`build_grammar`] with the limits and edit targets of `shape`.
pub fn build_shaped_grammar(tools: &[ToolSpec], mode: AnswerMode, shape: Shape<'_>) -> Option<String> {
    if tools.is_empty() {
        return None;
    }
    let mut builder = schema::Builder::default();
    let mut call_alternatives = Vec::new();
    let mut final_alternative = None;
    for (index, tool) in tools.iter().enumerate() {
        let prefix = format!("t{index}-{}", schema::rule_word(&tool.name));
        let args = match shape.edit_targets {
            Some(targets) if tool.name == EDIT_TOOL => match edit::edit_args_rule(&mut builder, targets) {
                Some(rule) => rule,
                // Nothing read that could be edited: the model reads first.
                None => continue,
            },
            // Only Lathe's own answer tool (in ToolRequired mode an `answer` is a client's tool).
            Some(_) | None
                if shape.cite_line && tool.name == FINAL_ANSWER_TOOL && mode != AnswerMode::ToolRequired =>
            {
                cited_answer_rule(&mut builder)
            }
            Some(_) | None => builder.schema_rule(&tool.input_schema, &tool.input_schema, &prefix, 0),
        };
        let head = literal(&format!("{}, \"arguments\": ", crate::pyjson::to_string(&tool.name)));
        let alternative = format!("{head} {args}");
        if mode != AnswerMode::ToolRequired && tool.name == FINAL_ANSWER_TOOL {
            final_alternative = Some(alternative);
        } else {
            call_alternatives.push(alternative);
        }
    }
    let open = literal("<tool_call>\n{\"name\": ");
    let close = literal("}\n</tool_call>");
    let mut rules = Vec::new();
    let mut root = Vec::new();
    if let Some(final_call) = final_alternative {
        rules.push(format!("final ::= {open} {final_call} {close}"));
        root.push("final".to_string());
    }
    if !call_alternatives.is_empty() {
        rules.push(format!("call ::= {open} ( {} ) {close}", call_alternatives.join(" | ")));
        let more = match shape.max_calls {
            0 => format!("( {} call )*", literal("\n")),
            1 => String::new(),
            max => format!("( {} call ){{0,{}}}", literal("\n"), max - 1),
        };
        rules.push(format!("calls ::= call {more}").trim_end().to_string());
        root.push("calls".to_string());
    }
    if matches!(mode, AnswerMode::Text | AnswerMode::Auto) || root.is_empty() {
        rules.push("text ::= [^<{`\\[ \\t\\r\\n] .*".to_string());
        root.push("text".to_string());
    }
    let mut out = format!("{ROOT} ::= {}\n", root.join(" | "));
    for rule in rules {
        out.push_str(&rule);
        out.push('\n');
    }
    out.push_str(&builder.finish());
    Some(out)
}

#[cfg(test)]
#[path = "grammar_tests.rs"]
mod tests;
