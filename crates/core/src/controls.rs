//! What the session host changes on an agent between (and during) turns: the permission mode, the
//! model, and the warnings and durability of the session file.

use std::sync::Arc;

use lathe_policy::PermissionMode;
use lathe_protocol::{AgentEvent, LedgerItem, Meta};
use lathe_provider::Provider;
use tokio::sync::mpsc;

use crate::agent::{Agent, AgentSettings};
use crate::context::Budget;

impl Agent {
    /// The permission mode in force.
    pub fn permission_mode(&self) -> PermissionMode {
        self.settings.permission_mode
    }

    /// The model requests go to.
    pub fn model(&self) -> &str {
        &self.settings.model
    }

    /// Offers `tools` from the next request on (a command's `allowed-tools` for its turn); returns
    /// the tools it replaces.
    pub fn replace_tools(&mut self, tools: lathe_tools::ToolRegistry) -> lathe_tools::ToolRegistry {
        std::mem::replace(&mut self.tools, tools)
    }

    /// Switches the permission mode, recording the change in the ledger; `false` when it was
    /// already in force.
    pub fn set_permission_mode(&mut self, mode: PermissionMode) -> bool {
        if mode == self.settings.permission_mode {
            return false;
        }
        self.settings.permission_mode = mode;
        self.policy.set_mode(mode);
        self.append(LedgerItem::Meta(Meta::ModeChange { mode: mode.to_string() }));
        true
    }

    /// Sends later requests to `provider` with the model and pricing of `settings` (its limits
    /// and permission mode are ignored), recording the switch in the ledger.
    pub fn switch_model(&mut self, provider: Arc<dyn Provider>, settings: AgentSettings) {
        let label = provider.name().to_string();
        self.provider = provider;
        self.settings.model = settings.model;
        self.settings.model_info = settings.model_info;
        self.settings.thinking_format = settings.thinking_format;
        self.context.set_budget(Budget::new(
            self.settings.model_info.context_window,
            self.settings.max_output_tokens,
        ));
        self.append(LedgerItem::Meta(Meta::ModelSwitch {
            model: self.settings.model.clone(),
            provider: label,
        }));
    }

    /// Sends the warnings collected since the last call.
    pub fn send_warnings(&mut self, events: &mpsc::UnboundedSender<AgentEvent>) {
        for message in self.pending_warnings.drain(..) {
            let _ = events.send(AgentEvent::Warning { message });
        }
    }

    /// Makes the session file durable (`fsync`); a failure becomes a warning.
    pub fn sync(&mut self) {
        if let Some(session) = &self.session
            && let Err(error) = session.sync()
        {
            self.pending_warnings.push(format!("{error}; the last turn may not be on disk"));
        }
    }

    pub(crate) fn sync_mode(&mut self, events: &mpsc::UnboundedSender<AgentEvent>) {
        let Some(modes) = &mut self.mode_watch else { return };
        if !modes.has_changed().unwrap_or(false) {
            return;
        }
        let mode = *modes.borrow_and_update();
        if self.set_permission_mode(mode) {
            let _ = events.send(AgentEvent::ModeChanged { mode });
        }
    }
}
