//! JSON written the way Python's `json.dumps` (and so the Qwen chat template's `tojson`) writes
//! it: `", "` between items and `": "` after keys, keys in insertion order, non-ASCII kept.
//!
//! The local model saw this spacing in training, the grammar makes it produce the same spacing,
//! and rendering history the same way keeps the re-rendered prompt identical to the tokens already
//! in the KV cache.

use serde::Serialize;
use serde_json::ser::Formatter;
use std::io;

/// `value` as Python's `json.dumps(value, ensure_ascii=False)` would print it.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, PythonFormatter);
    if value.serialize(&mut serializer).is_err() {
        return "null".to_string();
    }
    String::from_utf8(out).unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned())
}

struct PythonFormatter;

impl Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { writer.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { writer.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }
}

#[cfg(test)]
mod tests {
    use super::to_string;
    use serde_json::json;

    #[test]
    fn spaces_items_and_keys_like_python() {
        let value = json!({"b": [1, 2, {"c": null}], "a": "é\n\"q\"", "e": {}, "f": []});
        assert_eq!(to_string(&value), r#"{"b": [1, 2, {"c": null}], "a": "é\n\"q\"", "e": {}, "f": []}"#);
    }
}
