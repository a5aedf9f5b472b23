//! `ask_user {question, options?}` (Claude Code's `AskUserQuestion`): the model asks the user and
//! waits for the answer. The arguments are checked before anyone is asked; the [`QuestionDesk`]
//! asks; the call's result is the answer (`The user answered: …`), the user's refusal to answer,
//! or — with nobody to ask — an error telling the model to decide itself.

use std::sync::Arc;

use lathe_protocol::ResultView;
use lathe_protocol::question::{Question, QuestionAnswer};
use lathe_tools::{Access, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{ASK_USER, Asked, MAX_OPTION_CHARS, MAX_OPTIONS, MAX_QUESTION_CHARS, QuestionDesk};

const DESCRIPTION: &str =
    "Ask the user and wait for the answer: only for a decision you cannot make or look up yourself.";

/// What the model is told when nobody can answer.
const NOBODY: &str = "ask_user: no user is present to answer (this run is not interactive). Decide \
yourself and state the assumption you made in your answer.";

/// What the model is told when the user dismissed the question.
const DECLINED: &str = "The user declined to answer. Decide yourself and state the assumption you made.";

/// The `ask_user` tool of a session.
pub struct AskUser {
    desk: Arc<QuestionDesk>,
}

impl AskUser {
    /// The tool asking through `desk`.
    pub fn new(desk: Arc<QuestionDesk>) -> AskUser {
        AskUser { desk }
    }
}

/// Arguments of `ask_user`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AskUserArgs {
    /// The question.
    pub question: String,
    /// Up to 6 short choices; the user may type another answer.
    #[serde(default)]
    pub options: Option<Vec<String>>,
}

fn invalid(message: String) -> ToolError {
    ToolError::Failed(format!("{ASK_USER}: {message}"))
}

/// The question and options as asked (trimmed), or what is wrong with them.
fn checked(args: &AskUserArgs) -> Result<(String, Vec<String>), ToolError> {
    let question = args.question.trim();
    if question.is_empty() {
        return Err(invalid("the question is empty: write what the user should decide".into()));
    }
    let chars = question.chars().count();
    if chars > MAX_QUESTION_CHARS {
        return Err(invalid(format!(
            "the question is {chars} characters, at most {MAX_QUESTION_CHARS}: ask it in a few sentences"
        )));
    }
    let options: Vec<String> =
        args.options.iter().flatten().map(|option| option.trim().to_string()).collect();
    if options.len() > MAX_OPTIONS {
        return Err(invalid(format!(
            "{} options, at most {MAX_OPTIONS}: offer the likeliest (the user can always type another answer)",
            options.len()
        )));
    }
    for (index, option) in options.iter().enumerate() {
        let number = index + 1;
        let chars = option.chars().count();
        if option.is_empty() {
            return Err(invalid(format!("option {number} is empty")));
        }
        if option.contains(['\n', '\r']) {
            return Err(invalid(format!("option {number} has a line break: each option is one short line")));
        }
        if chars > MAX_OPTION_CHARS {
            return Err(invalid(format!(
                "option {number} is {chars} characters, at most {MAX_OPTION_CHARS}: keep each option to a few \
                 words and put details in the question"
            )));
        }
        if let Some(first) = options[..index].iter().position(|earlier| earlier == option) {
            return Err(invalid(format!("option {number} repeats option {} (`{option}`)", first + 1)));
        }
    }
    Ok((question.to_string(), options))
}

/// What the model is told of the answer, and the line the user sees for it.
fn answered(answer: QuestionAnswer) -> (String, String) {
    match answer {
        QuestionAnswer::Answered { text } if !text.trim().is_empty() => {
            let text = text.trim();
            (format!("The user answered: {text}"), format!("answered: {}", lathe_tools::one_line(text)))
        }
        QuestionAnswer::Answered { .. } | QuestionAnswer::Declined => {
            (DECLINED.to_string(), "declined to answer".to_string())
        }
    }
}

impl Tool for AskUser {
    type Args = AskUserArgs;

    fn name(&self) -> &'static str {
        ASK_USER
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    // The default effect (mutating) stays: asking changes nothing, but a call of its own batch
    // never shows its question while another call of the response runs or asks for permission.

    fn access(&self, _args: &AskUserArgs, _ctx: &ToolContext) -> Access {
        Access::Session
    }

    /// The question's first line.
    fn summary(&self, args: &Value) -> String {
        lathe_tools::one_line(args.get("question").and_then(Value::as_str).unwrap_or("").trim())
    }

    fn precheck(&self, args: &AskUserArgs, _ctx: &ToolContext) -> Result<(), ToolError> {
        checked(args).map(|_| ())
    }

    async fn run(&self, args: AskUserArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let (question, options) = checked(&args)?;
        let question = Question { call_id: ctx.call_id.clone(), question, options };
        let (text, line) = match self.desk.ask(question, &ctx.cancel).await {
            Asked::Nobody => return Err(ToolError::Failed(NOBODY.to_string())),
            Asked::Cancelled => return Err(ToolError::Cancelled),
            Asked::Answered(answer) => answered(answer),
        };
        Ok(ToolOutput { view: Some(ResultView::Line { text: line }), ..ToolOutput::text(text) })
    }
}
