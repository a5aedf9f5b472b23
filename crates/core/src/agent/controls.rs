//! The agent's controls: the permission policy (and its mode), the approver that answers its
//! `ask`s, and the front end's mode changes.

use std::sync::Arc;

use lathe_policy::{PermissionMode, Policy};
use tokio::sync::watch;

use crate::auto_mode::Reviewer;
use crate::exec::Approver;

/// The permission policy, the approver that answers its `ask`s, and the front end's mode changes.
pub(super) struct Controls {
    policy: Arc<Policy>,
    approver: Option<Arc<dyn Approver>>,
    /// Permission-mode changes from the front end, read before each response's calls run.
    modes: Option<watch::Receiver<PermissionMode>>,
    /// Auto mode's reviewer, and whether this agent is the session's (it then tells the reviewer
    /// the user's messages; a sub-agent's are its parent's, never its own task prompt).
    reviewer: Option<(Arc<Reviewer>, bool)>,
}

impl Controls {
    pub(super) fn new(policy: Arc<Policy>) -> Controls {
        Controls { policy, approver: None, modes: None, reviewer: None }
    }

    pub(super) fn mode(&self) -> PermissionMode {
        self.policy.mode()
    }

    pub(super) fn set_mode(&mut self, mode: PermissionMode) {
        self.policy.set_mode(mode);
        if let (PermissionMode::Auto, Some((reviewer, true))) = (mode, &self.reviewer) {
            // Choosing auto mode again starts the breaker's count afresh.
            reviewer.reset();
        }
    }

    /// The reviewer of auto mode, and whether this agent owns it.
    pub(super) fn reviewer(&self) -> Option<(&Reviewer, bool)> {
        self.reviewer.as_ref().map(|(reviewer, owns)| (reviewer.as_ref(), *owns))
    }

    pub(super) fn set_reviewer(&mut self, reviewer: Arc<Reviewer>, owns: bool) {
        self.reviewer = Some((reviewer, owns));
    }

    pub(super) fn policy(&self) -> &Arc<Policy> {
        &self.policy
    }

    pub(super) fn set_policy(&mut self, policy: Arc<Policy>) {
        self.policy = policy;
    }

    /// Without one, every `ask` is a denial (headless).
    pub(super) fn approver(&self) -> Option<&dyn Approver> {
        self.approver.as_deref()
    }

    pub(super) fn set_approver(&mut self, approver: Arc<dyn Approver>) {
        self.approver = Some(approver);
    }

    pub(super) fn watch(&mut self, modes: watch::Receiver<PermissionMode>) {
        self.modes = Some(modes);
    }

    /// The mode the front end switched to since the last call, if any.
    pub(super) fn changed_mode(&mut self) -> Option<PermissionMode> {
        let modes = self.modes.as_mut()?;
        if !modes.has_changed().unwrap_or(false) {
            return None;
        }
        Some(*modes.borrow_and_update())
    }
}
