//! One model request of the agent loop: the request built from the ledger, the provider's stream
//! folded into an assistant message while its pieces go to the front end, and the usage added to
//! the totals.

use futures::StreamExt;
use lathe_protocol::{
    Accumulator, AgentEvent, AssistantMessage, ModelEvent, ModelRequest, ProviderError, Usage,
};
use lathe_provider::catalog::estimate_cost;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Agent;

impl Agent {
    /// Sends one request and folds its stream. Returns the assistant message (if anything arrived or
    /// the stream completed) and the terminal error, if any.
    pub(super) async fn request(
        &self,
        events: &mpsc::UnboundedSender<AgentEvent>,
        cancel: &CancellationToken,
    ) -> (Option<AssistantMessage>, Option<ProviderError>) {
        let request = ModelRequest {
            model: self.settings.model.clone(),
            system: self.system.clone(),
            messages: self.context.messages(&self.ledger),
            tools: self.tools.specs(),
            max_output_tokens: self.context.budget().output_reserve as u32,
            temperature: self.settings.temperature,
            top_p: None,
            thinking: None,
            prompt_caching: self.settings.prompt_caching,
        };
        tracing::debug!(messages = request.messages.len(), "sending model request");
        let mut stream = self.provider.stream(&request, cancel.child_token());
        let mut acc = Accumulator::new(self.settings.thinking_format);
        let mut terminal = false;
        let mut output_chars = 0u64;
        loop {
            let event = tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    acc.push(&ModelEvent::Error { error: ProviderError::Cancelled });
                    break;
                }
                event = stream.next() => event,
            };
            let Some(event) = event else { break };
            let streamed = match &event {
                ModelEvent::TextDelta { text } | ModelEvent::ThinkingDelta { text, .. } => {
                    text.chars().count()
                }
                ModelEvent::ToolCallDelta { arguments, .. } => arguments.chars().count(),
                ModelEvent::Started { .. }
                | ModelEvent::RefusalDelta { .. }
                | ModelEvent::ThinkingSignature { .. }
                | ModelEvent::RedactedThinking { .. }
                | ModelEvent::ToolCallStart { .. }
                | ModelEvent::ToolCallEnd { .. }
                | ModelEvent::Usage(_)
                | ModelEvent::Retry(_)
                | ModelEvent::Stop { .. }
                | ModelEvent::Error { .. } => 0,
            };
            if streamed > 0 {
                output_chars += streamed as u64;
                let _ = events.send(AgentEvent::OutputProgress { chars: output_chars });
            }
            match &event {
                ModelEvent::TextDelta { text } => {
                    let _ = events.send(AgentEvent::TextDelta { text: text.clone() });
                }
                ModelEvent::ThinkingDelta { text, .. } => {
                    let _ = events.send(AgentEvent::ThinkingDelta { text: text.clone() });
                }
                ModelEvent::Retry(info) => {
                    let _ = events.send(AgentEvent::Retry(info.clone()));
                }
                ModelEvent::Stop { .. } | ModelEvent::Error { .. } => terminal = true,
                ModelEvent::Started { .. }
                | ModelEvent::RefusalDelta { .. }
                | ModelEvent::ThinkingSignature { .. }
                | ModelEvent::RedactedThinking { .. }
                | ModelEvent::ToolCallStart { .. }
                | ModelEvent::ToolCallDelta { .. }
                | ModelEvent::ToolCallEnd { .. }
                | ModelEvent::Usage(_) => {}
            }
            acc.push(&event);
            if terminal {
                break;
            }
        }
        if !terminal && acc.error().is_none() {
            acc.push(&ModelEvent::Error {
                error: ProviderError::IncompleteStream {
                    detail: "the provider stream ended without a stop".into(),
                },
            });
        }
        let error = acc.error().cloned();
        // A response that failed is not stored (its request was retried as a whole, or the run
        // ends); only the user's cancel keeps what had arrived.
        let keep = error.is_none() || (error == Some(ProviderError::Cancelled) && acc.has_content());
        let message = acc.finish(&self.settings.model);
        (keep.then_some(message), error)
    }

    pub(super) fn record_usage(&mut self, usage: &Usage, events: &mpsc::UnboundedSender<AgentEvent>) {
        self.add_usage(usage);
        let context = Some(self.context_usage());
        let _ = events.send(AgentEvent::Usage { last: *usage, stats: self.stats, context });
    }

    /// Adds one response's usage to the totals (tokens and estimated cost).
    pub(crate) fn add_usage(&mut self, usage: &Usage) {
        let tokens = |value: Option<u64>| value.unwrap_or(0);
        self.stats.input_tokens += tokens(usage.input_tokens);
        self.stats.output_tokens += tokens(usage.output_tokens);
        self.stats.cache_read_tokens += tokens(usage.cache_read_input_tokens);
        self.stats.cache_write_tokens += tokens(usage.cache_creation_input_tokens);
        self.stats.cost_usd += estimate_cost(&self.settings.model_info, usage);
        if let Some(meter) = &self.meter {
            meter.set_parent_cost(self.stats.cost_usd);
        }
    }
}
