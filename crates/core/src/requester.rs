//! The one place a model request is sent and its stream read: both the agent's turn and the
//! compaction summary go through [`Requester::stream`], which stops on the first terminal event
//! (`Stop` or `Error`), on the end of the stream, or on the user's cancel (recorded as
//! [`ProviderError::Cancelled`]).

use std::sync::Arc;

use futures::StreamExt;
use lathe_protocol::{
    Accumulator, AgentEvent, LedgerItem, ModelEvent, ModelRequest, ProviderError, SystemBlock,
    ThinkingFormat, ToolSpec,
};
use lathe_provider::Provider;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The provider and how requests to it are made: the model name, the sampling temperature, prompt
/// caching, and the tag its reasoning comes with.
pub struct Requester {
    provider: Arc<dyn Provider>,
    model: String,
    temperature: Option<f32>,
    prompt_caching: bool,
    thinking_format: ThinkingFormat,
}

/// What one stream left: the folded response, and whether it ended on a terminal event (a stream
/// that simply stops is cut short; the caller decides what that means).
pub struct Streamed {
    /// Every event of the response, folded.
    pub acc: Accumulator,
    /// Whether a `Stop` or `Error` event (or the user's cancel) ended it.
    pub terminal: bool,
}

impl Requester {
    /// Requests to `model` at `provider`.
    pub fn new(
        provider: Arc<dyn Provider>,
        model: String,
        temperature: Option<f32>,
        prompt_caching: bool,
        thinking_format: ThinkingFormat,
    ) -> Requester {
        Requester { provider, model, temperature, prompt_caching, thinking_format }
    }

    /// Sends later requests to `model` at `provider`, its reasoning tagged with `thinking_format`.
    pub fn switch(&mut self, provider: Arc<dyn Provider>, model: String, thinking_format: ThinkingFormat) {
        self.provider = provider;
        self.model = model;
        self.thinking_format = thinking_format;
    }

    /// The model requests go to.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The provider requests go to.
    pub fn provider(&self) -> &dyn Provider {
        self.provider.as_ref()
    }

    /// Whether requests ask for prompt-cache breakpoints.
    pub fn prompt_caching(&self) -> bool {
        self.prompt_caching
    }

    /// The tag reasoning from this provider comes with.
    pub fn thinking_format(&self) -> ThinkingFormat {
        self.thinking_format
    }

    /// A turn's request: the model, `system`, `messages` (as the context part lets them be sent),
    /// `tools` and the output limit in tokens.
    pub fn turn_request(
        &self,
        system: &[SystemBlock],
        messages: Vec<LedgerItem>,
        tools: Vec<ToolSpec>,
        max_output_tokens: u32,
    ) -> ModelRequest {
        ModelRequest {
            model: self.model.clone(),
            system: system.to_vec(),
            messages,
            tools,
            max_output_tokens,
            temperature: self.temperature,
            top_p: None,
            thinking: None,
            prompt_caching: self.prompt_caching,
            response_format: None,
        }
    }

    /// Sends `request` and folds its stream until a terminal event, the end of the stream or the
    /// cancel. When `events` is given, text and reasoning deltas, output progress (characters so
    /// far) and retries go to the front end as they arrive.
    pub async fn stream(
        &self,
        request: &ModelRequest,
        events: Option<&mpsc::UnboundedSender<AgentEvent>>,
        cancel: &CancellationToken,
    ) -> Streamed {
        stream(self.provider.as_ref(), self.thinking_format, request, events, cancel).await
    }
}

/// [`Requester::stream`] for a provider given on its own (reasoning tagged with `format`).
pub async fn stream(
    provider: &dyn Provider,
    format: ThinkingFormat,
    request: &ModelRequest,
    events: Option<&mpsc::UnboundedSender<AgentEvent>>,
    cancel: &CancellationToken,
) -> Streamed {
    tracing::debug!(messages = request.messages.len(), "sending model request");
    let mut stream = provider.stream(request, cancel.child_token());
    let mut acc = Accumulator::new(format);
    let mut output_chars = 0u64;
    loop {
        let event = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                acc.push(&ModelEvent::Error { error: ProviderError::Cancelled });
                return Streamed { acc, terminal: true };
            }
            event = stream.next() => event,
        };
        let Some(event) = event else { return Streamed { acc, terminal: false } };
        if let Some(events) = events {
            forward(&event, &mut output_chars, events);
        }
        acc.push(&event);
        if matches!(event, ModelEvent::Stop { .. } | ModelEvent::Error { .. }) {
            return Streamed { acc, terminal: true };
        }
    }
}

/// Sends what the front end shows of one stream event.
fn forward(event: &ModelEvent, output_chars: &mut u64, events: &mpsc::UnboundedSender<AgentEvent>) {
    let streamed = match event {
        ModelEvent::TextDelta { text } | ModelEvent::ThinkingDelta { text, .. } => text.chars().count(),
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
        *output_chars += streamed as u64;
        let _ = events.send(AgentEvent::OutputProgress { chars: *output_chars });
    }
    let shown = match event {
        ModelEvent::TextDelta { text } => AgentEvent::TextDelta { text: text.clone() },
        ModelEvent::ThinkingDelta { text, .. } => AgentEvent::ThinkingDelta { text: text.clone() },
        ModelEvent::Retry(info) => AgentEvent::Retry(info.clone()),
        ModelEvent::Started { .. }
        | ModelEvent::RefusalDelta { .. }
        | ModelEvent::ThinkingSignature { .. }
        | ModelEvent::RedactedThinking { .. }
        | ModelEvent::ToolCallStart { .. }
        | ModelEvent::ToolCallDelta { .. }
        | ModelEvent::ToolCallEnd { .. }
        | ModelEvent::Usage(_)
        | ModelEvent::Stop { .. }
        | ModelEvent::Error { .. } => return,
    };
    let _ = events.send(shown);
}
