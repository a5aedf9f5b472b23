//! The results of a batch under `--out DIR`, written only here (for every executor):
//! `results.jsonl` (one row a finished task, appended as it ends; a second row for an id is
//! refused), `summary.json` and `preds.json` (SWE-bench's predictions shape).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// What can go wrong with the results files.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// Reading or writing a file failed (a full disk among others).
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// A row for an id that already has one.
    #[error("a result row for `{0}` is already in results.jsonl")]
    Duplicate(String),
    /// A row without a string `id`.
    #[error("a result row without an id: {0}")]
    NoId(String),
}

/// The statuses a row can have, in the order the summary lists them.
pub const STATUSES: [&str; 6] = ["resolved", "unresolved", "empty_patch", "error", "timeout", "limits"];

/// `DIR/results.jsonl`, opened for appending.
pub struct Results {
    path: PathBuf,
    file: std::fs::File,
    rows: Vec<Value>,
    ids: BTreeSet<String>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ResultsError + '_ {
    move |source| ResultsError::Io { path: path.to_path_buf(), source }
}

impl Results {
    /// Opens (creating) `dir/results.jsonl` and reads the rows already there. A last line cut
    /// short (a batch killed mid-write) is dropped from the file. With `redo`, the rows of those
    /// ids are removed first (the file is rewritten whole, then renamed over the old one).
    pub fn open(dir: &Path, redo: &BTreeSet<String>) -> Result<Results, ResultsError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let path = dir.join("results.jsonl");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(error) => return Err(io(&path)(error)),
        };
        let complete = match text.rfind('\n') {
            Some(end) => &text[..=end],
            None => "",
        };
        let mut rows = Vec::new();
        let mut ids = BTreeSet::new();
        for line in complete.lines().filter(|line| !line.trim().is_empty()) {
            let Ok(row) = serde_json::from_str::<Value>(line) else { continue };
            let Some(id) = row["id"].as_str().map(str::to_string) else { continue };
            if redo.contains(&id) || !ids.insert(id) {
                continue;
            }
            rows.push(row);
        }
        if complete.len() != text.len() || !redo.is_empty() {
            let kept: String = rows.iter().map(|row| format!("{row}\n")).collect();
            let temp = dir.join(".results.jsonl.tmp");
            std::fs::write(&temp, kept).map_err(io(&temp))?;
            std::fs::rename(&temp, &path).map_err(io(&path))?;
        }
        let file = std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(io(&path))?;
        Ok(Results { path, file, rows, ids })
    }

    /// The ids that have a row.
    pub fn finished(&self) -> &BTreeSet<String> {
        &self.ids
    }

    /// Every row, in file order.
    pub fn rows(&self) -> &[Value] {
        &self.rows
    }

    /// Appends `row` as one line, synced to disk. Refuses a second row for an id; a failed write
    /// (a full disk) is cut back off the file, returned, and the row is not counted.
    pub fn append(&mut self, row: Value) -> Result<(), ResultsError> {
        let id = row["id"].as_str().ok_or_else(|| ResultsError::NoId(row.to_string()))?.to_string();
        if self.ids.contains(&id) {
            return Err(ResultsError::Duplicate(id));
        }
        let line = format!("{row}\n");
        let before = self.file.metadata().map_err(io(&self.path))?.len();
        let written = self.file.write_all(line.as_bytes()).and_then(|()| self.file.sync_data());
        if let Err(error) = written {
            // A write cut short (a full disk) must not leave half a line for the next run to read.
            let _ = self.file.set_len(before);
            return Err(io(&self.path)(error));
        }
        self.ids.insert(id);
        self.rows.push(row);
        Ok(())
    }
}

/// Percentile `p` (0–100, nearest rank) of `values`; `None` when empty.
fn percentile(values: &[f64], p: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// `summary.json`: `tasks`, `by_status` (every status, 0 included), `resolved_rate` (resolved /
/// tasks), `cost_usd`, `cost_per_resolved_usd` (`null` without a resolved task), `input_tokens`,
/// `cached_tokens`, `output_tokens`, `wall_s_p50`, `wall_s_p90` (one task end to end), and of
/// this run: `ran` (tasks run), `batch_wall_s`, `tasks_per_hour`.
pub fn summary(rows: &[Value], ran: usize, batch_wall_s: f64) -> Value {
    let mut by_status: BTreeMap<&str, u64> = STATUSES.iter().map(|s| (*s, 0)).collect();
    for row in rows {
        if let Some(count) = row["status"].as_str().and_then(|s| by_status.get_mut(s)) {
            *count += 1;
        }
    }
    let sum = |field: &str| rows.iter().filter_map(|row| row[field].as_f64()).sum::<f64>();
    let sum_u = |field: &str| rows.iter().filter_map(|row| row[field].as_u64()).sum::<u64>();
    let resolved = by_status["resolved"];
    let cost = sum("cost_usd");
    let walls: Vec<f64> = rows.iter().filter_map(|row| row["wall_s"].as_f64()).collect();
    let tasks = rows.len() as f64;
    let ordered: serde_json::Map<String, Value> =
        STATUSES.iter().map(|s| (s.to_string(), json!(by_status[s]))).collect();
    json!({
        "tasks": rows.len(),
        "by_status": ordered,
        "resolved_rate": if rows.is_empty() { 0.0 } else { resolved as f64 / tasks },
        "cost_usd": cost,
        "cost_per_resolved_usd": if resolved == 0 { Value::Null } else { json!(cost / resolved as f64) },
        "input_tokens": sum_u("input_tokens"),
        "cached_tokens": sum_u("cached_tokens"),
        "output_tokens": sum_u("output_tokens"),
        "wall_s_p50": percentile(&walls, 50.0),
        "wall_s_p90": percentile(&walls, 90.0),
        "ran": ran,
        "batch_wall_s": batch_wall_s,
        "tasks_per_hour": if batch_wall_s > 0.0 { ran as f64 * 3600.0 / batch_wall_s } else { 0.0 },
    })
}

/// The summary as the table printed at the end of a batch.
pub fn table(summary: &Value) -> String {
    let mut out = String::from("status        tasks\n");
    for status in STATUSES {
        out.push_str(&format!("{status:<13} {:>5}\n", summary["by_status"][status]));
    }
    let money = |v: &Value| v.as_f64().map_or("-".to_string(), |usd| format!("${usd:.4}"));
    let secs = |v: &Value| v.as_f64().map_or("-".to_string(), |s| format!("{s:.1}s"));
    out.push_str(&format!(
        "total         {:>5}\nresolved rate {:.1}%\ncost {} ({} per resolved task)\nwall p50 {} · p90 {}\n\
         this run: {} tasks in {} ({:.1} tasks/hour)\n",
        summary["tasks"],
        summary["resolved_rate"].as_f64().unwrap_or(0.0) * 100.0,
        money(&summary["cost_usd"]),
        money(&summary["cost_per_resolved_usd"]),
        secs(&summary["wall_s_p50"]),
        secs(&summary["wall_s_p90"]),
        summary["ran"],
        secs(&summary["batch_wall_s"]),
        summary["tasks_per_hour"].as_f64().unwrap_or(0.0),
    ));
    out
}

/// `preds.json`: one `{"instance_id", "model_name_or_path", "model_patch"}` per row, the patch
/// read from `dir/tasks/<id>/patch.diff` (empty when there is none).
pub fn preds(dir: &Path, rows: &[Value]) -> Value {
    let preds: Vec<Value> = rows
        .iter()
        .filter_map(|row| {
            let id = row["id"].as_str()?;
            let patch =
                std::fs::read_to_string(dir.join("tasks").join(id).join("patch.diff")).unwrap_or_default();
            let model = row["model"].as_str().unwrap_or("lathe");
            Some(json!({"instance_id": id, "model_name_or_path": model, "model_patch": patch}))
        })
        .collect();
    Value::Array(preds)
}

/// Writes `value` (pretty JSON) to `path` through a temp file renamed over it.
pub fn write_json(path: &Path, value: &Value) -> Result<(), ResultsError> {
    let temp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(value).unwrap_or_default() + "\n";
    std::fs::write(&temp, text).map_err(io(&temp))?;
    std::fs::rename(&temp, path).map_err(io(path))
}

#[cfg(test)]
#[path = "results_tests.rs"]
mod tests;

/// Takes the results folder `dir` for this batch: an exclusive `flock(2)` on `dir/.lock`, held
/// while the returned file is open (the kernel drops it when this process ends, however). A
/// second `lathe batch` on the same folder would run every task again and write a second row
/// for each: it is refused, naming the holder's pid.
pub fn take(dir: &Path) -> Result<std::fs::File, String> {
    use std::io::{Read, Seek, SeekFrom, Write};
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(".lock");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .write(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {
            let _ = file.set_len(0);
            let _ = write!(file, "{}", std::process::id());
            Ok(file)
        }
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut pid = String::new();
            let _ = file.seek(SeekFrom::Start(0)).and_then(|_| file.read_to_string(&mut pid));
            Err(format!(
                "another lathe batch (process {}) is writing to {}; wait for it to end or choose another --out",
                pid.trim(),
                dir.display()
            ))
        }
        Err(std::fs::TryLockError::Error(error)) => Err(format!("{}: {error}", path.display())),
    }
}
