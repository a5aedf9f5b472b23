//! The tool contract: what a tool is ([`Tool`]), how the loop calls it ([`DynTool`]), and what it
//! returns ([`ToolOutput`], [`ToolError`]).
//!
//! A tool author writes a unit struct, an `Args` type deriving `Deserialize` + `JsonSchema`, and an
//! `impl Tool`. The blanket `impl<T: Tool> DynTool for T` gives it, for free:
//! 1. a compact JSON schema generated from `Args` ([`compact_schema`]) for the model-facing spec;
//! 2. validation of the model's arguments against that schema (jsonschema) *before* anything runs —
//!    a failure is [`ToolError::InvalidArguments`] naming the offending field;
//! 3. deserialisation into `Args`, then [`Tool::run`] with the session's [`ToolContext`].
//!
//! What a person sees of a call is also the tool's to say, so front ends never switch on tool
//! names: [`Tool::summary`] (one line for the call's row and its receipt), [`Tool::preview`] (what
//! the call would do, for a permission prompt: an edit's diff against the file on disk, a command
//! and its directory) and [`ToolOutput::view`] (how to show the result: an edit's diff,
//! `read 42 lines`).
//!
//! Capping and spilling of large outputs is each tool's job, using [`crate::output::cap_output`],
//! so that `ToolOutput::content` is always within the in-context budget.

use std::any::TypeId;
use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use futures::future::BoxFuture;
use lathe_protocol::{Content, ResultView, ToolPreview, ToolSpec};
use schemars::JsonSchema;
use serde_json::Value;

use crate::context::ToolContext;

/// What a call may do; decides concurrency (read-only calls of one response may run together) and
/// permission. Defined by `lathe-policy` (which decides on it) and re-exported here; a tool that
/// does not override [`Tool::effect`] is `Mutating` (fail closed).
pub use lathe_policy::Effect;

/// What a call touches, declared by the tool and judged by the policy (`lathe_policy::Access`).
pub use lathe_policy::Access;

/// Output of a successful run.
///
/// `is_error` marks a tool-level failure the model should see as an error (e.g. a shell command's
/// non-zero exit) while the call itself completed; `content` is already truncated to the
/// in-context cap, with the full text at `spill_path` when it was not.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    /// What the model sees: text, and images for `read_file` of an image.
    pub content: Vec<Content>,
    /// Whether the provider should be told this result is an error.
    pub is_error: bool,
    /// The exit status of a `shell` command (128 + signal number when killed by a signal).
    pub exit_code: Option<i32>,
    /// Where the full output was written when it exceeded the in-context cap.
    pub spill_path: Option<PathBuf>,
    /// For `todo_write`: the task list to show the user (`[{content, status}]`).
    pub todos: Option<Value>,
    /// How a front end may show this result instead of `content` (the diff of an edit, a line
    /// such as `read 42 lines`); `None` shows `content`. Never sent to the model.
    pub view: Option<ResultView>,
    /// Items the call adds to the ledger right after its result (a memory write's record); saved,
    /// never sent.
    pub ledger: Vec<lathe_protocol::Meta>,
    /// For a call that changed a file: which, and how many lines it added and removed, counted
    /// over the whole change (also when the diff shown is cut). Kept in the receipt
    /// ([`lathe_protocol::Receipt::change`]); never sent.
    pub change: Option<lathe_protocol::FileLines>,
    /// The run ends once this response's calls are answered, with no further request: a headless
    /// `exit_plan_mode`, whose plan is the run's result.
    pub ends_run: bool,
}

impl ToolOutput {
    /// A successful, single-text output.
    pub fn text(text: impl Into<String>) -> ToolOutput {
        ToolOutput { content: vec![Content::text(text)], ..ToolOutput::default() }
    }

    /// The concatenation of all text blocks (images are skipped); handy for logs and tests.
    pub fn text_content(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let Content::Text { text } = block {
                out.push_str(text);
            }
        }
        out
    }
}

/// Why a call produced no [`ToolOutput`]. Every variant becomes a result the model can read.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not match the tool's schema (or could not be deserialised); nothing ran.
    /// `message` is the schema error text and names the field (e.g. `/offset: "x" is not of type
    /// "integer"`).
    #[error("invalid arguments for {tool}: {message}")]
    InvalidArguments {
        /// The tool's model-facing name.
        tool: String,
        /// What is wrong, naming the field.
        message: String,
    },
    /// The tool could not do what was asked; the model can fix it. The message names the thing and
    /// the fix ("edit_file: old_string occurs 3 times in src/lib.rs (lines 10, 42, 77); ...").
    #[error("{0}")]
    Failed(String),
    /// A scope refused the call before it ran: a skill's `allowed-tools`, an agent's or a
    /// command's scoped tool list (`Bash(git diff *)`). The message names the scope and its owner;
    /// the call is recorded as denied.
    #[error("{0}")]
    Refused(String),
    /// The session's cancellation token fired; any process the tool started has been killed.
    #[error("interrupted")]
    Cancelled,
    /// The call exceeded its time limit (milliseconds); any process it started has been killed.
    #[error("timed out after {0} ms")]
    TimedOut(u64),
}

/// The typed trait tools implement (STYLE.md "Traits are small and fail safe").
///
/// Implemented by each built-in tool (`crate::builtin`) and later by MCP, skill and sub-agent
/// adapters. The loop never sees this trait directly: it uses the object-safe [`DynTool`].
pub trait Tool: Send + Sync + 'static {
    /// The arguments; the model-facing JSON schema is generated from this type. Field doc comments
    /// become the schema's `description`s, so keep them short.
    type Args: serde::de::DeserializeOwned + JsonSchema + Send;
    /// Model-facing name (`read_file`).
    fn name(&self) -> &'static str;
    /// What the tool does and when to use it (sent to the model; keep it short).
    fn description(&self) -> &'static str;
    /// What a call may do. Defaults to [`Effect::Mutating`] (fail closed).
    fn effect(&self) -> Effect {
        Effect::Mutating
    }
    /// What this call touches (files read or written, the command run), for the permission
    /// decision; called after the arguments validated, before the call runs. The default declares
    /// nothing, which the policy judges on the tool's name and [`Tool::effect`].
    fn access(&self, args: &Self::Args, ctx: &ToolContext) -> Access {
        let _ = (args, ctx);
        Access::Undeclared { read_only: self.effect() == Effect::ReadOnly }
    }
    /// One line about a call for the person watching (its row in the UI, its receipt): the path,
    /// the command or the pattern, at most 120 characters. Gets the raw arguments, which may not
    /// validate. Defaults to [`summarize_args`].
    fn summary(&self, args: &Value) -> String {
        summarize_args(args)
    }
    /// What this call would do, for a permission prompt: the unified diff an edit or write would
    /// make to the file on disk, the command and its directory. Called after the arguments
    /// validated, only when the user is asked; reads at most what the call itself would read and
    /// changes nothing. `None` (the default) leaves the front end to show the arguments.
    fn preview(&self, args: &Self::Args, ctx: &ToolContext) -> Option<ToolPreview> {
        let _ = (args, ctx);
        None
    }
    /// The tool's own preconditions, checked before anyone is asked to approve the call (a file
    /// read in this session and unchanged on disk since, `old_string` found exactly once): an
    /// `Err` answers the call at once with the error its run would give, and nobody is asked.
    /// Called after the arguments validated; reads at most what the call itself would read and
    /// changes nothing. The default checks nothing.
    fn precheck(&self, args: &Self::Args, ctx: &ToolContext) -> Result<(), ToolError> {
        let _ = (args, ctx);
        Ok(())
    }
    /// Runs one call. Must watch `ctx.cancel` and return [`ToolError::Cancelled`] promptly.
    fn run(
        &self,
        args: Self::Args,
        ctx: &ToolContext,
    ) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}

/// Object-safe form used by the registry and the loop; blanket-implemented for every [`Tool`].
pub trait DynTool: Send + Sync {
    /// Model-facing name.
    fn name(&self) -> &str;
    /// Name, description and compact JSON schema of the arguments.
    fn spec(&self) -> ToolSpec;
    /// The effect of this call (built-in tools ignore `args`; adapters may inspect them).
    fn effect(&self, args: &Value) -> Effect;
    /// One line for receipts and the UI: the path, the command or the pattern.
    fn summary(&self, args: &Value) -> String;
    /// Validates `args` (as [`DynTool::call`] does) and returns what the call touches
    /// ([`Tool::access`]); [`ToolError::InvalidArguments`] when they do not validate, so an invalid
    /// call is reported as invalid rather than judged.
    fn access(&self, args: &Value, ctx: &ToolContext) -> Result<Access, ToolError>;
    /// What the call would do, for a permission prompt ([`Tool::preview`]); `None` when the tool
    /// gives none or the arguments do not validate. Defaults to `None`.
    fn preview(&self, args: &Value, ctx: &ToolContext) -> Option<ToolPreview> {
        let _ = (args, ctx);
        None
    }
    /// The tool's own preconditions ([`Tool::precheck`]) for `args` that validated; `Ok` when
    /// the tool has none. No default: a wrapper must forward it, or its calls would be put to the
    /// user before failing.
    fn precheck(&self, args: &Value, ctx: &ToolContext) -> Result<(), ToolError>;
    /// Validates `args` against the schema (jsonschema) — on failure
    /// [`ToolError::InvalidArguments`] with the schema error, and nothing runs — then deserialises
    /// and runs.
    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;
}

impl<T: Tool> DynTool for T {
    fn name(&self) -> &str {
        Tool::name(self)
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: Tool::name(self).to_string(),
            description: self.description().to_string(),
            input_schema: compiled::<T>().schema.clone(),
        }
    }

    fn effect(&self, _args: &Value) -> Effect {
        Tool::effect(self)
    }

    fn summary(&self, args: &Value) -> String {
        Tool::summary(self, args)
    }

    fn access(&self, args: &Value, ctx: &ToolContext) -> Result<Access, ToolError> {
        let typed = typed_args::<T>(Tool::name(self), args.clone())?;
        Ok(Tool::access(self, &typed, ctx))
    }

    fn preview(&self, args: &Value, ctx: &ToolContext) -> Option<ToolPreview> {
        let typed = typed_args::<T>(Tool::name(self), args.clone()).ok()?;
        Tool::preview(self, &typed, ctx)
    }

    fn precheck(&self, args: &Value, ctx: &ToolContext) -> Result<(), ToolError> {
        let typed = typed_args::<T>(Tool::name(self), args.clone())?;
        Tool::precheck(self, &typed, ctx)
    }

    fn call<'a>(&'a self, args: Value, ctx: &'a ToolContext) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let typed = typed_args::<T>(Tool::name(self), args)?;
            self.run(typed, ctx).await
        })
    }
}

/// Validates `args` against `T`'s schema and deserialises them.
fn typed_args<T: Tool>(tool: &str, args: Value) -> Result<T::Args, ToolError> {
    compiled::<T>().validate(tool, &args)?;
    serde_json::from_value(args)
        .map_err(|e| ToolError::InvalidArguments { tool: tool.to_string(), message: e.to_string() })
}

/// An argument schema and its validator, compiled on the first call that needs it (advertising a
/// tool in the first request must not wait for validator compilation) and kept: the built-in tools
/// hold one per tool type ([`DynTool`]'s blanket impl), tools whose schema is made at run time
/// (the `task` and `skill` tools) one each.
#[derive(Debug)]
pub struct CompiledSchema {
    schema: Value,
    validator: OnceLock<Result<jsonschema::Validator, String>>,
}

impl CompiledSchema {
    /// Keeps `schema`; nothing is compiled yet.
    pub fn new(schema: Value) -> CompiledSchema {
        CompiledSchema { schema, validator: OnceLock::new() }
    }

    /// The schema, as given.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Checks `args` against the schema, with the errors of [`validate_args`], compiling the
    /// validator on the first call ([`compile_own`]).
    pub fn validate(&self, tool: &str, args: &Value) -> Result<(), ToolError> {
        let validator = self.validator.get_or_init(|| compile_own(&self.schema));
        match validator {
            Ok(validator) => check(tool, validator, args),
            Err(e) => Err(ToolError::InvalidArguments {
                tool: tool.to_string(),
                message: format!("the tool's own schema is invalid: {e}"),
            }),
        }
    }
}

/// The [`CompiledSchema`] of tool type `T`, cached for the life of the process.
fn compiled<T: Tool>() -> Arc<CompiledSchema> {
    static CACHE: OnceLock<Mutex<HashMap<TypeId, Arc<CompiledSchema>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let key = TypeId::of::<T>();
    if let Some(hit) = cache.lock().ok().and_then(|map| map.get(&key).cloned()) {
        return hit;
    }
    let schema = compact_schema::<T::Args>();
    let entry = Arc::new(CompiledSchema::new(schema));
    if let Ok(mut map) = cache.lock() {
        map.insert(key, entry.clone());
    }
    entry
}

/// The JSON schema of `A`, compacted for the model: draft 2020-12, subschemas inlined (no `$ref`),
/// without `$schema`, `title` or `format` keys or the root description, and string enums written
/// as `{"type": "string", "enum": [...]}` (with `null` allowed for optional ones).
pub fn compact_schema<A: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .for_deserialize()
        .into_generator();
    let mut value = generator.into_root_schema_for::<A>().to_value();
    strip_noise(&mut value);
    if let Value::Object(root) = &mut value {
        root.remove("description");
    }
    value
}

/// The string constants of a `oneOf`/`anyOf` made only of `{"type": "string", "const": ..}`.
fn string_consts(variants: &Value) -> Option<Vec<Value>> {
    variants
        .as_array()?
        .iter()
        .map(|v| {
            let is_string = v.get("type").and_then(Value::as_str) == Some("string");
            v.get("const").filter(|c| is_string && c.is_string()).cloned()
        })
        .collect()
}

/// Rewrites unit-enum schemas (`oneOf` of consts, possibly inside `anyOf [.., {"type":"null"}]`)
/// as a plain `enum`.
fn simplify_enum(map: &mut serde_json::Map<String, Value>) {
    if let Some(consts) = map.get("oneOf").and_then(string_consts) {
        map.remove("oneOf");
        map.insert("type".into(), Value::from("string"));
        map.insert("enum".into(), Value::Array(consts));
        return;
    }
    let Some(Value::Array(any)) = map.get("anyOf") else { return };
    let [first, second] = any.as_slice() else { return };
    let (inner, null) = if second.get("type").and_then(Value::as_str) == Some("null") {
        (first, second)
    } else {
        (second, first)
    };
    if null.get("type").and_then(Value::as_str) != Some("null") {
        return;
    }
    let consts = inner
        .get("enum")
        .filter(|_| inner.get("type").and_then(Value::as_str) == Some("string"))
        .and_then(Value::as_array)
        .cloned()
        .or_else(|| inner.get("oneOf").and_then(string_consts));
    if let Some(mut consts) = consts {
        consts.push(Value::Null);
        map.remove("anyOf");
        map.insert("type".into(), serde_json::json!(["string", "null"]));
        map.insert("enum".into(), Value::Array(consts));
    }
}

fn strip_noise(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.remove("$schema");
            map.remove("title");
            map.remove("format");
            if map.get("default").is_some_and(|d| d.is_null()) {
                map.remove("default");
            }
            simplify_enum(map);
            for (key, child) in map.iter_mut() {
                // `properties` maps field names to schemas: never strip a field called "title".
                if key == "properties" {
                    if let Value::Object(props) = child {
                        props.values_mut().for_each(strip_noise);
                    }
                } else {
                    strip_noise(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_noise),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {}
    }
}

/// Checks `args` against `schema`; the error lists every violation with its JSON pointer
/// (`/offset: "x" is not of type "integer"`, or `"path" is a required property`).
pub fn validate_args(tool: &str, schema: &Value, args: &Value) -> Result<(), ToolError> {
    let validator = compile_validator(schema).map_err(|e| ToolError::InvalidArguments {
        tool: tool.to_string(),
        message: format!("the tool's own schema is invalid: {e}"),
    })?;
    check(tool, &validator, args)
}

/// Compiles a validator for a tool's argument schema (draft 2020-12).
fn compile_validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::validator_for(schema).map_err(|e| e.to_string())
}

/// Compiles a validator for a schema Lathe wrote itself (a built-in tool's from [`compact_schema`],
/// the `task` and `skill` tools'), as draft 7. These schemas use only keywords that mean the same
/// in draft 7 and in draft 2020-12, which they are sent as (checked for every built-in tool by
/// `registry_tests`), so every call validates as before. The schema is checked against its draft's
/// meta-schema first, whose validator is compiled once per process, at the first tool call:
/// draft 7's is the cheapest (about 0.5 ms and 1.6 MB, 2020-12's 1.9 ms and 2.7 MB).
pub(crate) fn compile_own(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options().with_draft(jsonschema::Draft::Draft7).build(schema).map_err(|e| e.to_string())
}

fn check(tool: &str, validator: &jsonschema::Validator, args: &Value) -> Result<(), ToolError> {
    let problems: Vec<String> = validator
        .iter_errors(args)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() { e.to_string() } else { format!("{at}: {e}") }
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ToolError::InvalidArguments { tool: tool.to_string(), message: problems.join("; ") })
    }
}

/// A one-line summary of a call's arguments: the first of `command`, `path`, `pattern`, `url`,
/// `query` that is a string (with `pattern` followed by its `path` when both exist), otherwise the
/// count of `items`, otherwise the compact JSON (nothing for an empty object); one line
/// ([`one_line`]), at most 120 characters.
pub fn summarize_args(args: &Value) -> String {
    let field = |k: &str| args.get(k).and_then(Value::as_str);
    let line = if args.as_object().is_some_and(serde_json::Map::is_empty) {
        String::new()
    } else if let Some(command) = field("command") {
        command.to_string()
    } else if let Some(pattern) = field("pattern") {
        match field("path") {
            Some(path) => format!("{pattern} in {path}"),
            None => pattern.to_string(),
        }
    } else if let Some(path) = field("path").or_else(|| field("url")).or_else(|| field("query")) {
        path.to_string()
    } else if let Some(items) = args.get("items").and_then(Value::as_array) {
        format!("{} items", items.len())
    } else {
        args.to_string()
    };
    one_line(&line)
}

/// The first line of `text`, followed by ` …` when more lines follow, cut to 120 characters with
/// an ellipsis.
pub fn one_line(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let line = if lines.next().is_some() { format!("{first} …") } else { first.to_string() };
    if line.chars().count() > 120 {
        let cut: String = line.chars().take(119).collect();
        format!("{cut}…")
    } else {
        line
    }
}
