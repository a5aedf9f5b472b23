//! JSON Schema → GBNF rules for tool arguments.
//!
//! Supported: `type` (one or a list) of `object` with `properties` / `required`, `string`
//! (`minLength`), `integer` (`minimum ≥ 0` → no sign; `maximum` → fewer digits than the maximum,
//! which keeps every value in range), `number`, `boolean`, `null`, `array` (`items`, `minItems`,
//! `maxItems`), plus `enum`, `const`, `anyOf` / `oneOf` and local `$ref`s (`#/$defs/…`,
//! `#/definitions/…`). Unknown constructs and nesting deeper than [`MAX_DEPTH`] become a generic
//! JSON value. Objects emit their properties in schema order, each optional one may be left out;
//! no other keys are produced.

use std::collections::BTreeMap;

use serde_json::Value;

/// Nesting depth past which a schema becomes a generic JSON value.
pub const MAX_DEPTH: usize = 12;

/// Shared primitive rules, emitted only when used.
const PRIMITIVES: &[(&str, &str)] = &[
    ("string", r#""\"" char* "\"""#),
    ("char", r#"[^"\\\x00-\x1F\x7F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )"#),
    ("integer", r#""-"? uinteger"#),
    ("uinteger", r#""0" | [1-9] [0-9]{0,15}"#),
    ("number", r#""-"? uinteger ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )?"#),
    ("boolean", r#""true" | "false""#),
    ("null", r#""null""#),
    ("value", "object | array | string | number | boolean | null"),
    ("object", r#""{" ( string ": " value ( ", " string ": " value )* )? "}""#),
    ("array", r#""[" ( value ( ", " value )* )? "]""#),
];

/// Which primitives depend on which (so `finish` emits a closed set).
fn primitive_deps(name: &str) -> &'static [&'static str] {
    match name {
        "string" => &["char"],
        "integer" | "number" => &["uinteger"],
        "value" => &["object", "array", "string", "number", "boolean", "null"],
        "object" => &["string", "value"],
        "array" => &["value"],
        _ => &[],
    }
}

/// Collects rules while schemas are translated.
#[derive(Debug, Default)]
pub struct Builder {
    rules: BTreeMap<String, String>,
    order: Vec<String>,
    primitives: Vec<&'static str>,
}

impl Builder {
    /// Returns a rule expression matching JSON values valid under `schema`; `root` is the document
    /// `$ref`s resolve against; `name` prefixes the rules created.
    pub fn schema_rule(&mut self, schema: &Value, root: &Value, name: &str, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return self.primitive("value");
        }
        let Some(object) = schema.as_object() else {
            // `true` or a non-object schema: anything.
            return self.primitive("value");
        };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            return match resolve(root, reference) {
                Some(target) => self.schema_rule(target, root, name, depth + 1),
                None => self.primitive("value"),
            };
        }
        if let Some(value) = object.get("const") {
            return literal(&crate::pyjson::to_string(value));
        }
        if let Some(Value::Array(values)) = object.get("enum")
            && !values.is_empty()
        {
            let alternatives: Vec<String> =
                values.iter().map(|value| literal(&crate::pyjson::to_string(value))).collect();
            return format!("( {} )", alternatives.join(" | "));
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(options)) = object.get(key)
                && !options.is_empty()
            {
                let alternatives: Vec<String> = options
                    .iter()
                    .enumerate()
                    .map(|(i, option)| self.schema_rule(option, root, &format!("{name}-{i}"), depth + 1))
                    .collect();
                return self.named(name, &alternatives.join(" | "));
            }
        }
        match object.get("type") {
            Some(Value::String(kind)) => self.typed_rule(kind, object, root, name, depth),
            Some(Value::Array(kinds)) => {
                let alternatives: Vec<String> = kinds
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|kind| self.typed_rule(kind, object, root, &format!("{name}-{kind}"), depth))
                    .collect();
                if alternatives.is_empty() {
                    return self.primitive("value");
                }
                self.named(name, &alternatives.join(" | "))
            }
            _ if object.contains_key("properties") => self.typed_rule("object", object, root, name, depth),
            _ => self.primitive("value"),
        }
    }

    fn typed_rule(
        &mut self,
        kind: &str,
        schema: &serde_json::Map<String, Value>,
        root: &Value,
        name: &str,
        depth: usize,
    ) -> String {
        match kind {
            "string" => match schema.get("minLength").and_then(Value::as_u64) {
                Some(min) if min > 0 => {
                    self.primitive("char");
                    format!("\"\\\"\" char{{{min},}} \"\\\"\"")
                }
                _ => self.primitive("string"),
            },
            "integer" => self.integer_rule(schema),
            "number" => self.primitive("number"),
            "boolean" => self.primitive("boolean"),
            "null" => self.primitive("null"),
            "array" => self.array_rule(schema, root, name, depth),
            "object" => self.object_rule(schema, root, name, depth),
            _ => self.primitive("value"),
        }
    }

    fn integer_rule(&mut self, schema: &serde_json::Map<String, Value>) -> String {
        let minimum = schema.get("minimum").and_then(Value::as_f64);
        let exclusive = schema.get("exclusiveMinimum").and_then(Value::as_f64);
        let non_negative = minimum.is_some_and(|min| min >= 0.0) || exclusive.is_some_and(|min| min >= -1.0);
        let positive = minimum.is_some_and(|min| min >= 1.0) || exclusive.is_some_and(|min| min >= 0.0);
        let maximum = schema.get("maximum").and_then(Value::as_f64);
        let extra_digits = match maximum {
            // Every number with fewer digits than `max` is below it.
            Some(max) if (10.0..1e16).contains(&max) => (max.log10().floor() as u32).max(1) - 1,
            _ => 15,
        };
        if !positive && extra_digits == 15 {
            return self.primitive(if non_negative { "uinteger" } else { "integer" });
        }
        let sign = if non_negative { "" } else { "\"-\"? " };
        let zero = if positive { "" } else { "\"0\" | " };
        format!("( {sign}( {zero}[1-9] [0-9]{{0,{extra_digits}}} ) )")
    }

    fn array_rule(
        &mut self,
        schema: &serde_json::Map<String, Value>,
        root: &Value,
        name: &str,
        depth: usize,
    ) -> String {
        let item = match schema.get("items") {
            Some(items) => self.schema_rule(items, root, &format!("{name}-item"), depth + 1),
            None => self.primitive("value"),
        };
        let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0).min(64);
        let max = schema.get("maxItems").and_then(Value::as_u64).map(|max| max.min(1024));
        let more = match (min, max) {
            (_, Some(0)) => return self.named(name, "\"[\" \"]\""),
            (0 | 1, None) => format!("( \", \" {item} )*"),
            (min, None) => format!("( \", \" {item} ){{{},}}", min - 1),
            (min, Some(max)) => format!("( \", \" {item} ){{{},{}}}", min.saturating_sub(1), max.max(1) - 1),
        };
        let body = if min == 0 { format!("( {item} {more} )?") } else { format!("{item} {more}") };
        self.named(name, &format!("\"[\" {body} \"]\""))
    }

    fn object_rule(
        &mut self,
        schema: &serde_json::Map<String, Value>,
        root: &Value,
        name: &str,
        depth: usize,
    ) -> String {
        let Some(Value::Object(properties)) = schema.get("properties") else {
            return self.primitive("object");
        };
        if properties.is_empty() {
            return literal("{}");
        }
        let required: Vec<&str> = match schema.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let props: Vec<(String, bool)> = properties
            .iter()
            .enumerate()
            .map(|(i, (key, value))| {
                let value_rule =
                    self.schema_rule(value, root, &format!("{name}-{}", rule_word(key)), depth + 1);
                let pair = self.named(
                    &format!("{name}-kv{i}"),
                    &format!("{} {value_rule}", literal(&format!("{}: ", crate::pyjson::to_string(key)))),
                );
                (pair, required.contains(&key.as_str()))
            })
            .collect();
        let count = props.len();
        // rest[i]: properties i.. after something was already written (each preceded by ", ").
        let mut rest: Vec<String> = vec![String::new(); count + 1];
        for i in (0..count).rev() {
            let (pair, is_required) = &props[i];
            let tail = &rest[i + 1];
            let body = if *is_required {
                format!("\", \" {pair} {tail}")
            } else {
                format!("( \", \" {pair} )? {tail}")
            };
            rest[i] = self.named(&format!("{name}-rest{i}"), body.trim());
        }
        // first[i]: properties i.., at least one written, nothing before.
        let mut first: Vec<String> = vec![String::new(); count + 1];
        for i in (0..count).rev() {
            let (pair, is_required) = &props[i];
            let with = format!("{pair} {}", rest[i + 1]);
            let body = if *is_required || i + 1 == count {
                with
            } else {
                format!("{} | {}", with.trim(), first[i + 1])
            };
            first[i] = self.named(&format!("{name}-first{i}"), body.trim());
        }
        let all_optional = props.iter().all(|(_, is_required)| !is_required);
        let inner = if all_optional { format!("{}?", first[0]) } else { first[0].clone() };
        self.named(name, &format!("\"{{\" {inner} \"}}\""))
    }

    /// Adds `name ::= body` (a fresh name if taken) and returns the name.
    pub(crate) fn named(&mut self, name: &str, body: &str) -> String {
        let mut unique = name.to_string();
        let mut n = 1;
        while self.rules.contains_key(&unique) || PRIMITIVES.iter().any(|(p, _)| *p == unique) {
            n += 1;
            unique = format!("{name}-{n}");
        }
        self.rules.insert(unique.clone(), body.to_string());
        self.order.push(unique.clone());
        unique
    }

    /// Marks the shared primitive `name` (and what it uses) as needed; returns its rule name.
    pub(crate) fn primitive(&mut self, name: &'static str) -> String {
        let mut pending = vec![name];
        while let Some(next) = pending.pop() {
            if !self.primitives.contains(&next) {
                self.primitives.push(next);
                pending.extend(primitive_deps(next));
            }
        }
        name.to_string()
    }

    /// The rules collected, one `name ::= body` per line.
    pub fn finish(self) -> String {
        let mut out = String::new();
        for name in &self.order {
            if let Some(body) = self.rules.get(name) {
                out.push_str(&format!("{name} ::= {body}\n"));
            }
        }
        for (name, body) in PRIMITIVES {
            if self.primitives.contains(name) {
                out.push_str(&format!("{name} ::= {body}\n"));
            }
        }
        out
    }
}

fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

/// `name` reduced to the characters GBNF allows in rule names (`[a-zA-Z0-9-]`).
pub fn rule_word(name: &str) -> String {
    let word: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
    if word.is_empty() { "x".to_string() } else { word }
}

/// `text` as a GBNF string literal.
pub fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
