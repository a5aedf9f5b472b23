//! Quote removal: the value bash gives a word node (`\rm` → `rm`, `r''m` → `rm`, `$'\x72m'` → `rm`,
//! `"a b"` → `a b`). Expansions and substitutions keep their source text and mark the word dynamic.

use tree_sitter::Node;

use super::Word;

/// The value of a word-like node (`word`, `string`, `raw_string`, `ansi_c_string`,
/// `concatenation`, `number`, expansions, substitutions).
pub(super) fn eval(node: Node<'_>, src: &str) -> Word {
    let text = node.utf8_text(src.as_bytes()).unwrap_or("");
    match node.kind() {
        "word" | "number" | "variable_name" | "file_descriptor" => Word::literal(unescape_bare(text)),
        "command_name" => match node.named_child(0) {
            Some(child) => eval(child, src),
            None => Word::literal(unescape_bare(text)),
        },
        "raw_string" => Word::literal(strip(text, "'", "'")),
        "ansi_c_string" => Word::literal(ansi_c(strip(text, "$'", "'"))),
        "string" | "translated_string" => double_quoted(node, src),
        "concatenation" => {
            let mut word = Word::literal("");
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                let part = eval(child, src);
                word.text.push_str(&part.text);
                word.dynamic |= part.dynamic;
            }
            // Characters between named children (`=` in `a=$b`) are not nodes of their own.
            if node.named_child_count() == 0 {
                word.text = unescape_bare(text);
            }
            word
        }
        _ => Word { text: text.to_string(), dynamic: true },
    }
}

/// A `"…"` string: its literal content with `\"`, `\\`, `\$`, `` \` `` unescaped; dynamic when it
/// contains an expansion or substitution.
fn double_quoted(node: Node<'_>, src: &str) -> Word {
    let mut word = Word::literal("");
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let text = child.utf8_text(src.as_bytes()).unwrap_or("");
        match child.kind() {
            "string_content" => word.text.push_str(&unescape_double(text)),
            _ => {
                word.text.push_str(text);
                word.dynamic = true;
            }
        }
    }
    word
}

fn strip<'t>(text: &'t str, open: &str, close: &str) -> &'t str {
    let inner = text.strip_prefix(open).unwrap_or(text);
    inner.strip_suffix(close).unwrap_or(inner)
}

/// Unquoted text: a backslash keeps the next character (a backslash-newline disappears).
pub(super) fn unescape_bare(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(next) => out.push(next),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn unescape_double(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('"' | '\\' | '$' | '`') => out.extend(chars.next()),
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Decodes the escapes of a `$'…'` string (`\n`, `\t`, `\xHH`, `\NNN` octal, `\uHHHH`, `\UHHHHHHHH`,
/// `\cX`, `\e`, `\'`, `\"`, `\\`).
pub(super) fn ansi_c(text: &str) -> String {
    let mut bytes = Vec::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let push_char = |bytes: &mut Vec<u8>, c: char| {
        let mut buf = [0u8; 4];
        bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    };
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '\\' || i >= chars.len() {
            push_char(&mut bytes, c);
            continue;
        }
        let e = chars[i];
        i += 1;
        let simple = match e {
            'n' => Some(b'\n'),
            't' => Some(b'\t'),
            'r' => Some(b'\r'),
            'a' => Some(0x07),
            'b' => Some(0x08),
            'e' | 'E' => Some(0x1b),
            'f' => Some(0x0c),
            'v' => Some(0x0b),
            '\\' => Some(b'\\'),
            '\'' => Some(b'\''),
            '"' => Some(b'"'),
            '?' => Some(b'?'),
            _ => None,
        };
        if let Some(byte) = simple {
            bytes.push(byte);
            continue;
        }
        let digits = |i: &mut usize, radix: u32, max: usize| {
            let start = *i;
            while *i < chars.len() && *i - start < max && chars[*i].is_digit(radix) {
                *i += 1;
            }
            let s: String = chars[start..*i].iter().collect();
            u32::from_str_radix(&s, radix).ok()
        };
        match e {
            'x' => match digits(&mut i, 16, 2) {
                Some(value) => bytes.push(value as u8),
                None => bytes.extend_from_slice(b"\\x"),
            },
            'u' | 'U' => {
                let max = if e == 'u' { 4 } else { 8 };
                match digits(&mut i, 16, max).and_then(char::from_u32) {
                    Some(ch) => push_char(&mut bytes, ch),
                    None => {
                        bytes.push(b'\\');
                        push_char(&mut bytes, e);
                    }
                }
            }
            '0'..='7' => {
                i -= 1;
                if let Some(value) = digits(&mut i, 8, 3) {
                    bytes.push(value as u8);
                }
            }
            'c' if i < chars.len() => {
                bytes.push((chars[i] as u32 & 0x1f) as u8);
                i += 1;
            }
            other => {
                bytes.push(b'\\');
                push_char(&mut bytes, other);
            }
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}
