//! Failures before or outside the agent run, in every output format.
//!
//! A script reading `--output-format json` or `stream-json` gets a `result` object as the last
//! stdout line whatever went wrong — a bad flag, an unreadable config, no session to continue —
//! with `is_error: true`, a `subtype` and the exit status `lathe --help` lists (usage and
//! configuration errors: `error_usage`, exit 2; a session to continue or resume that cannot be found
//! or read: `error_session`, exit 1; a failure of Lathe itself: `error_internal`, exit 1). The
//! one-line message also goes to stderr, as in text mode.

use clap::Parser;
use lathe_protocol::{RunReport, RunStats, StopCause};

use crate::args::{Cli, OutputFormat};
use crate::print::Printer;

/// Error kind of a usage or configuration error (subtype `error_usage`).
pub const USAGE: &str = "usage";
/// Error kind of a session that cannot be found or read (subtype `error_session`, exit 1).
pub const SESSION: &str = "session";
/// Error kind of anything else that stops Lathe itself (subtype `error_internal`).
pub const INTERNAL: &str = "internal";

/// The `result` subtype for an error of `kind` (a provider error kind is `error_api`).
pub fn subtype(kind: &str) -> &'static str {
    match kind {
        USAGE => "error_usage",
        SESSION => "error_session",
        INTERNAL => "error_internal",
        _ => "error_api",
    }
}

/// Reports a failure: `lathe: error: <message>` on stderr and, in the JSON formats, a `result`
/// object on stdout. Returns `code`, the exit status.
pub fn report(format: OutputFormat, kind: &str, message: &str, code: u8) -> u8 {
    eprintln!("lathe: error: {message}");
    match format {
        OutputFormat::Text => {}
        OutputFormat::Json | OutputFormat::StreamJson => {
            result_only(format, StopCause::Error { kind: kind.to_string(), message: message.to_string() });
        }
    }
    code
}

/// The `result` object of a run that never started: `cause`, no stats, no report, no goal.
fn result_only(format: OutputFormat, cause: StopCause) {
    Printer::new(format, String::new()).finish(&cause, &RunStats::default(), "", &RunReport::default(), None);
}

/// Parses the command line. On a parse error clap's message goes to stderr and, when the
/// arguments ask for a JSON format, a `result` object to stdout; `Err` holds the exit status
/// (0 for `--help` and `--version`).
pub fn parse_cli() -> Result<Cli, u8> {
    use clap::error::ErrorKind;
    let error = match Cli::try_parse() {
        Ok(cli) => return Ok(cli),
        Err(error) => error,
    };
    let code = u8::try_from(error.exit_code()).unwrap_or(2);
    let _ = error.print();
    if matches!(error.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        return Err(code);
    }
    if let Some(format) = requested_format(std::env::args().skip(1)) {
        let rendered = error.render().to_string();
        let message = rendered.lines().find(|line| !line.trim().is_empty()).unwrap_or("invalid arguments");
        let message = message.trim().trim_start_matches("error: ");
        result_only(format, StopCause::Error { kind: USAGE.to_string(), message: message.to_string() });
    }
    Err(code)
}

/// The JSON output format the raw arguments ask for, if any (`--output-format json`,
/// `--output-format=stream-json`).
fn requested_format(args: impl Iterator<Item = String>) -> Option<OutputFormat> {
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let value = match arg.strip_prefix("--output-format") {
            Some("") => args.next(),
            Some(rest) => rest.strip_prefix('=').map(str::to_string),
            None => None,
        };
        match value.as_deref() {
            Some("json") => return Some(OutputFormat::Json),
            Some("stream-json") => return Some(OutputFormat::StreamJson),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format_of(args: &[&str]) -> Option<OutputFormat> {
        requested_format(args.iter().map(|arg| arg.to_string()))
    }

    #[test]
    fn the_requested_json_format_is_found_in_raw_arguments() {
        assert_eq!(format_of(&["-p", "x", "--output-format", "json"]), Some(OutputFormat::Json));
        assert_eq!(
            format_of(&["--output-format=stream-json", "--max-turns", "x"]),
            Some(OutputFormat::StreamJson)
        );
        assert_eq!(format_of(&["--output-format", "text"]), None);
        assert_eq!(format_of(&["-p", "--output-format"]), None);
    }
}
