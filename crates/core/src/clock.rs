//! Wall-clock time as the ledger records it.

/// Milliseconds since the Unix epoch; 0 when the system clock reads before it.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_millis() as u64)
}
