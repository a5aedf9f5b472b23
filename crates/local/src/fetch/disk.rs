//! Free space of a filesystem (POSIX `statvfs`).

use std::io;
use std::path::Path;

/// Bytes available to an unprivileged user on the filesystem holding `dir`.
///
/// # Errors
/// The OS error of `statvfs` (e.g. `dir` does not exist).
#[cfg(unix)]
pub fn available_bytes(dir: &Path) -> io::Result<u64> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    let path = CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))?;
    let mut stats = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `path` is a valid NUL-terminated string and `stats` points to writable memory of the
    // right type; statvfs only writes into it.
    let rc = unsafe { libc::statvfs(path.as_ptr(), stats.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: statvfs returned 0, so it initialised the struct.
    let stats = unsafe { stats.assume_init() };
    #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
    Ok((stats.f_bavail as u64).saturating_mul(stats.f_frsize as u64))
}

/// Bytes available (unknown on this platform: reported as unlimited).
///
/// # Errors
/// Never.
#[cfg(not(unix))]
pub fn available_bytes(_dir: &Path) -> io::Result<u64> {
    Ok(u64::MAX)
}
