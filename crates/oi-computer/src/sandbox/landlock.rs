//! Landlock through raw syscalls (Linux): the ruleset is built in the parent, before the fork,
//! and the child only calls `landlock_restrict_self` on it between fork and exec, which
//! allocates nothing.
//!
//! Every `unsafe` block here is a one-syscall wrapper with the reason it is sound.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `LANDLOCK_CREATE_RULESET_VERSION`: ask for the ABI version.
const CREATE_RULESET_VERSION: libc::c_uint = 1;
/// `LANDLOCK_RULE_PATH_BENEATH`.
const RULE_PATH_BENEATH: libc::c_int = 1;

/// File-system access rights (`LANDLOCK_ACCESS_FS_*`).
pub(crate) mod fs {
    /// Execute a file.
    pub const EXECUTE: u64 = 1 << 0;
    /// Open a file for writing.
    pub const WRITE_FILE: u64 = 1 << 1;
    /// Open a file for reading.
    pub const READ_FILE: u64 = 1 << 2;
    /// List a directory.
    pub const READ_DIR: u64 = 1 << 3;
    /// Remove a directory.
    pub const REMOVE_DIR: u64 = 1 << 4;
    /// Remove a file.
    pub const REMOVE_FILE: u64 = 1 << 5;
    /// Create a character device.
    pub const MAKE_CHAR: u64 = 1 << 6;
    /// Create a directory.
    pub const MAKE_DIR: u64 = 1 << 7;
    /// Create a regular file.
    pub const MAKE_REG: u64 = 1 << 8;
    /// Create a socket file.
    pub const MAKE_SOCK: u64 = 1 << 9;
    /// Create a named pipe.
    pub const MAKE_FIFO: u64 = 1 << 10;
    /// Create a block device.
    pub const MAKE_BLOCK: u64 = 1 << 11;
    /// Create a symbolic link.
    pub const MAKE_SYM: u64 = 1 << 12;
    /// Link or rename a file into another directory (ABI 2).
    pub const REFER: u64 = 1 << 13;
    /// Truncate a file, including `open(O_TRUNC)` (ABI 3).
    pub const TRUNCATE: u64 = 1 << 14;
    /// `ioctl` on a device file (ABI 5).
    pub const IOCTL_DEV: u64 = 1 << 15;

    /// Creating device nodes: never granted (handled, so denied everywhere).
    pub const MAKE_DEVICE: u64 = MAKE_CHAR | MAKE_BLOCK;
    /// The rights that may be granted on a single file (not a directory).
    pub const FILE_RIGHTS: u64 = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;
    /// Reading and running: what every path keeps.
    pub const READ: u64 = EXECUTE | READ_FILE | READ_DIR | IOCTL_DEV;

    /// Every right the kernel of Landlock ABI `abi` knows.
    pub fn all(abi: u32) -> u64 {
        let mut all = EXECUTE
            | WRITE_FILE
            | READ_FILE
            | READ_DIR
            | REMOVE_DIR
            | REMOVE_FILE
            | MAKE_CHAR
            | MAKE_DIR
            | MAKE_REG
            | MAKE_SOCK
            | MAKE_FIFO
            | MAKE_BLOCK
            | MAKE_SYM;
        if abi >= 2 {
            all |= REFER;
        }
        if abi >= 3 {
            all |= TRUNCATE;
        }
        if abi >= 5 {
            all |= IOCTL_DEV;
        }
        all
    }
}

/// Network rights (`LANDLOCK_ACCESS_NET_*`, ABI 4).
pub(crate) mod net {
    /// Bind a TCP socket to a port.
    pub const BIND_TCP: u64 = 1 << 0;
    /// Connect a TCP socket to a port.
    pub const CONNECT_TCP: u64 = 1 << 1;
}

/// Scopes (`LANDLOCK_SCOPE_*`, ABI 6).
pub(crate) mod scope {
    /// No connecting to abstract Unix sockets created outside the sandbox.
    pub const ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
    /// No signals to processes outside the sandbox.
    pub const SIGNAL: u64 = 1 << 1;
}

/// `struct landlock_ruleset_attr`.
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

/// `struct landlock_path_beneath_attr` (packed in the kernel's header).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The Landlock ABI version of this kernel, 0 when Landlock is unavailable.
pub(crate) fn abi() -> u32 {
    // SAFETY: with a null attribute and size 0 the kernel reads no memory of ours; the call
    // only returns the version (or an error).
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(version).unwrap_or(0)
}

/// What a ruleset handles: the rights it denies unless a rule grants them.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Handled {
    /// File-system rights.
    pub fs: u64,
    /// Network rights.
    pub net: u64,
    /// Scopes.
    pub scoped: u64,
}

/// A Landlock ruleset being built (an open ruleset descriptor).
#[derive(Debug)]
pub(crate) struct Ruleset {
    fd: OwnedFd,
    handled_fs: u64,
}

impl Ruleset {
    /// Creates a ruleset that handles `handled`.
    pub(crate) fn new(handled: Handled) -> std::io::Result<Ruleset> {
        let attr = RulesetAttr {
            handled_access_fs: handled.fs,
            handled_access_net: handled.net,
            scoped: handled.scoped,
        };
        // SAFETY: `attr` is a valid, initialised struct of the size passed; the kernel only
        // reads it and returns a new descriptor (close-on-exec) or an error.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &attr as *const RulesetAttr,
                std::mem::size_of::<RulesetAttr>(),
                0u32,
            )
        };
        let fd = RawFd::try_from(fd).map_err(|_| std::io::Error::other("bad descriptor"))?;
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the syscall succeeded, so `fd` is a new descriptor owned by nobody else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Ruleset {
            fd,
            handled_fs: handled.fs,
        })
    }

    /// Grants `access` (masked to what the ruleset handles, and to file rights when `path` is
    /// not a directory) beneath `path`. A path that does not exist is skipped.
    pub(crate) fn allow(&mut self, path: &Path, access: u64) -> std::io::Result<()> {
        let file = match open_path(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        self.allow_fd(&file, access).map_err(|e| {
            std::io::Error::other(format!("Landlock rule for {}: {e}", path.display()))
        })
    }

    /// Grants `access` beneath `path` opened without following any link: a path that does not
    /// exist, or is or passes through a link, is skipped.
    pub(crate) fn allow_no_links(&mut self, path: &Path, access: u64) -> std::io::Result<()> {
        match crate::sandbox::no_links::open(path) {
            Ok(file) => self.allow_fd(&file, access).map_err(|e| {
                std::io::Error::other(format!("Landlock rule for {}: {e}", path.display()))
            }),
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || crate::sandbox::no_links::is_link_error(&e) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Grants `access` (masked as for [`Ruleset::allow`]) beneath what the open descriptor
    /// `file` names: the rule holds that directory, whatever its name becomes.
    pub(crate) fn allow_fd(&mut self, file: &OwnedFd, access: u64) -> std::io::Result<()> {
        let mut access = access & self.handled_fs;
        if !crate::sandbox::no_links::is_dir(file) {
            access &= fs::FILE_RIGHTS;
        }
        if access == 0 {
            return Ok(());
        }
        let attr = PathBeneathAttr {
            allowed_access: access,
            parent_fd: file.as_raw_fd(),
        };
        // SAFETY: `attr` is a valid, initialised struct that outlives the call and
        // `file` is an open descriptor; the kernel only reads them.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                self.fd.as_raw_fd(),
                RULE_PATH_BENEATH,
                &attr as *const PathBeneathAttr,
                0u32,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// `access` masked to what the ruleset handles.
    pub(crate) fn handled(&self, access: u64) -> u64 {
        access & self.handled_fs
    }

    /// The descriptor the child passes to [`restrict_self`].
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Opens `path` with `O_PATH` (no read or write access) for a rule.
fn open_path(path: &Path) -> std::io::Result<OwnedFd> {
    let path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other("path contains a NUL byte"))?;
    // SAFETY: `path` is a valid NUL-terminated string that outlives the call.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: open succeeded, so `fd` is a new descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// In the child (the ruleset not yet enforced): grants `access` (already masked, see
/// [`Ruleset::handled`]) beneath `path` in the ruleset `fd`, for a mount made after the
/// clone. Only syscalls on memory built before the clone. The error is the errno.
pub(crate) fn allow_in_child(fd: RawFd, path: &std::ffi::CStr, access: u64) -> Result<(), i32> {
    // SAFETY: `path` is a valid NUL-terminated string that outlives the call.
    let dir = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if dir < 0 {
        return Err(crate::base::errno::errno());
    }
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: dir,
    };
    // SAFETY: `attr` is a valid, initialised struct that outlives the call and `dir` an open
    // descriptor; the kernel only reads them.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            fd,
            RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    };
    let result = if rc == 0 {
        Ok(())
    } else {
        Err(crate::base::errno::errno())
    };
    // SAFETY: `dir` is ours and closed once.
    unsafe { libc::close(dir) };
    result
}

/// Enforces the ruleset `fd` on the calling thread (the caller has set `no_new_privs`). Only
/// syscalls: safe between fork and exec. The error is the errno.
pub(crate) fn restrict_self(fd: RawFd) -> Result<(), i32> {
    // SAFETY: a plain syscall on a descriptor number; no memory is passed.
    let rc = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) };
    if rc != 0 {
        return Err(crate::base::errno::errno());
    }
    Ok(())
}

/// `prctl(PR_SET_NO_NEW_PRIVS, 1)`: exec can no longer grant privileges (setuid bits, file
/// capabilities); required for Landlock and seccomp without privileges. The error is the
/// errno.
pub(crate) fn set_no_new_privs() -> Result<(), i32> {
    // SAFETY: prctl with integer arguments only; no memory is passed.
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    if rc != 0 {
        return Err(crate::base::errno::errno());
    }
    Ok(())
}
