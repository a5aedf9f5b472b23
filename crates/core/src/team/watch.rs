//! Waiting for mail without polling: an inotify watch (the `notify` crate) on a mailbox file
//! wakes the waiter when the file changes; while nothing is written, the waiter sleeps in the
//! kernel and costs no CPU.

use std::path::Path;
use std::sync::Arc;

use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::Notify;

use super::TeamError;

/// A watch on one file.
pub struct MailWatch {
    _watcher: RecommendedWatcher,
    signal: Arc<Notify>,
}

impl MailWatch {
    /// Watches `file` (which must exist).
    pub fn new(file: &Path) -> Result<MailWatch, TeamError> {
        let signal = Arc::new(Notify::new());
        let wake = signal.clone();
        let error =
            |error: notify::Error| TeamError::Watch { path: file.to_path_buf(), detail: error.to_string() };
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            if event.is_ok_and(|event| event.kind.is_modify() || event.kind.is_create()) {
                wake.notify_one();
            }
        })
        .map_err(error)?;
        watcher.watch(file, RecursiveMode::NonRecursive).map_err(error)?;
        Ok(MailWatch { _watcher: watcher, signal })
    }

    /// Returns once the file changed since the last return (at once when it already has).
    pub async fn changed(&self) {
        self.signal.notified().await;
    }

    /// Wakes [`MailWatch::changed`] as a change would (a member's state changed).
    pub fn poke(&self) {
        self.signal.notify_one();
    }
}
