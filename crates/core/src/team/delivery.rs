//! What the lead's side hands its loop: mail taken for a request, and how waiting for the team
//! ended.

/// What waiting for the team ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Mail is there for the next request (or an approval request for the lead's user).
    Mail,
    /// No teammate is working and no mail is unread: the turn can end.
    Settled,
    /// The turn was cancelled.
    Cancelled,
}

/// Mail taken for a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// The marked text.
    pub text: String,
    /// The cursor after it, for [`super::lead::TeamHub::commit`].
    pub end: u64,
    /// Notes about unreadable lines.
    pub skipped: Vec<String>,
}
