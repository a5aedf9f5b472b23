//! A definition put inside the function above it: the local model appends a new function after the
//! last function's `return` with that body's indentation (`    return 50\n\n    def f(a):`), so the
//! new function is unreachable code inside the old one. The strict `edit_file` makes it a sibling of
//! the function it was put into — top level for a module function, a method beside a method — and
//! says so; the result must parse and have nothing unreachable, or the edit is refused as before.

/// `new` (which is `old` plus appended lines starting with an indented `def` or `class`) with the
/// appended lines dedented to the indentation of the function or class `old` ends in within
/// `text`; `None` when the edit is not of that shape.
pub(crate) fn as_sibling(text: &str, old: &str, new: &str) -> Option<String> {
    let added = new.strip_prefix(old)?;
    let first = added.lines().find(|line| !line.trim().is_empty())?;
    let indent = indentation(first);
    let keyword = first.trim_start();
    if indent == 0 || !["def ", "async def ", "class "].iter().any(|start| keyword.starts_with(start)) {
        return None;
    }
    let end = text.find(old)? + old.len();
    let before = &text[..end];
    let target = before
        .lines()
        .rev()
        .filter(|line| !line.trim().is_empty())
        .find(|line| {
            let trimmed = line.trim_start();
            indentation(line) < indent
                && ["def ", "async def ", "class "].iter().any(|start| trimmed.starts_with(start))
        })
        .map(indentation)?;
    // The enclosing function must end where the definition was put: code below it would become
    // the new definition's.
    let mut after = text[end..].lines();
    if after.next().is_some_and(|rest| !rest.trim().is_empty())
        || after.find(|line| !line.trim().is_empty()).is_some_and(|next| indentation(next) > target)
    {
        return None;
    }
    let shift = indent - target;
    let mut dedented = String::with_capacity(added.len());
    for line in added.split_inclusive('\n') {
        if line.trim().is_empty() {
            dedented.push_str(line.trim_start_matches([' ', '\t']));
        } else if indentation(line) >= indent {
            dedented.push_str(&line[shift..]);
        } else {
            return None;
        }
    }
    Some(format!("{old}{dedented}"))
}

/// Whether the definition `added` to `old` in `new` has no body: its `def` or `class` line is the
/// last line with text.
pub(crate) fn definition_without_body(old: &str, new: &str) -> bool {
    let Some(added) = new.strip_prefix(old) else { return false };
    added.lines().rev().find(|line| !line.trim().is_empty()).is_some_and(|last| {
        let trimmed = last.trim_start();
        ["def ", "async def ", "class "].iter().any(|start| trimmed.starts_with(start))
            && trimmed.ends_with(':')
    })
}

/// Leading spaces and tabs of `line`, in bytes.
fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches([' ', '\t']).len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "def a():\n    return 50\n\n\ndef b(code):\n    return \"B-\" + str(code)\n";

    #[test]
    fn a_function_put_after_the_last_return_becomes_top_level() {
        let old = "    return \"B-\" + str(code)";
        let new =
            "    return \"B-\" + str(code)\n\n\n    def larger_of(a, b):\n        return a if a > b else b";
        assert_eq!(
            as_sibling(FILE, old, new).as_deref(),
            Some("    return \"B-\" + str(code)\n\n\ndef larger_of(a, b):\n    return a if a > b else b")
        );
    }

    #[test]
    fn a_method_put_inside_a_method_becomes_its_sibling() {
        let file = "class C:\n    def a(self):\n        return 1\n";
        let new = "        return 1\n\n        def b(self):\n            return 2";
        assert_eq!(
            as_sibling(file, "        return 1", new).as_deref(),
            Some("        return 1\n\n    def b(self):\n        return 2")
        );
    }

    #[test]
    fn other_edits_are_left_alone() {
        // Not an append, a top-level definition already, not a definition, a line less indented.
        assert_eq!(as_sibling(FILE, "    return 50", "    return 51"), None);
        assert_eq!(as_sibling(FILE, "    return 50", "    return 50\n\ndef c():\n    pass"), None);
        assert_eq!(as_sibling(FILE, "    return 50", "    return 50\n    x = 1"), None);
        assert_eq!(as_sibling(FILE, "    return 50", "    return 50\n    def c():\npass"), None);
    }

    #[test]
    fn code_below_the_insertion_is_never_taken_into_the_new_definition() {
        let file = "def a(x):\n    if x:\n        return 1\n    return 2\n";
        let new = "        return 1\n        def b():\n            print(3)";
        assert_eq!(as_sibling(file, "        return 1", new), None);
    }

    #[test]
    fn a_definition_without_a_body_is_noticed() {
        assert!(definition_without_body("    return 50", "    return 50\n\n\n    def product_of(a, b):"));
        assert!(!definition_without_body(
            "    return 50",
            "    return 50\n\n    def p(a, b):\n        return a * b"
        ));
    }
}
