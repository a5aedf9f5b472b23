//! The no-progress check (FEATURES.md §B): the same tool called with the same arguments failing
//! [`REPEAT_LIMIT`] times in a row stops the loop with a clear reason. Any success, or a different
//! call, resets the count.

use lathe_protocol::{ToolCall, ToolResult};

/// Identical failing calls in a row that stop the loop.
pub const REPEAT_LIMIT: u32 = 3;

/// Tracks the most recent failing call and how often it repeated.
#[derive(Debug, Default)]
pub struct ProgressGuard {
    last: Option<(String, String)>,
    repeats: u32,
}

impl ProgressGuard {
    /// Records one call and its result, in execution order.
    pub fn observe(&mut self, call: &ToolCall, result: &ToolResult) {
        if !result.is_error {
            self.last = None;
            self.repeats = 0;
            return;
        }
        // serde_json with preserve_order keeps key order; identical calls serialise identically.
        let key = (call.name.clone(), call.arguments.to_string());
        if self.last.as_ref() == Some(&key) {
            self.repeats += 1;
        } else {
            self.last = Some(key);
            self.repeats = 1;
        }
    }

    /// `Some(reason)` once the same failing call repeated [`REPEAT_LIMIT`] times in a row.
    pub fn stalled(&self) -> Option<String> {
        let (name, arguments) = self.last.as_ref()?;
        (self.repeats >= REPEAT_LIMIT).then(|| {
            let mut arguments = arguments.clone();
            if arguments.len() > 200 {
                let mut cut = 200;
                while !arguments.is_char_boundary(cut) {
                    cut -= 1;
                }
                arguments.truncate(cut);
                arguments.push('…');
            }
            format!("{name} failed {} times in a row with the same arguments {arguments}", self.repeats)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lathe_protocol::ToolStatus;
    use serde_json::json;

    fn call(path: &str) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: "read_file".into(),
            arguments: json!({"path": path}),
            incomplete: None,
        }
    }

    fn result(is_error: bool) -> ToolResult {
        ToolResult::text("c", "x", is_error, ToolStatus::Completed)
    }

    #[test]
    fn three_identical_failures_stall_and_success_resets() {
        let mut guard = ProgressGuard::default();
        guard.observe(&call("a"), &result(true));
        guard.observe(&call("a"), &result(true));
        assert_eq!(guard.stalled(), None);
        guard.observe(&call("a"), &result(false));
        guard.observe(&call("a"), &result(true));
        guard.observe(&call("b"), &result(true));
        guard.observe(&call("b"), &result(true));
        assert_eq!(guard.stalled(), None);
        guard.observe(&call("b"), &result(true));
        assert!(guard.stalled().is_some_and(|reason| reason.contains("3 times")));
    }
}
