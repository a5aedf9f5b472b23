//! Arithmetic on values known only at run time. Bash evaluates array subscripts inside arithmetic,
//! and a subscript may hold a command substitution: with `x='a[$(touch p)]'`, each of `$((x))`,
//! `((x))`, `[[ x -eq 1 ]]`, `[[ -v x ]]`, `${a[x]}`, `${s:x}` and `for ((i=0; i<x; i++))` runs
//! `touch p`. The value may come from a file (`x=$(cat f)`), so any such context that names a
//! variable is reported as a command of its own that is not read-only; so are the indirect
//! expansion `${!x}` and the prompt expansion `${x@P}`, which evaluate a value the same way.

use tree_sitter::Node;

/// Arithmetic operators of `[[ … ]]` (`-eq` and friends evaluate both operands as arithmetic).
const ARITHMETIC_TESTS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// Test operators that evaluate a variable name, subscript included (`-v a[$(…)]`).
const NAME_TESTS: &[&str] = &["-v", "-R"];

/// The source text of every arithmetic context under `node` that is not made of number literals
/// alone, outermost first.
pub(super) fn runtime_arithmetic(node: Node<'_>, src: &str) -> Vec<String> {
    let mut found = Vec::new();
    visit(node, src, &mut found);
    found
}

fn visit(node: Node<'_>, src: &str, found: &mut Vec<String>) {
    let text = node.utf8_text(src.as_bytes()).unwrap_or("");
    let risky = match node.kind() {
        "arithmetic_expansion" => !numeric(text.trim_start_matches('$').trim_start_matches(['(', '['])),
        "compound_statement" if text.starts_with("((") => !numeric(&text[2..]),
        "c_style_for_statement" => {
            let head_end =
                node.child_by_field_name("body").map_or(text.len(), |b| b.start_byte() - node.start_byte());
            !numeric(
                text.get(..head_end)
                    .unwrap_or(text)
                    .trim_start_matches("for")
                    .trim_end()
                    .trim_end_matches("do"),
            )
        }
        "subscript" => node
            .child_by_field_name("index")
            .map(|index| index.utf8_text(src.as_bytes()).unwrap_or(""))
            .is_some_and(|index| !matches!(index, "@" | "*") && !numeric(index)),
        // `${!x}` reads the variable named by x's value (a subscript there is evaluated) and
        // `${x@P}` expands x's value as a prompt, command substitutions included.
        "expansion" => {
            text.starts_with("${!")
                || text.ends_with("@P}")
                || substring_offset(text).is_some_and(|rest| !numeric(rest))
        }
        "test_command" => test_evaluates(node, src, text.starts_with("[[")),
        _ => false,
    };
    if risky {
        found.push(text.to_string());
        return;
    }
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        visit(child, src, found);
    }
}

/// Whether `text` is arithmetic over number literals only (no names, expansions or subscripts).
fn numeric(text: &str) -> bool {
    text.chars().all(|c| c.is_ascii_digit() || " \t\n+-*/%()<>=!&|^~?:,;".contains(c))
}

/// The offset and length of `${name:offset:length}` (not `${name:-word}` and friends).
fn substring_offset(text: &str) -> Option<&str> {
    let inner = text.strip_prefix("${")?.strip_suffix('}')?;
    let inner = inner.trim_start_matches(['#', '!']);
    let name_end = inner.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || "@*#?$!-".contains(c)))?;
    let mut rest = &inner[name_end..];
    if rest.starts_with('[') {
        rest = &rest[rest.find(']')? + 1..];
    }
    let offset = rest.strip_prefix(':')?;
    (!offset.starts_with(['-', '=', '?', '+'])).then_some(offset)
}

/// Whether a `[[ … ]]` (`double`) or `[ … ]` test evaluates a run-time value as arithmetic or
/// as a variable name.
fn test_evaluates(node: Node<'_>, src: &str, double: bool) -> bool {
    let text = |n: Node<'_>| n.utf8_text(src.as_bytes()).unwrap_or("").to_string();
    let operator = |n: Node<'_>| {
        let mut cursor = n.walk();
        let op = n.children(&mut cursor).find(|c| c.kind() == "test_operator").map(text);
        op.or_else(|| n.child_by_field_name("operator").map(text))
    };
    match node.kind() {
        "unary_expression" if operator(node).is_some_and(|op| NAME_TESTS.contains(&op.as_str())) => true,
        "binary_expression"
            if double && operator(node).is_some_and(|op| ARITHMETIC_TESTS.contains(&op.as_str())) =>
        {
            let literal = |field: &str| {
                node.child_by_field_name(field).is_some_and(|side| {
                    side.kind() == "number"
                        || (side.kind() == "simple_expansion"
                            && matches!(text(side).as_str(), "$#" | "$?" | "$$" | "$!"))
                        || (side.kind() == "word" && text(side).chars().all(|c| c.is_ascii_digit()))
                })
            };
            !(literal("left") && literal("right"))
        }
        "command_substitution" | "process_substitution" => false,
        _ => {
            let mut cursor = node.walk();
            let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
            children.into_iter().any(|child| test_evaluates(child, src, double))
        }
    }
}
