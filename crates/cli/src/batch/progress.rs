//! Progress of a batch on stdout: on a terminal one line redrawn in place (a bar, done / running /
//! failed counts and the running cost), otherwise one plain line per task that ends.

use std::io::{IsTerminal, Write};

use serde_json::Value;

/// Counts of a running batch.
pub struct Progress {
    total: usize,
    done: usize,
    running: usize,
    failed: usize,
    cost: f64,
    tty: bool,
}

/// Statuses counted as failed: the task did not run to a verdict.
const FAILED: [&str; 3] = ["error", "timeout", "limits"];

impl Progress {
    /// Progress over `total` tasks.
    pub fn new(total: usize) -> Progress {
        Progress { total, done: 0, running: 0, failed: 0, cost: 0.0, tty: std::io::stdout().is_terminal() }
    }

    /// A task started.
    pub fn started(&mut self) {
        self.running += 1;
        self.draw();
    }

    /// A task ended with `row`.
    pub fn ended(&mut self, row: &Value) {
        self.running = self.running.saturating_sub(1);
        self.done += 1;
        let status = row["status"].as_str().unwrap_or("error");
        if FAILED.contains(&status) {
            self.failed += 1;
        }
        self.cost += row["cost_usd"].as_f64().unwrap_or(0.0);
        if self.tty {
            self.draw();
        } else {
            let id = row["id"].as_str().unwrap_or("?");
            let wall = row["wall_s"].as_f64().unwrap_or(0.0);
            let cost = row["cost_usd"].as_f64().unwrap_or(0.0);
            super::say(format_args!(
                "[{}/{}] {id} {status} ({wall:.1}s, ${cost:.4}) · {} running · {} failed · ${:.4} so far\n",
                self.done, self.total, self.running, self.failed, self.cost
            ));
        }
    }

    /// Ends the redrawn line (nothing to do for plain lines).
    pub fn finish(&mut self) {
        if self.tty {
            super::say(format_args!("\n"));
        }
    }

    fn draw(&self) {
        if !self.tty {
            return;
        }
        const WIDTH: usize = 24;
        let filled = (self.done * WIDTH).checked_div(self.total).unwrap_or(WIDTH);
        let bar: String = "#".repeat(filled) + &".".repeat(WIDTH - filled);
        let mut out = std::io::stdout();
        let _ =
            crossterm::execute!(out, crossterm::terminal::Clear(crossterm::terminal::ClearType::CurrentLine));
        let _ = write!(
            out,
            "\r[{bar}] {}/{} done · {} running · {} failed · ${:.4}",
            self.done, self.total, self.running, self.failed, self.cost
        );
        let _ = out.flush();
    }
}
