//! [`LocalProvider`]: the [`Provider`] running a GGUF model in-process.
//!
//! `stream` renders the request (ChatML + tools block, [`crate::chatml`]), builds the grammar
//! ([`crate::grammar`]) and hands both to the inference thread (`engine`, feature `llama`), which
//! owns the model, the llama.cpp context and its KV cache, and serves requests one at a time. The
//! thread streams [`ModelEvent`]s back through a channel; the returned stream always ends with
//! exactly one `Stop` or `Error`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use lathe_protocol::{LedgerItem, ModelEvent, ModelRequest, ProviderError};
use lathe_provider::{ModelStream, Provider};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::chatml;
use crate::config::{AnswerMode, LocalConfig};
use crate::grammar;
use crate::stats::LocalStats;

/// Decoding settings of one request, resolved from the request and the config.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(not(feature = "llama"), allow(dead_code))]
pub(crate) struct Sampling {
    /// 0 = greedy.
    pub temperature: f32,
    pub top_p: f32,
    pub seed: u32,
    pub max_output_tokens: u32,
}

/// One request as the inference thread sees it.
#[cfg_attr(not(feature = "llama"), allow(dead_code))]
pub(crate) struct Job {
    pub prompt: String,
    pub grammar: Option<String>,
    pub mode: AnswerMode,
    pub sampling: Sampling,
    pub call_id_prefix: String,
    /// Logits added to the answer tool's name (see [`LocalConfig::answer_bias`]); 0 = none.
    pub answer_bias: f32,
    pub events: mpsc::UnboundedSender<ModelEvent>,
    pub cancel: CancellationToken,
}

/// The local model provider (name `local`). Cheap to share behind an `Arc`; requests are served
/// one at a time, in order, by one inference thread that keeps the KV cache between them.
pub struct LocalProvider {
    config: LocalConfig,
    model_path: PathBuf,
    model_name: String,
    stats: Arc<Mutex<LocalStats>>,
    requests: AtomicU64,
    /// The workspace's path as written and as resolved ([`crate::relative::roots`]), taken out of
    /// every prompt; found once, the workspace does not move.
    roots: Vec<String>,
    #[cfg(feature = "llama")]
    worker: crate::engine::Worker,
}

impl std::fmt::Debug for LocalProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalProvider")
            .field("model_path", &self.model_path)
            .field("config", &self.config)
            .finish()
    }
}

impl LocalProvider {
    /// Checks the model file and loads it on a new inference thread (about a second for the 0.5B).
    ///
    /// # Errors
    /// `ProviderError::Config` when this build has no local model support (feature `llama` off),
    /// the model file is missing, is not GGUF, has an unsupported architecture, or llama.cpp
    /// cannot load it or create a context of `context_tokens`.
    pub fn new(config: LocalConfig) -> Result<Self, ProviderError> {
        let model_path = config.resolved_model_path();
        if !crate::INFERENCE_AVAILABLE {
            return Err(ProviderError::Config {
                message: "this build has no local model support; build with --features local".into(),
            });
        }
        crate::gguf::validate_model_file(&model_path)
            .map_err(|err| ProviderError::Config { message: err.to_string() })?;
        let model_name = model_path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_else(|| "local".to_string());
        let stats = Arc::new(Mutex::new(LocalStats::default()));
        #[cfg(feature = "llama")]
        let worker =
            crate::engine::Worker::spawn(&config, &model_path, model_name.clone(), Arc::clone(&stats))?;
        let roots = config.workspace.as_deref().map(crate::relative::roots).unwrap_or_default();
        Ok(LocalProvider {
            config,
            model_path,
            model_name,
            stats,
            requests: AtomicU64::new(0),
            roots,
            #[cfg(feature = "llama")]
            worker,
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &LocalConfig {
        &self.config
    }

    /// The model file in use.
    pub fn model_path(&self) -> &std::path::Path {
        &self.model_path
    }

    /// The model name reported in `Started` events (the GGUF file stem).
    pub fn model_name(&self) -> &str {
        &self.model_name
    }

    /// Figures of the last completed request (token counts, times, speeds).
    pub fn stats(&self) -> LocalStats {
        match self.stats.lock() {
            Ok(stats) => *stats,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }

    /// Prompt tokens the last request actually evaluated (the rest came from the KV cache).
    pub fn last_prompt_eval_tokens(&self) -> u64 {
        self.stats().prompt_eval_tokens
    }

    /// Renders the prompt `stream` would evaluate for `request` (for inspection and tests).
    pub fn render(&self, request: &ModelRequest) -> String {
        let (request, _) = self.prepare(request);
        self.prompt(&request, self.config.answer_mode)
    }

    /// The ChatML prompt of `request` in `mode`, the workspace's path written relative to it
    /// ([`crate::relative`]): the same task reads the same in every directory.
    fn prompt(&self, request: &ModelRequest, mode: AnswerMode) -> String {
        let prompt = chatml::render_prompt_with(request, mode, self.config.restate_task);
        if self.roots.is_empty() { prompt } else { crate::relative::relativize(&prompt, &self.roots) }
    }

    /// `request` as the model sees it — tools with their required parameters only
    /// ([`LocalConfig::lean_schemas`]) and, for a question answered through the `answer` tool,
    /// the worked example ([`LocalConfig::question_example`]) — and whether that question
    /// treatment applies (the answer's thought then starts by citing a line). It depends only on
    /// the request's last user message, not on the calls made since, so the system turn stays the
    /// same for every request of a user turn; it changes when a session switches between a
    /// question and a change, and the next request then evaluates its whole prompt again.
    fn prepare(&self, request: &ModelRequest) -> (ModelRequest, bool) {
        let mut prepared = request.clone();
        if self.config.lean_schemas {
            prepared.tools = chatml::lean_tools(&request.tools);
        }
        let answers_through_tool =
            matches!(self.config.answer_mode, AnswerMode::FinalAnswerTool | AnswerMode::Auto);
        let question = self.config.question_example
            && answers_through_tool
            && !request.tools.is_empty()
            && asks_a_question(request);
        if question {
            chatml::add_question_example(&mut prepared);
        }
        (prepared, question)
    }

    /// Low-level: streams the continuation of an already rendered `prompt` (ChatML text ending
    /// with the open assistant turn), constrained by `grammar` (GBNF, start rule `root`) if given.
    /// Output is parsed as in [`AnswerMode::ToolRequired`] when a grammar is given, as text
    /// otherwise. For benchmarks and probes; agents use [`Provider::stream`].
    pub fn stream_prompt(
        &self,
        prompt: String,
        grammar: Option<String>,
        max_output_tokens: u32,
        cancel: CancellationToken,
    ) -> ModelStream {
        let request_number = self.requests.fetch_add(1, Ordering::Relaxed);
        let (events, receiver) = mpsc::unbounded_channel();
        let request = ModelRequest { max_output_tokens, ..ModelRequest::default() };
        let job = Job {
            prompt,
            grammar,
            mode: AnswerMode::ToolRequired,
            sampling: Sampling {
                seed: self.config.seed.wrapping_add(request_number as u32),
                ..self.sampling(&request)
            },
            call_id_prefix: format!("call_local_{request_number}_"),
            answer_bias: 0.0,
            events,
            cancel,
        };
        self.submit(job);
        terminated(receiver)
    }

    fn submit(&self, job: Job) {
        #[cfg(feature = "llama")]
        self.worker.submit(job);
        #[cfg(not(feature = "llama"))]
        {
            let _ = job.events.send(ModelEvent::Error {
                error: ProviderError::Config { message: "this build has no local model support".into() },
            });
        }
    }

    fn sampling(&self, request: &ModelRequest) -> Sampling {
        let limit = match request.max_output_tokens {
            0 => self.config.max_output_tokens,
            requested => requested.min(self.config.max_output_tokens),
        };
        Sampling {
            temperature: request.temperature.unwrap_or(self.config.temperature).max(0.0),
            top_p: request.top_p.unwrap_or(self.config.top_p).clamp(0.0, 1.0),
            seed: self.config.seed,
            max_output_tokens: limit.max(1),
        }
    }
}

impl Provider for LocalProvider {
    fn name(&self) -> &str {
        "local"
    }

    /// [`LocalConfig::max_calls_per_response`] (the grammar admits no more), `None` when unlimited.
    fn max_calls_per_response(&self) -> Option<u32> {
        Some(self.config.max_calls_per_response).filter(|max| *max > 0)
    }

    fn stream(&self, request: &ModelRequest, cancel: CancellationToken) -> ModelStream {
        let (prepared, cite_line) = self.prepare(request);
        let request = &prepared;
        let mode = self.config.answer_mode;
        let mut tools = chatml::offered_tools(request, mode);
        let mut grammar_mode = effective_mode(mode, request);
        if self.config.questions_read_only && asks_a_question(request) {
            // A small model asked "which file defines f?" renames a function in some file so
            // that its answer is true; a question gets no file-changing tool.
            tools.retain(|tool| !FILE_CHANGING_TOOLS.contains(&tool.name.as_str()));
        }
        if self.config.act_first && must_act(request) && tools.len() > 1 {
            // Nothing looked at yet in this turn, a failed call, or Lathe asking it to go on: a
            // small model "answers" a task it has not done (it claims the fix, or repeats the
            // error's text as its answer); it must make a real call first.
            tools.retain(|tool| tool.name != chatml::FINAL_ANSWER_TOOL);
            grammar_mode = AnswerMode::ToolRequired;
        }
        let request_number = self.requests.fetch_add(1, Ordering::Relaxed);
        let (events, receiver) = mpsc::unbounded_channel();
        let job = Job {
            prompt: self.prompt(request, mode),
            // A question's answer starts its thought by citing the line that holds the answer.
            grammar: self.grammar(request, &tools, grammar_mode, cite_line),
            mode: grammar_mode,
            sampling: Sampling {
                // A different (still reproducible) random stream for every request.
                seed: self.config.seed.wrapping_add(request_number as u32),
                ..self.sampling(request)
            },
            call_id_prefix: format!("call_local_{request_number}_"),
            answer_bias: if after_tool_result(request) && grammar_mode != AnswerMode::ToolRequired {
                self.config.answer_bias
            } else {
                0.0
            },
            events,
            cancel,
        };
        self.submit(job);
        terminated(receiver)
    }
}

impl LocalProvider {
    /// The grammar of `request`: the tools' schemas, at most
    /// [`LocalConfig::max_calls_per_response`] calls, and (with [`LocalConfig::edit_grammar`])
    /// `edit_file` limited to edits that apply to the files read so far; with `cite_line`, the
    /// answer's thought starts by citing a line ([`grammar::Shape::cite_line`]).
    fn grammar(
        &self,
        request: &ModelRequest,
        tools: &[lathe_protocol::ToolSpec],
        mode: AnswerMode,
        cite_line: bool,
    ) -> Option<String> {
        let edits = self.config.edit_grammar && tools.iter().any(|tool| tool.name == grammar::EDIT_TOOL);
        let targets = edits.then(|| {
            let workspace = self.config.workspace.clone().unwrap_or_else(|| PathBuf::from("."));
            crate::targets::edit_targets(request, &workspace)
        });
        let shape = grammar::Shape {
            max_calls: self.config.max_calls_per_response,
            edit_targets: targets.as_deref(),
            cite_line,
        };
        grammar::build_shaped_grammar(tools, mode, shape)
    }
}

/// The grammar of this request: [`AnswerMode::Auto`] forces a call until the model has seen a
/// tool result in this turn, then allows text too.
fn effective_mode(mode: AnswerMode, request: &ModelRequest) -> AnswerMode {
    match mode {
        AnswerMode::Auto if !after_tool_result(request) => AnswerMode::FinalAnswerTool,
        other => other,
    }
}

/// The tools that change files, withheld from the grammar for a question.
const FILE_CHANGING_TOOLS: [&str; 2] = ["write_file", "edit_file"];

/// Words that make a message a request for a change even when it ends with `?` ("can you fix
/// it?"), compared case-insensitively with its words.
const CHANGE_WORDS: [&str; 24] = [
    "add",
    "change",
    "create",
    "delete",
    "edit",
    "fix",
    "implement",
    "insert",
    "make",
    "modify",
    "move",
    "refactor",
    "remove",
    "rename",
    "replace",
    "rewrite",
    "set",
    "update",
    "write",
    "correct",
    "repair",
    "convert",
    "append",
    "patch",
];

/// Whether the user's last message is a question that asks for no change: a sentence of it ends
/// with `?` ("Which line defines f? Answer with the number.") and none of its words is one of
/// [`CHANGE_WORDS`].
fn asks_a_question(request: &ModelRequest) -> bool {
    let Some(text) = request.messages.iter().rev().find_map(|item| match item {
        LedgerItem::User(message) if message.origin == lathe_protocol::UserOrigin::User => {
            Some(message.text_content())
        }
        LedgerItem::User(_)
        | LedgerItem::Assistant(_)
        | LedgerItem::ToolResult(_)
        | LedgerItem::Compaction(_)
        | LedgerItem::Meta(_) => None,
    }) else {
        return false;
    };
    let asks =
        text.match_indices('?').any(|(at, _)| text[at + 1..].chars().next().is_none_or(char::is_whitespace));
    asks && !text
        .split(|c: char| !c.is_alphanumeric())
        .any(|word| CHANGE_WORDS.iter().any(|change| change.eq_ignore_ascii_case(word)))
}

/// Whether the model has seen a tool result since the last message from the user.
fn acted_this_turn(request: &ModelRequest) -> bool {
    for item in request.messages.iter().rev() {
        match item {
            LedgerItem::ToolResult(_) => return true,
            LedgerItem::User(message) if message.origin == lathe_protocol::UserOrigin::User => return false,
            LedgerItem::User(_)
            | LedgerItem::Assistant(_)
            | LedgerItem::Compaction(_)
            | LedgerItem::Meta(_) => {}
        }
    }
    false
}

/// Whether the model's next response must be a real call: nothing looked at yet in this user
/// turn, the latest file change of the turn failed (up to [`MAX_FAILED_CHANGES`] in a row: a small
/// model reads the file again and then claims the change it did not make), or the last message is
/// one Lathe injected (a check before stopping, a Stop hook's reason) that asks it to go on.
fn must_act(request: &ModelRequest) -> bool {
    let last = request.messages.iter().rev().find(|item| !matches!(item, LedgerItem::Meta(_)));
    match last {
        Some(LedgerItem::User(message)) if message.origin != lathe_protocol::UserOrigin::User => true,
        _ => {
            !acted_this_turn(request)
                || failed_changes_since_success(request).is_some_and(|n| n < MAX_FAILED_CHANGES)
        }
    }
}

/// Failed file changes in a row after which the model may answer again (and say it could not).
const MAX_FAILED_CHANGES: usize = 4;

/// How many file-changing calls failed (status `Failed`: the tool refused or could not run them)
/// since the last one that succeeded or was denied in this user turn, when the latest one failed;
/// `None` otherwise.
fn failed_changes_since_success(request: &ModelRequest) -> Option<usize> {
    let mut failed = 0;
    for item in request.messages.iter().rev() {
        match item {
            LedgerItem::ToolResult(result) if changes_files(request, &result.call_id) => {
                // A change the user or a rule denied is not the model's to redo.
                if !result.is_error || result.status != lathe_protocol::ToolStatus::Failed {
                    break;
                }
                failed += 1;
            }
            LedgerItem::User(message) if message.origin == lathe_protocol::UserOrigin::User => break,
            _ => {}
        }
    }
    (failed > 0).then_some(failed)
}

/// Whether the call `call_id` of the conversation is one of [`FILE_CHANGING_TOOLS`].
fn changes_files(request: &ModelRequest, call_id: &str) -> bool {
    request.messages.iter().rev().any(|item| match item {
        LedgerItem::Assistant(message) => message
            .tool_calls()
            .any(|call| call.id == call_id && FILE_CHANGING_TOOLS.contains(&call.name.as_str())),
        _ => false,
    })
}

/// Whether the last message sent is a tool result (the model is about to react to it).
fn after_tool_result(request: &ModelRequest) -> bool {
    matches!(
        request.messages.iter().rev().find(|item| !matches!(item, LedgerItem::Meta(_))),
        Some(LedgerItem::ToolResult(_))
    )
}

/// The events of `receiver`, ending after the first terminal event; if the sender goes away
/// before one, an `IncompleteStream` error ends the stream.
pub(crate) fn terminated(receiver: mpsc::UnboundedReceiver<ModelEvent>) -> ModelStream {
    futures::stream::unfold((receiver, false), |(mut receiver, done)| async move {
        if done {
            return None;
        }
        match receiver.recv().await {
            Some(event) => {
                let terminal = matches!(event, ModelEvent::Stop { .. } | ModelEvent::Error { .. });
                Some((event, (receiver, terminal)))
            }
            None => Some((
                ModelEvent::Error {
                    error: ProviderError::IncompleteStream {
                        detail: "the local inference thread stopped".into(),
                    },
                },
                (receiver, true),
            )),
        }
    })
    .boxed()
}

#[cfg(test)]
#[path = "provider_tests.rs"]
mod tests;
