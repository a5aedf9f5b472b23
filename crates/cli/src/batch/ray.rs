//! The Ray executor (`--executor ray`): not part of this build.

use std::path::Path;

/// Why the Ray executor cannot run.
#[derive(Debug, thiserror::Error)]
pub enum RayError {
    /// This build has no Ray executor.
    #[error("the Ray executor is not in this build")]
    Missing,
}

/// Up-front check that a Ray dashboard answers at `address` (exit 2 on failure, nothing run).
pub async fn check(_address: &str) -> Result<(), RayError> {
    Err(RayError::Missing)
}

/// Runs `tasks` (merged task objects, as given to batch-task) as one Ray job; calls `on_row` with
/// each result row (parsed JSON) the driver streams back, in the order they end.
pub async fn run(
    _address: &str,
    _tasks: &[serde_json::Value],
    _out: &Path,
    _cpus_per_task: f64,
    _on_row: &mut (dyn FnMut(serde_json::Value) + Send),
) -> Result<(), RayError> {
    Err(RayError::Missing)
}
