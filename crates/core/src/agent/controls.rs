//! The agent's controls: the permission policy (and its mode), the approver that answers its
//! `ask`s, and the front end's mode changes.

use std::sync::Arc;

use lathe_policy::{PermissionMode, Policy};
use tokio::sync::watch;

use crate::exec::Approver;

/// The permission policy, the approver that answers its `ask`s, and the front end's mode changes.
pub(super) struct Controls {
    policy: Arc<Policy>,
    approver: Option<Arc<dyn Approver>>,
    /// Permission-mode changes from the front end, read before each response's calls run.
    modes: Option<watch::Receiver<PermissionMode>>,
}

impl Controls {
    pub(super) fn new(policy: Arc<Policy>) -> Controls {
        Controls { policy, approver: None, modes: None }
    }

    pub(super) fn mode(&self) -> PermissionMode {
        self.policy.mode()
    }

    pub(super) fn set_mode(&mut self, mode: PermissionMode) {
        self.policy.set_mode(mode);
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
