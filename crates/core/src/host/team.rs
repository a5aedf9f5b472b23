//! What a session gets of teams: a lead's hub and tools (with `--teams`), or a teammate's own
//! tools (`lathe teammate`); see [`crate::team`].

use std::path::Path;
use std::sync::Arc;

use lathe_tools::DynTool;

use super::config::{Config, ResolvedProvider};
use super::extensions::Found;
use super::flags::{Flags, Interaction, TeamSeat};
use crate::team::approval::MailApprover;
use crate::team::lead::{Role, Roles, TeamHub};
use crate::team::spawn::Launch;
use crate::team::tools::{FixedSeat, shared_tools};

/// The lead's hub, when teams are on and the session is not a teammate's (`lead` is who answers
/// the lead's permission prompts; `None` for a teammate's session); `None` otherwise (or when
/// Lathe's own executable cannot be found to start teammates with).
pub(super) fn lead_hub(
    flags: &Flags,
    lead: Option<Interaction>,
    config: &Config,
    resolved: &ResolvedProvider,
    home: &Path,
    found: &Found,
    policy: &Arc<lathe_policy::Policy>,
) -> Option<Arc<TeamHub>> {
    let interaction = lead.filter(|_| flags.teams)?;
    let exe = std::env::current_exe().ok()?;
    let launch = Launch {
        exe,
        args: launch_args(flags, config),
        model: resolved.model.clone(),
        lead_approves: interaction == Interaction::Interactive,
    };
    let agents = found.agents.clone();
    let roles: Roles = Arc::new(move |kind: &str| {
        let Some(def) = agents.get(kind) else {
            let names: Vec<&str> = agents.all().iter().map(|agent| agent.name.as_str()).collect();
            return Err(format!("unknown agent_type `{kind}`; the types are {}", names.join(", ")));
        };
        let prompt = def.system_prompt().map_err(|error| error.to_string())?;
        Ok(Role { model: def.model.clone(), prompt })
    });
    Some(Arc::new(TeamHub::new(home.to_path_buf(), config.workspace.clone(), launch, roles, policy.clone())))
}

/// The approver of a session: a teammate whose lead has a person at hand asks it through the
/// mailbox ([`MailApprover`]); any other session has the front end's (`interactive`), if any.
pub(super) fn approver(
    home: &Path,
    seat: Option<&TeamSeat>,
    interactive: Option<&Arc<super::approver::ChannelApprover>>,
) -> Option<Arc<dyn crate::Approver>> {
    match seat {
        Some(seat) if seat.lead_approves => {
            let inbox = crate::team::inbox_dir(&crate::team::team_dir(home, &seat.team));
            Some(Arc::new(MailApprover::new(inbox, seat.name.clone())))
        }
        _ => interactive.map(|approver| approver.clone() as Arc<dyn crate::Approver>),
    }
}

/// A teammate's team tools: `send_message` and the board, on its own team.
pub(super) fn member_tools(home: &Path, seat: &TeamSeat) -> Vec<Arc<dyn DynTool>> {
    let dir = crate::team::team_dir(home, &seat.team);
    shared_tools(Arc::new(FixedSeat { dir, name: seat.name.clone() }))
}

/// The session's tools as a lead (coordinator mode gates them) or a teammate (its file writes
/// checked against the other members') has them.
pub(super) fn wrap(
    tools: lathe_tools::ToolRegistry,
    hub: Option<&Arc<TeamHub>>,
    seat: Option<&TeamSeat>,
    home: &Path,
) -> lathe_tools::ToolRegistry {
    let tools = match hub {
        Some(hub) => crate::team::coordinator::gate(&tools, hub),
        None => tools,
    };
    match seat {
        Some(seat) => {
            crate::team::owners::Owned::wrap_all(&tools, &crate::team::team_dir(home, &seat.team), &seat.name)
        }
        None => tools,
    }
}

/// The lead's flags a teammate is started with: the same provider, endpoint, limits, sandbox and
/// memory settings (its model and permission mode are added per start).
fn launch_args(flags: &Flags, config: &Config) -> Vec<String> {
    let mut args = vec!["--provider".to_string(), config.provider.clone()];
    let mut pair = |name: &str, value: Option<String>| {
        if let Some(value) = value {
            args.push(name.to_string());
            args.push(value);
        }
    };
    pair("--base-url", flags.base_url.clone());
    pair("--sandbox", flags.sandbox.clone());
    pair("--memory", flags.memory.clone());
    pair("--max-turns", flags.max_turns.map(|n| n.to_string()));
    pair("--max-calls-per-response", flags.max_calls_per_response.map(|n| n.to_string()));
    pair("--model-path", flags.model_path.as_ref().map(|path| path.display().to_string()));
    for config in &flags.mcp_config {
        pair("--mcp-config", Some(config.clone()));
    }
    if flags.no_auto_compact {
        args.push("--no-auto-compact".into());
    }
    args
}
