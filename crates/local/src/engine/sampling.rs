//! Token selection for the inference thread: the grammar and the decoding chain.
//!
//! Follows llama.cpp's `common_sampler`: the grammar is applied to the [`TOP_CANDIDATES`] most
//! likely tokens only, and to the whole vocabulary when none of them is allowed. For greedy
//! decoding this is exact (the best allowed token among the top ones is the best allowed token
//! overall); for sampling it is a top-k filter. Tokens are accepted once, with `try_accept`
//! (which reports instead of aborting).

use std::time::Instant;

use lathe_protocol::ProviderError;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;

use super::{config_error, stream_error};
use crate::chatml::FINAL_ANSWER_TOOL;
use crate::provider::{Job, Sampling};

/// Candidates checked against the grammar before falling back to the whole vocabulary.
const TOP_CANDIDATES: usize = 64;
/// What the inference loop asks of one token's choice beyond the grammar.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Steer {
    /// Logits added to tokens that begin the answer tool's name (0 = none).
    pub answer_bias: f32,
    /// No token may start with a `"` (the output is inside an `edit_file` new_string that so far
    /// equals its old_string: closing it would make an edit that changes nothing). Ignored when
    /// every allowed token starts with one.
    pub keep_string_open: bool,
}

/// Whether `text` (the response so far) ends inside an `edit_file` call's `new_string` whose raw
/// JSON text so far equals its `old_string`'s (the grammar writes `"old_string": "…", "new_string": "`).
pub(super) fn new_string_repeats_old(text: &str) -> bool {
    const OLD: &str = "\"old_string\": \"";
    const NEW: &str = "\", \"new_string\": \"";
    let Some(new_at) = text.rfind(NEW) else { return false };
    let Some(old_at) = text[..new_at].rfind(OLD) else { return false };
    let old = &text[old_at + OLD.len()..new_at];
    !old.is_empty() && old == &text[new_at + NEW.len()..]
}

/// The samplers of one request: the grammar (if any) and the selection chain.
pub(super) struct Samplers {
    grammar: Option<LlamaSampler>,
    chain: LlamaSampler,
    /// Time spent in `sample`, milliseconds.
    pub(super) sampling_ms: f64,
    /// Full-vocabulary grammar applications.
    pub(super) fallbacks: u64,
}

impl Samplers {
    /// The samplers for `job`: its grammar compiled against `model`, and the selection chain.
    pub(super) fn new(model: &LlamaModel, job: &Job) -> Result<Samplers, ProviderError> {
        let grammar = match &job.grammar {
            Some(text) => Some(LlamaSampler::grammar(model, text, crate::grammar::ROOT).map_err(|err| {
                config_error(format!(
                    "the tool-call grammar does not compile ({err}); a tool schema is not supported"
                ))
            })?),
            None => None,
        };
        let Sampling { temperature, top_p, seed, .. } = job.sampling;
        let chain = if temperature <= 0.0 {
            LlamaSampler::greedy()
        } else {
            LlamaSampler::chain_simple([
                LlamaSampler::top_p(top_p, 1),
                LlamaSampler::temp(temperature),
                LlamaSampler::dist(seed),
            ])
        };
        Ok(Samplers { grammar, chain, sampling_ms: 0.0, fallbacks: 0 })
    }

    /// Picks the next token from the logits at `index` and accepts it into the self.
    ///
    /// The grammar is applied to the [`TOP_CANDIDATES`] most likely tokens only, and to the whole
    /// vocabulary when none of them is allowed. For greedy decoding this is exact (the best
    /// allowed token among the top ones is the best allowed token overall); for sampling it is the
    /// top-k filter the chain applies anyway.
    pub(super) fn sample(
        &mut self,
        ctx: &LlamaContext<'_>,
        model: &LlamaModel,
        index: i32,
        steer: Steer,
    ) -> Result<LlamaToken, ProviderError> {
        let started = Instant::now();
        let token = self.choose(ctx, model, index, steer);
        self.sampling_ms += started.elapsed().as_secs_f64() * 1000.0;
        token
    }

    fn choose(
        &mut self,
        ctx: &LlamaContext<'_>,
        model: &LlamaModel,
        index: i32,
        steer: Steer,
    ) -> Result<LlamaToken, ProviderError> {
        let Steer { answer_bias, keep_string_open } = steer;
        let logits = ctx.get_logits_ith(index);
        let mut candidates = LlamaTokenDataArray::new(top_candidates(logits, TOP_CANDIDATES), true);
        if let Some(grammar) = self.grammar.as_mut() {
            candidates.apply_sampler(grammar);
            candidates.data.retain(|data| data.logit().is_finite());
            if candidates.data.is_empty() {
                self.fallbacks += 1;
                candidates = ctx.token_data_array_ith(index);
                candidates.apply_sampler(grammar);
                candidates.data.retain(|data| data.logit().is_finite());
                candidates.sorted = false;
                if candidates.data.is_empty() {
                    return Err(stream_error("the grammar allows no token here".into()));
                }
            }
        }
        candidates.selected = None;
        if keep_string_open {
            // A closing quote here would end a new_string equal to its old_string.
            let open: Vec<LlamaTokenData> = candidates
                .data
                .iter()
                .copied()
                .filter(|data| !model.vocab().token_to_piece(data.id(), true, None).starts_with(b"\""))
                .collect();
            if !open.is_empty() {
                candidates.data = open;
                candidates.sorted = false;
            }
        }
        if answer_bias != 0.0 {
            // Only tokens that begin the answer tool's name: `answer`, `ans`, `a`…
            for data in candidates.data.iter_mut() {
                let piece = model.vocab().token_to_piece(data.id(), true, None);
                if !piece.is_empty() && FINAL_ANSWER_TOOL.as_bytes().starts_with(&piece) {
                    data.set_logit(data.logit() + answer_bias);
                }
            }
            candidates.sorted = false;
        }
        candidates.apply_sampler(&mut self.chain);
        let token =
            candidates.selected_token().ok_or_else(|| stream_error("the sampler chose no token".into()))?;
        if let Some(grammar) = self.grammar.as_mut() {
            grammar
                .try_accept(token)
                .map_err(|err| stream_error(format!("the grammar rejected the sampled token: {err}")))?;
        }
        self.chain.accept(token);
        Ok(token)
    }
}

/// The `k` highest logits as token data, highest first.
fn top_candidates(logits: &[f32], k: usize) -> Vec<LlamaTokenData> {
    let mut top: Vec<(f32, usize)> = Vec::with_capacity(k + 1);
    let mut floor = f32::NEG_INFINITY;
    for (id, &logit) in logits.iter().enumerate() {
        if top.len() < k || logit > floor {
            top.push((logit, id));
            if top.len() > k {
                // Drop the smallest; keeping the vector small makes this cheap and rare.
                let (smallest, _) =
                    top.iter().enumerate().min_by(|a, b| a.1.0.total_cmp(&b.1.0)).unwrap_or((0, &(0.0, 0)));
                top.swap_remove(smallest);
            }
            if top.len() == k {
                floor = top.iter().map(|(logit, _)| *logit).fold(f32::INFINITY, f32::min);
            }
        }
    }
    top.sort_by(|a, b| b.0.total_cmp(&a.0));
    top.into_iter()
        .map(|(logit, id)| LlamaTokenData::new(LlamaToken::new(i32::try_from(id).unwrap_or(0)), logit, 0.0))
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_new_string_equal_so_far_to_its_old_string_is_found() {
        let head = "<tool_call>\n{\"name\": \"edit_file\", \"arguments\": {\"path\": \"a.py\", \"old_string\": \"x = 1\\n\", \"new_string\": \"";
        assert!(!new_string_repeats_old(head));
        assert!(!new_string_repeats_old(&format!("{head}x = ")));
        assert!(new_string_repeats_old(&format!("{head}x = 1\\n")));
        assert!(!new_string_repeats_old(&format!("{head}x = 1\\ny")));
        assert!(!new_string_repeats_old("{\"name\": \"answer\", \"arguments\": {\"answer\": \"done"));
    }

    #[test]
    fn top_candidates_are_the_highest_logits_in_order() {
        let logits: Vec<f32> = (0..1000).map(|i| ((i * 7919) % 1000) as f32).collect();
        let top = top_candidates(&logits, 5);
        let values: Vec<f32> = top.iter().map(|d| d.logit()).collect();
        assert_eq!(values, vec![999.0, 998.0, 997.0, 996.0, 995.0]);
        for data in &top {
            assert_eq!(logits[data.id().0 as usize], data.logit());
        }
    }
}
