//! Which backend confines commands on this machine, why the first choice was passed over, and
//! what to do about it.
//!
//! The probe runs once per network policy (bubblewrap's probe makes a network namespace only when
//! the network is off, as the commands it will confine do). [`start`] runs it on a background
//! thread at session start, so its few milliseconds overlap the rest of the start-up; whoever
//! needs the answer first waits for it.

use std::sync::OnceLock;

use super::{Backend, NetworkAccess, bwrap};

/// The outcome of probing the backends for one network policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probed {
    /// The backend in use, or `None` when none works.
    pub backend: Option<Backend>,
    /// Why each backend before the one in use was passed over (bubblewrap's own stderr line).
    pub passed_over: Vec<String>,
    /// What would make the first choice (bubblewrap) work, fitted to how it failed.
    pub fix: Option<String>,
    /// `LATHE_SANDBOX_BACKEND`, when it chose the backend (no warning is then given).
    pub forced: Option<String>,
}

/// The probe's outcome for `network`, probing on the first call (later calls wait for it).
pub fn probed(network: NetworkAccess) -> &'static Probed {
    static OFF: OnceLock<Probed> = OnceLock::new();
    static ON: OnceLock<Probed> = OnceLock::new();
    let cell = match network {
        NetworkAccess::Off => &OFF,
        NetworkAccess::On => &ON,
    };
    cell.get_or_init(|| probe(network))
}

/// Starts the probe for `network` on a background thread (nothing happens when it ran already).
pub fn start(network: NetworkAccess) {
    let _ = std::thread::Builder::new().name("sandbox-probe".into()).spawn(move || probed(network));
}

fn probe(network: NetworkAccess) -> Probed {
    let forced = std::env::var("LATHE_SANDBOX_BACKEND").ok();
    let mut passed_over = Vec::new();
    let mut fix = None;
    let wants = |name: &str| forced.as_deref().is_none_or(|f| f == name);
    let mut found = None;
    if wants("bwrap") {
        match bwrap::probe(network) {
            Ok(path) => found = Some(Backend::Bubblewrap(path)),
            Err(failure) => {
                fix = Some(failure.fix());
                passed_over.push(failure.to_string());
            }
        }
    }
    #[cfg(target_os = "linux")]
    if found.is_none() && wants("landlock") {
        match super::landlock::probe() {
            Ok(abi) => found = Some(Backend::Landlock(abi)),
            Err(why) => passed_over.push(why),
        }
    }
    if let Some(forced) = forced.as_deref().filter(|f| !matches!(*f, "bwrap" | "landlock")) {
        passed_over.push(format!("LATHE_SANDBOX_BACKEND={forced}"));
    }
    Probed { backend: found, passed_over, fix, forced }
}

impl Probed {
    /// `Err` with why no backend works ("…; …"), as [`super::backend`] gives it.
    pub fn reasons(&self) -> String {
        self.passed_over.join("; ")
    }

    /// One warning when the backend in use is not the first choice and nobody chose it: which one
    /// runs, what it cannot do, bubblewrap's error and the likely fix. `None` when bubblewrap runs,
    /// when `LATHE_SANDBOX_BACKEND` chose, and when no backend works (the policy says that when a
    /// command first needs the sandbox: [`Probed::advice`]).
    pub fn warning(&self) -> Option<String> {
        if self.forced.is_some() {
            return None;
        }
        let Some(Backend::Landlock(abi)) = &self.backend else { return None };
        let network =
            if *abi >= 4 { "TCP is blocked, other network use is not" } else { "the network is not blocked" };
        Some(format!(
            "the sandbox uses Landlock (ABI {abi}), not bubblewrap: {}. Under Landlock .git, .lathe and .claude \
             in the workspace are writable and {network}. Fix: {}",
            self.reasons(),
            self.fix.as_deref().unwrap_or("install bubblewrap (apt-get install bubblewrap)")
        ))
    }

    /// What the user can do when no backend works: the fix for bubblewrap's failure, or turning
    /// the sandbox off.
    pub fn advice(&self) -> String {
        match &self.fix {
            Some(fix) => format!("{fix}; or set `[sandbox] mode = \"off\"` in ~/.lathe/config.toml"),
            None if self.forced.is_some() => {
                "unset LATHE_SANDBOX_BACKEND, or set `[sandbox] mode = \"off\"` in ~/.lathe/config.toml"
                    .into()
            }
            None => "set `[sandbox] mode = \"off\"` in ~/.lathe/config.toml".into(),
        }
    }

    /// The backend's name for `init` and `/status` (`bubblewrap`, `landlock`), `None` without one.
    pub fn backend_name(&self) -> Option<&'static str> {
        match self.backend {
            Some(Backend::Bubblewrap(_)) => Some("bubblewrap"),
            Some(Backend::Landlock(_)) => Some("landlock"),
            None => None,
        }
    }
}

/// Why bubblewrap cannot confine commands here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum BwrapFailure {
    /// No `bwrap` on `PATH`.
    Missing,
    /// It could not be started at all (the OS error).
    Spawn(String),
    /// It ran and refused; its stderr's last line.
    Refused(String),
}

impl std::fmt::Display for BwrapFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BwrapFailure::Missing => write!(f, "bubblewrap (bwrap) is not installed"),
            BwrapFailure::Spawn(error) => write!(f, "bwrap cannot start: {error}"),
            BwrapFailure::Refused(line) => write!(f, "bwrap cannot create a sandbox here: {line}"),
        }
    }
}

impl BwrapFailure {
    /// The likely fix, from bubblewrap's own message (see bubblewrap's README, "User namespaces",
    /// and Ubuntu's AppArmor note on unprivileged user namespaces).
    pub(super) fn fix(&self) -> String {
        let line = match self {
            BwrapFailure::Missing => return "install bubblewrap (apt-get install bubblewrap)".into(),
            BwrapFailure::Spawn(_) => return "check that the bwrap on PATH is executable".into(),
            BwrapFailure::Refused(line) => line.to_ascii_lowercase(),
        };
        let fix = if line.contains("uid map") || line.contains("setting up uid") {
            "AppArmor restricts unprivileged user namespaces (Ubuntu 23.10 and later): give bwrap an AppArmor \
             profile, or `sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`"
        } else if line.contains("rtm_newaddr") || line.contains("loopback") {
            "this machine cannot set up a network namespace: set `[sandbox] network = \"on\"` in \
             ~/.lathe/config.toml to run commands with the host's network"
        } else if line.contains("proc") {
            "the container hides /proc from new namespaces: start it with `--security-opt systempaths=unconfined`"
        } else if line.contains("namespace") || line.contains("unprivileged") {
            "unprivileged user namespaces are off: `sudo sysctl kernel.unprivileged_userns_clone=1` (Debian) or \
             raise `user.max_user_namespaces`; in a container, allow them (docker: `--security-opt \
             seccomp=unconfined`)"
        } else if line.contains("operation not permitted") || line.contains("permission denied") {
            "the container forbids the mounts bubblewrap needs: start it with `--security-opt seccomp=unconfined \
             --security-opt apparmor=unconfined`, or run Lathe outside it"
        } else {
            "run `bwrap --ro-bind / / --dev /dev true` to see why bubblewrap fails"
        };
        fix.to_string()
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_fix_fits_bubblewraps_message() {
        let fix = |line: &str| BwrapFailure::Refused(line.into()).fix();
        assert!(fix("bwrap: setting up uid map: Permission denied").contains("AppArmor"));
        assert!(
            fix("bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces")
                .contains("unprivileged_userns_clone")
        );
        assert!(
            fix("bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted").contains("network = \"on\"")
        );
        assert!(
            fix("bwrap: Can't mount proc on /newroot/proc: Operation not permitted").contains("systempaths")
        );
        assert!(fix("bwrap: Failed to make / slave: Operation not permitted").contains("seccomp=unconfined"));
        assert!(BwrapFailure::Missing.fix().contains("apt-get install bubblewrap"));
    }

    #[test]
    fn a_landlock_fallback_warns_once_with_bwraps_line_but_not_when_forced() {
        let fell_back = Probed {
            backend: Some(Backend::Landlock(4)),
            passed_over: vec![
                "bwrap cannot create a sandbox here: bwrap: setting up uid map: Permission denied".into(),
            ],
            fix: Some(BwrapFailure::Refused("setting up uid map".into()).fix()),
            forced: None,
        };
        let warning = fell_back.warning().expect("a warning");
        assert!(warning.contains("setting up uid map") && warning.contains("AppArmor"), "{warning}");
        assert_eq!(Probed { forced: Some("landlock".into()), ..fell_back.clone() }.warning(), None);
        let none = Probed { backend: None, ..fell_back };
        assert_eq!(none.warning(), None);
        assert!(none.advice().contains("AppArmor"), "{}", none.advice());
    }
}
