//! What the session host changes on an agent between (and during) turns: the permission mode, the
//! model, and the tools on offer.

use std::sync::Arc;

use lathe_policy::PermissionMode;
use lathe_protocol::{AgentEvent, LedgerItem, Meta};
use lathe_provider::Provider;
use tokio::sync::mpsc;

use super::{Agent, AgentSettings};
use crate::context::Budget;

impl Agent {
    /// The permission mode in force.
    pub fn permission_mode(&self) -> PermissionMode {
        self.controls.mode()
    }

    /// The model requests go to.
    pub fn model(&self) -> &str {
        self.requester.model()
    }

    /// The specs a request offers now: every tool's, but `exit_plan_mode` only in plan mode.
    pub(super) fn offered_tools(&self) -> Vec<lathe_protocol::ToolSpec> {
        self.coordinated(crate::plan::offered(self.tools.specs(), self.permission_mode()))
    }

    /// The names of the tools a request offers now (`exit_plan_mode` only in plan mode), in order.
    pub fn offered_tool_names(&self) -> Vec<String> {
        let mode = self.permission_mode();
        self.tools.names().into_iter().filter(|name| crate::plan::is_offered(name, mode)).collect()
    }

    /// Offers `tools` from the next request on (a command's `allowed-tools` for its turn); returns
    /// the tools it replaces.
    /// The deferred tools the ledger records as loaded are offered by `tools` too.
    pub fn replace_tools(&mut self, mut tools: lathe_tools::ToolRegistry) -> lathe_tools::ToolRegistry {
        super::load_recorded(&mut tools, self.transcript.items());
        std::mem::replace(&mut self.tools, tools)
    }

    /// Switches the permission mode, recording the change in the ledger; `false` when it was
    /// already in force.
    pub fn set_permission_mode(&mut self, mode: PermissionMode) -> bool {
        if mode == self.permission_mode() {
            return false;
        }
        self.controls.set_mode(mode);
        self.append(LedgerItem::Meta(Meta::ModeChange { mode: mode.to_string() }));
        true
    }

    /// Sends later requests to `provider` with the model and pricing of `settings` (its limits
    /// and permission mode are ignored), recording the switch in the ledger.
    pub fn switch_model(&mut self, provider: Arc<dyn Provider>, settings: AgentSettings) {
        let label = provider.name().to_string();
        self.requester.switch(provider, settings.model, settings.thinking_format);
        self.context
            .set_budget(Budget::new(settings.model_info.context_window, self.limits.max_output_tokens));
        self.totals.set_prices(settings.model_info);
        self.append(LedgerItem::Meta(Meta::ModelSwitch {
            model: self.requester.model().to_string(),
            provider: label,
        }));
    }

    /// Applies a mode change from the front end (recorded, and announced as
    /// [`AgentEvent::ModeChanged`]).
    pub(super) fn sync_mode(&mut self, events: &mpsc::UnboundedSender<AgentEvent>) {
        let Some(mode) = self.controls.changed_mode() else { return };
        if self.set_permission_mode(mode) {
            let _ = events.send(AgentEvent::ModeChanged { mode });
        }
    }
}
