//! The `schedule_wakeup` tool ([`lathe_protocol::loops`]): offered only during the ticks of a
//! self-paced loop, it records when the model wants the next tick (its delay clamped to the
//! loop's minimum interval ..= 1 hour) and why. The session's runner reads the request after the
//! tick: with one, the next tick is due after that delay; without one, the loop is done. The tool
//! changes nothing but that request (session state only, never asked about).

use std::sync::{Arc, Mutex};

use lathe_protocol::loops::{SCHEDULE_WAKEUP, clamp_wakeup_ms, describe_ms};
use lathe_tools::{Access, Effect, Tool, ToolContext, ToolError, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;

/// The next tick a self-paced tick asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wakeup {
    /// The delay, clamped, in ms.
    pub delay_ms: u64,
    /// Why the model picked it.
    pub reason: String,
}

/// The `schedule_wakeup` tool of one tick; its last call wins.
#[derive(Debug, Clone)]
pub struct ScheduleWakeup {
    requested: Arc<Mutex<Option<Wakeup>>>,
    min_interval_ms: u64,
}

impl ScheduleWakeup {
    /// A tool whose delays are clamped to `min_interval_ms` ..= 1 hour.
    pub fn new(min_interval_ms: u64) -> ScheduleWakeup {
        ScheduleWakeup { requested: Arc::default(), min_interval_ms }
    }

    /// The wakeup asked for since the tool was made, if any (taken: a second call gives `None`).
    pub fn take(&self) -> Option<Wakeup> {
        self.requested.lock().map_or(None, |mut requested| requested.take())
    }
}

/// Arguments of `schedule_wakeup`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WakeupArgs {
    /// Seconds until the next run of this loop's prompt (60 to 3600; others are clamped).
    pub delay_seconds: u64,
    /// Why this delay, in a few words (shown to the user).
    #[serde(default)]
    pub reason: String,
}

impl Tool for ScheduleWakeup {
    type Args = WakeupArgs;

    fn name(&self) -> &'static str {
        SCHEDULE_WAKEUP
    }

    fn description(&self) -> &'static str {
        "This prompt runs in a self-paced loop. To run it again later, call this with the delay that \
         fits what you are waiting for (60 to 3600 seconds) and why. If you do not call it, the loop \
         ends after this turn: do not call it once the work is done."
    }

    fn effect(&self) -> Effect {
        Effect::ReadOnly
    }

    fn access(&self, _args: &WakeupArgs, _ctx: &ToolContext) -> Access {
        Access::Session
    }

    async fn run(&self, args: WakeupArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let delay_ms = clamp_wakeup_ms(args.delay_seconds, self.min_interval_ms);
        let reason = args.reason.trim().to_string();
        let text = format!("The next run of this loop's prompt is in {}.", describe_ms(delay_ms));
        let mut requested = self
            .requested
            .lock()
            .map_err(|_| ToolError::Failed("schedule_wakeup: the loop's state is unavailable".into()))?;
        *requested = Some(Wakeup { delay_ms, reason });
        Ok(ToolOutput::text(text))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use lathe_tools::DynTool;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[tokio::test]
    async fn a_wakeup_is_clamped_and_its_last_call_wins() {
        let ctx = ToolContext::new(std::env::temp_dir());
        let tool = ScheduleWakeup::new(60_000);
        let out = tool.call(json!({"delay_seconds": 5, "reason": "soon"}), &ctx).await.unwrap();
        assert_eq!(out.text_content(), "The next run of this loop's prompt is in 1 min.");
        tool.call(json!({"delay_seconds": 7200, "reason": "the build takes long"}), &ctx).await.unwrap();
        assert_eq!(tool.take(), Some(Wakeup { delay_ms: 3_600_000, reason: "the build takes long".into() }));
        assert_eq!(tool.take(), None);
    }
}
