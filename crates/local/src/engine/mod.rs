//! The inference thread (feature `llama`): owns the model, the llama.cpp context and its KV cache.
//!
//! Flow of one request ([`Engine::serve`]):
//! 1. tokenize the whole rendered prompt;
//! 2. fail with `ContextWindowExceeded` if it does not fit the context with room to answer;
//! 3. build the sampler (grammar first, so a grammar that does not compile fails before any work);
//! 4. KV reuse: on the first request of a process (empty cache), the system turn's KV state is
//!    loaded from the [`prompt_cache`] on disk when an earlier process saved it (and its token ids
//!    match), else evaluated and saved there; then keep the longest common prefix of the prompt and
//!    the tokens already in the cache (`cached`), remove the rest from the cache, evaluate only the
//!    new tokens — the static system turn is therefore evaluated once per model and context, and
//!    each turn only adds its new messages;
//! 5. generate token by token: sample (grammar-checked), stream the text through
//!    [`OutputParser`], evaluate the token; stop at end-of-turn, the token limit, or cancel;
//! 6. report usage (`input_tokens` = prompt tokens, `cache_read_input_tokens` = reused tokens,
//!    those loaded from disk included,
//!    `output_tokens` = generated) and update [`LocalStats`].
//!
//! Token selection (grammar, answer prior, decoding chain) lives in [`sampling`].

use std::num::NonZeroU32;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, mpsc as std_mpsc};
use std::time::Instant;

use lathe_protocol::{ApiError, ModelEvent, ProviderError, Usage};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::token::LlamaToken;

use crate::config::LocalConfig;
use crate::parse::{GenerationEnd, OutputParser};
use crate::provider::Job;
use crate::stats::LocalStats;

mod prompt_cache;
mod sampling;

use prompt_cache::{KvParams, PromptCache};
use sampling::{Samplers, Steer};

/// Tokens evaluated per `llama_decode` call while processing a prompt.
const BATCH_TOKENS: u32 = 512;
/// The output ends here when the model is about to write a tool name.
const NAME_POSITION: &str = "<tool_call>\n{\"name\": \"";
/// A prompt must leave at least this many tokens of the context for the answer.
const MIN_ANSWER_TOKENS: usize = 16;
/// ChatML's end of a turn; the system turn ends at its first occurrence.
const END_OF_TURN: &str = "<|im_end|>";

/// Handle of the inference thread; dropping it ends the thread and frees the model.
pub(crate) struct Worker {
    jobs: std_mpsc::Sender<Job>,
}

struct Settings {
    path: PathBuf,
    model_name: String,
    context_tokens: u32,
    threads: i32,
    threads_batch: i32,
    /// Directory of the prompt cache; `None` = off.
    prompt_cache: Option<PathBuf>,
}

impl Worker {
    /// Starts the thread and waits until the model is loaded.
    pub(crate) fn spawn(
        config: &LocalConfig,
        path: &Path,
        model_name: String,
        stats: Arc<Mutex<LocalStats>>,
    ) -> Result<Worker, ProviderError> {
        let cores = std::thread::available_parallelism().map(|n| n.get() as u32).unwrap_or(4);
        // Generation evaluates one token at a time and llama.cpp's worker threads spin at a
        // barrier for each: when another process holds a core, every thread waits for the
        // descheduled one (measured on 2 cores: 0.6 tok/s with 2 threads vs 29 with 1). One core is
        // left free for generation by default; prompt batches use them all.
        let (threads, threads_batch) = match config.threads {
            Some(threads) => (threads.max(1), threads.max(1)),
            None => (cores.saturating_sub(1).max(1), cores),
        };
        let settings = Settings {
            path: path.to_path_buf(),
            model_name,
            context_tokens: config.context_tokens.max(256),
            threads: i32::try_from(threads).unwrap_or(1),
            threads_batch: i32::try_from(threads_batch).unwrap_or(1),
            prompt_cache: config.resolved_prompt_cache_dir(),
        };
        let (jobs, receiver) = std_mpsc::channel::<Job>();
        let (ready, loaded) = std_mpsc::channel::<Result<(), ProviderError>>();
        std::thread::Builder::new()
            .name("lathe-local-model".into())
            .spawn(move || run(settings, receiver, ready, stats))
            .map_err(|err| config_error(format!("cannot start the local inference thread: {err}")))?;
        match loaded.recv() {
            Ok(Ok(())) => Ok(Worker { jobs }),
            Ok(Err(err)) => Err(err),
            Err(_) => Err(config_error("the local inference thread stopped while loading the model".into())),
        }
    }

    /// Queues a request; the thread serves requests in order.
    pub(crate) fn submit(&self, job: Job) {
        if let Err(std_mpsc::SendError(job)) = self.jobs.send(job) {
            let _ = job.events.send(ModelEvent::Error {
                error: ProviderError::IncompleteStream {
                    detail: "the local inference thread stopped".into(),
                },
            });
        }
    }
}

fn config_error(message: String) -> ProviderError {
    ProviderError::Config { message }
}

pub(crate) fn stream_error(message: String) -> ProviderError {
    ProviderError::Stream { api: ApiError { status: None, error_type: Some("local".into()), message } }
}

/// The process-wide llama.cpp backend (it can be initialised only once).
fn backend() -> Result<&'static LlamaBackend, ProviderError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init().map_err(|err| err.to_string())
        })
        .as_ref()
        .map_err(|err| config_error(format!("cannot initialise llama.cpp: {err}")))
}

fn run(
    settings: Settings,
    jobs: std_mpsc::Receiver<Job>,
    ready: std_mpsc::Sender<Result<(), ProviderError>>,
    stats: Arc<Mutex<LocalStats>>,
) {
    let loaded = backend().and_then(|backend| {
        let model = LlamaModel::load_from_file(backend, &settings.path, &LlamaModelParams::default())
            .map_err(|err| {
                config_error(format!("llama.cpp could not load {}: {err}", settings.path.display()))
            })?;
        Ok((backend, model))
    });
    let (backend, model) = match loaded {
        Ok(loaded) => loaded,
        Err(err) => {
            let _ = ready.send(Err(err));
            return;
        }
    };
    let n_ctx = settings.context_tokens.min(model.n_ctx_train().max(256));
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
        .with_n_batch(BATCH_TOKENS)
        .with_n_ubatch(BATCH_TOKENS)
        .with_n_threads(settings.threads)
        .with_n_threads_batch(settings.threads_batch);
    let ctx = match model.new_context(backend, params) {
        Ok(ctx) => ctx,
        Err(err) => {
            let _ = ready.send(Err(config_error(format!(
                "llama.cpp could not create a context of {n_ctx} tokens for {}: {err}",
                settings.path.display()
            ))));
            return;
        }
    };
    tracing::info!(model = %settings.model_name, n_ctx, threads = settings.threads, "local model loaded");
    let prompt_cache = settings.prompt_cache.and_then(|dir| {
        let params = KvParams { context_tokens: n_ctx, batch_tokens: BATCH_TOKENS };
        PromptCache::new(dir, &settings.path, params)
            .inspect_err(
                |err| tracing::warn!(%err, "prompt cache off: cannot read the model file's metadata"),
            )
            .ok()
    });
    let end_of_turn = match model.vocab().tokenize(END_OF_TURN.as_bytes(), false, true).as_slice() {
        [token] => Some(*token),
        _ => None,
    };
    let mut engine = Engine {
        model: &model,
        ctx,
        cached: Vec::new(),
        model_name: settings.model_name,
        stats,
        prompt_cache: prompt_cache.zip(end_of_turn),
    };
    let _ = ready.send(Ok(()));
    drop(ready);
    while let Ok(job) = jobs.recv() {
        let events = job.events.clone();
        if std::panic::catch_unwind(AssertUnwindSafe(|| engine.serve(job))).is_err() {
            engine.forget_cache();
            let _ = events
                .send(ModelEvent::Error { error: stream_error("the local model failed (panic)".into()) });
        }
    }
}

struct Engine<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    /// The tokens whose keys and values are in the KV cache (sequence 0), in position order.
    cached: Vec<LlamaToken>,
    model_name: String,
    stats: Arc<Mutex<LocalStats>>,
    /// The prompt cache on disk and the token that ends the system turn; `None` = off.
    prompt_cache: Option<(PromptCache, LlamaToken)>,
}

struct Counts {
    prompt: usize,
    reuse: usize,
    generated: usize,
}

struct Times {
    prompt_eval_ms: f64,
    generation_ms: f64,
    first_token_ms: f64,
    sampling_ms: f64,
}

impl Engine<'_> {
    fn serve(&mut self, job: Job) {
        let _ = job.events.send(ModelEvent::Started { model: Some(self.model_name.clone()) });
        if let Err(error) = self.generate(&job) {
            let _ = job.events.send(ModelEvent::Error { error });
        }
    }

    fn forget_cache(&mut self) {
        self.ctx.clear_kv_cache();
        self.cached.clear();
    }

    fn generate(&mut self, job: &Job) -> Result<(), ProviderError> {
        let started = Instant::now();
        let tokens = self.model.vocab().tokenize(job.prompt.as_bytes(), false, true);
        if tokens.is_empty() {
            return Err(stream_error("the rendered prompt has no tokens".into()));
        }
        let n_ctx = self.ctx.n_ctx() as usize;
        if tokens.len() + MIN_ANSWER_TOKENS > n_ctx {
            return Err(ProviderError::ContextWindowExceeded {
                api: ApiError {
                    status: None,
                    error_type: Some("context_length_exceeded".into()),
                    message: format!(
                        "the prompt is {} tokens; the local model's context window is {n_ctx} tokens",
                        tokens.len()
                    ),
                },
            });
        }
        let budget = (n_ctx - tokens.len()).min(job.sampling.max_output_tokens as usize);
        let mut samplers = Samplers::new(self.model, job)?;

        let eval_started = Instant::now();
        // Tokens of the system turn evaluated (not loaded) by the prompt cache step.
        let prefix_evaluated = if self.cached.is_empty() { self.prompt_prefix(&tokens, job)? } else { 0 };
        let mut reuse = self.cached.iter().zip(&tokens).take_while(|(a, b)| a == b).count();
        if reuse == tokens.len() {
            reuse -= 1; // evaluate at least one token to get fresh logits
        }
        self.truncate_cache(reuse)?;
        let mut logits_index = self.evaluate(&tokens[reuse..], job)?;
        let reuse = reuse.saturating_sub(prefix_evaluated);
        let prompt_eval_ms = eval_started.elapsed().as_secs_f64() * 1000.0;
        tracing::debug!(prompt = tokens.len(), reused = reuse, prompt_eval_ms, "local prompt evaluated");

        let mut parser = OutputParser::new(job.mode, job.grammar.is_some(), job.call_id_prefix.clone());
        let mut pending: Vec<u8> = Vec::new();
        let mut generated = 0usize;
        let mut first_token_ms = 0.0;
        let generation_started = Instant::now();
        let end = loop {
            if job.cancel.is_cancelled() || job.events.is_closed() {
                return Err(ProviderError::Cancelled);
            }
            if generated >= budget {
                break GenerationEnd::TokenLimit;
            }
            let bias = if job.answer_bias != 0.0 && parser.text().ends_with(NAME_POSITION) {
                job.answer_bias
            } else {
                0.0
            };
            let steer = Steer {
                answer_bias: bias,
                keep_string_open: job.grammar.is_some() && sampling::new_string_repeats_old(parser.text()),
            };
            let token = samplers.sample(&self.ctx, self.model, logits_index, steer)?;
            if generated == 0 {
                first_token_ms = started.elapsed().as_secs_f64() * 1000.0;
            }
            if self.model.vocab().is_eog(token) {
                break GenerationEnd::EndOfTurn;
            }
            generated += 1;
            pending.extend(self.model.vocab().token_to_piece(token, true, None));
            let text = take_utf8(&mut pending);
            for event in parser.push(&text) {
                let _ = job.events.send(event);
            }
            logits_index = self.evaluate(&[token], job)?;
        };
        if !pending.is_empty() {
            let text = String::from_utf8_lossy(&pending).into_owned();
            for event in parser.push(&text) {
                let _ = job.events.send(event);
            }
        }
        let generation_ms = generation_started.elapsed().as_secs_f64() * 1000.0;
        let stats = self.record(
            Counts { prompt: tokens.len(), reuse, generated },
            Times { prompt_eval_ms, generation_ms, first_token_ms, sampling_ms: samplers.sampling_ms },
            samplers.fallbacks,
        );
        tracing::debug!(text = parser.text(), "local response text");
        tracing::info!(
            prompt_tokens = stats.prompt_tokens,
            reused_tokens = stats.reused_tokens,
            prompt_tok_per_s = stats.prompt_tokens_per_second(),
            generated_tokens = stats.generated_tokens,
            generation_tok_per_s = stats.generation_tokens_per_second(),
            first_token_ms,
            "local response done"
        );
        let _ = job.events.send(ModelEvent::Usage(Usage {
            input_tokens: Some(tokens.len() as u64),
            output_tokens: Some(generated as u64),
            cache_read_input_tokens: Some(reuse as u64),
            cache_creation_input_tokens: None,
        }));
        for event in parser.finish(end) {
            let _ = job.events.send(event);
        }
        Ok(())
    }

    fn record(&self, counts: Counts, times: Times, grammar_fallbacks: u64) -> LocalStats {
        let Counts { prompt, reuse, generated } = counts;
        let Times { prompt_eval_ms, generation_ms, first_token_ms, sampling_ms } = times;
        let mut guard = match self.stats.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        };
        *guard = LocalStats {
            prompt_tokens: prompt as u64,
            reused_tokens: reuse as u64,
            prompt_eval_tokens: (prompt - reuse) as u64,
            prompt_eval_ms,
            generated_tokens: generated as u64,
            generation_ms,
            first_token_ms,
            sampling_ms,
            grammar_fallbacks,
            requests: guard.requests + 1,
        };
        *guard
    }

    /// Removes cache entries from position `keep` on.
    fn truncate_cache(&mut self, keep: usize) -> Result<(), ProviderError> {
        if keep < self.cached.len() {
            let position = u32::try_from(keep).map_err(|_| stream_error("position overflow".into()))?;
            if self.ctx.clear_kv_cache_seq(Some(0), Some(position), None).is_err() {
                self.forget_cache();
                return Ok(());
            }
            self.cached.truncate(keep);
        }
        Ok(())
    }

    /// Evaluates `tokens` after the cached ones; returns the batch index of the last logits.
    fn evaluate(&mut self, tokens: &[LlamaToken], job: &Job) -> Result<i32, ProviderError> {
        let mut last = 0;
        for chunk in tokens.chunks(BATCH_TOKENS as usize) {
            if job.cancel.is_cancelled() {
                return Err(ProviderError::Cancelled);
            }
            let mut batch = LlamaBatch::new(chunk.len(), 1);
            let base = self.cached.len();
            for (offset, token) in chunk.iter().enumerate() {
                let position =
                    i32::try_from(base + offset).map_err(|_| stream_error("position overflow".into()))?;
                let logits = offset + 1 == chunk.len();
                batch
                    .add(*token, position, &[0], logits)
                    .map_err(|err| stream_error(format!("cannot build a batch: {err}")))?;
            }
            let decoded = self.ctx.decode(&mut batch);
            if decoded.is_err() {
                // The cache may hold part of the batch: start from scratch next time.
                self.forget_cache();
            }
            decoded.map_err(|err| match err {
                llama_cpp_2::DecodeError::NoKvCacheSlot => ProviderError::ContextWindowExceeded {
                    api: ApiError {
                        status: None,
                        error_type: Some("context_length_exceeded".into()),
                        message: "the local model's KV cache is full".into(),
                    },
                },
                other => stream_error(format!("llama.cpp decode failed: {other}")),
            })?;
            self.cached.extend_from_slice(chunk);
            last = i32::try_from(chunk.len() - 1).unwrap_or(0);
        }
        Ok(last)
    }
}

/// Takes the longest valid UTF-8 prefix of `pending` (a token can end mid-character).
fn take_utf8(pending: &mut Vec<u8>) -> String {
    let valid = match std::str::from_utf8(pending) {
        Ok(text) => text.len(),
        Err(err) => match err.error_len() {
            Some(_) => {
                // Invalid bytes (not just an unfinished character): emit them lossily.
                let text = String::from_utf8_lossy(pending).into_owned();
                pending.clear();
                return text;
            }
            None => err.valid_up_to(),
        },
    };
    let rest = pending.split_off(valid);
    String::from_utf8(std::mem::replace(pending, rest)).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn take_utf8_keeps_an_unfinished_character_for_later() {
        let mut pending = "é".as_bytes()[..1].to_vec();
        assert_eq!(take_utf8(&mut pending), "");
        pending.extend_from_slice(&"é".as_bytes()[1..]);
        pending.extend_from_slice(b"x");
        assert_eq!(take_utf8(&mut pending), "éx");
        assert!(pending.is_empty());
    }
}
