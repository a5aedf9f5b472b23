//! Landlock: confining the child process itself, between fork and exec.
//!
//! The ruleset (with the paths opened) is built in the parent; the child only calls
//! `prctl(PR_SET_NO_NEW_PRIVS)` and `landlock_restrict_self`, which is safe after `fork` in a
//! multi-threaded program.

use std::os::unix::process::CommandExt;
use std::sync::Mutex;

use landlock::{
    ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr,
    path_beneath_rules,
};

use super::{NetworkAccess, Sandbox, SandboxMode};

/// The kernel's Landlock ABI version, or why there is none.
pub(super) fn probe() -> Result<i32, String> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the syscall only returns
    // the ABI version (or an error); it reads and writes no memory.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if abi >= 1 {
        Ok(abi as i32)
    } else {
        Err(format!("the kernel has no Landlock ({})", std::io::Error::last_os_error()))
    }
}

fn abi_of(version: i32) -> ABI {
    match version {
        ..=1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        _ => ABI::V5,
    }
}

fn ruleset(sandbox: &Sandbox, version: i32) -> Result<RulesetCreated, landlock::RulesetError> {
    let abi = abi_of(version);
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(abi))?;
    if sandbox.network == NetworkAccess::Off && version >= 4 {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
    }
    let mut created = ruleset.create()?.add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))?;
    created = created.add_rules(path_beneath_rules(
        ["/dev/null", "/dev/zero", "/dev/tty", "/dev/full", "/dev/random", "/dev/urandom"],
        AccessFs::from_all(abi),
    ))?;
    if sandbox.mode == SandboxMode::WorkspaceWrite {
        let writable: Vec<&std::path::PathBuf> =
            sandbox.writable.iter().chain(&sandbox.git_writable).collect();
        created = created.add_rules(path_beneath_rules(&writable, AccessFs::from_all(abi)))?;
    }
    Ok(created)
}

/// Makes `command` restrict itself before it runs. When the ruleset cannot be built the command
/// runs unconfined and a warning is logged (the probe said Landlock works, so this is rare).
pub(super) fn confine(sandbox: &Sandbox, version: i32, command: &mut std::process::Command) {
    let created = match ruleset(sandbox, version) {
        Ok(created) => created,
        Err(error) => {
            tracing::warn!(%error, "landlock: cannot build the ruleset; running unconfined");
            return;
        }
    };
    let slot = Mutex::new(Some(created));
    // SAFETY: the closure runs in the child between fork and exec; it takes the prepared ruleset
    // (no allocation on the success path) and makes two system calls (prctl, landlock_restrict_self).
    unsafe {
        command.pre_exec(move || {
            let taken = slot.lock().ok().and_then(|mut slot| slot.take());
            if let Some(created) = taken {
                created
                    .restrict_self()
                    .map_err(|_| std::io::Error::from(std::io::ErrorKind::PermissionDenied))?;
            }
            Ok(())
        });
    }
}
