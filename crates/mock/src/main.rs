//! `lathe-mock`: the scripted model server as a command-line program (see the library docs for the modes).

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use lathe_mock::{CassetteSet, MockServer, Mode, ReplayCase, Script};

const LONG_ABOUT: &str = "\
A model server for tests and demos, on 127.0.0.1. It speaks
  Anthropic Messages       POST …/v1/messages
  OpenAI Chat Completions  POST …/chat/completions
  OpenAI Responses         POST …/responses
(client base URLs: http://127.0.0.1:PORT for Anthropic, http://127.0.0.1:PORT/v1
for OpenAI) and streams SSE when the request says \"stream\": true.

The first stdout line is `listening on http://127.0.0.1:PORT`; the server then
runs until killed (Ctrl-C prints the final stats as JSON on stderr).
GET /_mock/stats and GET /_mock/requests show the stats and every request.

MODES

scripted SCRIPT.json
  Each model request, in any protocol, gets the next turn of the script: text,
  thinking, tool calls (arguments split into N deltas, or cut off), usage,
  delays, a dropped connection (after N events, or right after the content:
  \"drop_after_content\"), an error event after the content, tool calls sent
  without their index (\"omit_call_index\"), or an HTTP error with headers.
  \"reject_images\" (beside \"turns\") answers every request carrying an image
  with the given error. After the last turn: HTTP 400 \"script exhausted\".
  Example:
    lathe-mock scripted turns.json
  with turns.json:
    {\"turns\": [{\"error\": {\"status\": 429, \"headers\": {\"retry-after\": \"2\"}}},
               {\"text\": \"Hello\", \"text_chunks\": 2}]}
  Top-level options play the provider's own checks: \"context_window\": N
  rejects a request whose ceil(JSON body bytes / 4) input tokens plus its
  max_tokens exceed N with the provider's real 400 (usage then reports the
  count), \"check_pairing\": true rejects unpaired tool calls and results
  with the provider's 400, and \"side_replies\": [{\"when_last_user_contains\":
  \"…\", \"text\": \"…\"}] answers matching requests (e.g. a summary request).
  None of these consume a turn. \"model_turns\": {\"MODEL\": [turns]} serves the
  requests whose model is MODEL from their own list instead of \"turns\".

cassette DIR
  Serves the recorded responses listed in DIR/manifest.json byte for byte,
  with their recorded status and headers, at POST /cassette/<file>/<suffix>.
  Example:
    lathe-mock cassette ../shared/cassettes
  then use the Anthropic base URL
    http://127.0.0.1:PORT/cassette/anthropic/tool-use-only.sse

replay CASE.json
  Replays a recorded agent run turn by turn over whichever protocol the
  client speaks. Every tool call of the previous turn must get exactly one
  result (else the provider's real HTTP 400 pairing error) and the run must
  follow the recording (else HTTP 400 replay_divergence). Example:
    lathe-mock --port 8080 --log requests.jsonl replay ../shared/replay/R2.json";

#[derive(Debug, Parser)]
#[command(name = "lathe-mock", version, about = "Scripted model server speaking Anthropic, OpenAI Chat and OpenAI Responses", long_about = LONG_ABOUT)]
struct Cli {
    /// Port to listen on, on 127.0.0.1 (0 = pick a free one).
    #[arg(long, default_value_t = 0, global = true)]
    port: u16,
    /// Append every request as one JSON line to this file.
    #[arg(long, value_name = "FILE", global = true)]
    log: Option<PathBuf>,
    #[command(subcommand)]
    mode: ModeArg,
}

#[derive(Debug, Subcommand)]
enum ModeArg {
    /// Answer requests with the turns of a JSON script, in order.
    Scripted {
        /// The script file ({"turns": [...]}).
        #[arg(value_name = "SCRIPT.json")]
        script: PathBuf,
    },
    /// Serve recorded responses from a cassette directory holding manifest.json.
    Cassette {
        /// The cassette directory.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// Replay a recorded agent run (R<n>.json), checking every request.
    Replay {
        /// The case file.
        #[arg(value_name = "CASE.json")]
        case: PathBuf,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let mode = match &cli.mode {
        ModeArg::Scripted { script } => Mode::Scripted(Script::load(script)?),
        ModeArg::Cassette { dir } => Mode::Cassette(CassetteSet::load(dir)?),
        ModeArg::Replay { case } => Mode::Replay(ReplayCase::load(case)?),
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async {
        let server = MockServer::start_with(mode, cli.port, cli.log.clone())
            .await
            .with_context(|| format!("cannot listen on 127.0.0.1:{}", cli.port))?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on {}", server.url())?;
        out.flush()?;
        drop(out);
        tokio::signal::ctrl_c().await.context("cannot wait for Ctrl-C")?;
        eprintln!("{}", serde_json::to_string(&server.stats())?);
        Ok(())
    })
}
