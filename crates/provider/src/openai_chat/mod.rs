//! OpenAI Chat Completions (`POST {base}/chat/completions`, `stream: true`), also spoken by
//! DeepSeek, OpenRouter, Ollama, vLLM and llama.cpp servers.
//!
//! - [`request`]: ledger → `messages` (one `role: tool` message per result; images in results
//!   follow as a user message; DeepSeek `reasoning_content` echoed on tool-call turns).
//! - [`stream`]: chunks → [`lathe_protocol::ModelEvent`]s.

pub mod request;
pub mod stream;
