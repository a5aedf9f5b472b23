//! A guard that aborts a spawned task when dropped: a start that fails half-way stops what it
//! started in the background (the prompt's git commands).

/// Aborts the task when dropped; a no-op once the task has finished.
pub(super) struct AbortOnDrop(pub(super) tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
