//! The Landlock ruleset of a sandboxed session (Linux): reads everywhere, writes only beneath
//! the writable roots (except beneath oi's own directories when no mount namespace protects
//! them), terminals and `/dev/null`-like devices usable but no device nodes made; TCP as the
//! network policy says; abstract Unix sockets and signals scoped to the sandbox. Built in the parent; the child only
//! enforces it.

use std::path::{Path, PathBuf};

use crate::sandbox::landlock::{Handled, Ruleset, fs, net, scope};

/// What sandboxed code may do with `/dev/null`, terminals and the like: read, write, truncate
/// and ioctl them (Landlock), nothing else.
pub(crate) const TERMINAL_RIGHTS: u64 =
    fs::READ_FILE | fs::WRITE_FILE | fs::TRUNCATE | fs::IOCTL_DEV;

/// The devices sandboxed code may use with [`TERMINAL_RIGHTS`].
const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// A writable root: its canonical path and the directory, opened without following links.
#[derive(Debug)]
pub(crate) struct Root {
    /// The canonical path it was opened by.
    pub path: PathBuf,
    /// The directory (an `O_PATH` descriptor).
    pub dir: std::os::fd::OwnedFd,
}

/// The ruleset for Landlock ABI `abi` with the file-system sandbox on (`fs_on`) and/or the
/// network denied: writes only beneath `roots`, except beneath `carve_out`; reads everywhere
/// except beneath `hidden`. `None` when Landlock is unavailable or has nothing to handle.
pub(crate) fn ruleset(
    abi: u32,
    fs_on: bool,
    net_denied: bool,
    roots: &[Root],
    carve_out: &[PathBuf],
    hidden: &[PathBuf],
) -> std::io::Result<Option<Ruleset>> {
    if abi == 0 || !(fs_on || net_denied) {
        return Ok(None);
    }
    let handled = handled(abi, fs_on, net_denied);
    if handled.fs == 0 && handled.net == 0 && handled.scoped == 0 {
        return Ok(None);
    }
    let mut ruleset = Ruleset::new(handled)?;
    if fs_on {
        grant_file_system(&mut ruleset, abi, roots, carve_out, hidden)?;
    }
    Ok(Some(ruleset))
}

/// What the ruleset handles (denies unless granted): every file-system right of `abi` when
/// the file-system sandbox is on, TCP bind and connect (ABI ≥ 4) when the network is denied,
/// abstract Unix sockets created outside (ABI ≥ 6; a second layer under seccomp's refusal of
/// `AF_UNIX`) and signals to processes outside (ABI ≥ 6) whenever sandboxed.
fn handled(abi: u32, fs_on: bool, net_denied: bool) -> Handled {
    let mut handled = Handled::default();
    if fs_on {
        handled.fs = fs::all(abi);
    }
    if net_denied && abi >= 4 {
        handled.net = net::BIND_TCP | net::CONNECT_TCP;
    }
    if abi >= 6 && fs_on {
        handled.scoped |= scope::SIGNAL;
    }
    if abi >= 6 && (fs_on || net_denied) {
        handled.scoped |= scope::ABSTRACT_UNIX_SOCKET;
    }
    handled
}

/// What a writable root grants: every right of Landlock ABI `abi` but making device nodes.
pub(crate) fn writable(abi: u32) -> u64 {
    fs::all(abi) & !fs::MAKE_DEVICE
}

/// Reading everywhere (except beneath `hidden`), the terminal devices, and everything but
/// making device nodes beneath each root (except beneath `carve_out`). A root untouched by
/// `carve_out` is granted by its descriptor; entries granted one by one are opened without
/// following links.
fn grant_file_system(
    ruleset: &mut Ruleset,
    abi: u32,
    roots: &[Root],
    carve_out: &[PathBuf],
    hidden: &[PathBuf],
) -> std::io::Result<()> {
    if hidden.is_empty() {
        ruleset.allow(Path::new("/"), fs::READ)?;
    } else {
        for path in crate::policy::protected::grants_except(Path::new("/"), hidden) {
            ruleset.allow_no_links(&path, fs::READ)?;
        }
    }
    for path in DEVICES {
        ruleset.allow(Path::new(path), TERMINAL_RIGHTS)?;
    }
    let writable = writable(abi);
    for root in roots {
        if !carve_out.iter().any(|p| p.starts_with(&root.path)) {
            ruleset.allow_fd(&root.dir, writable)?;
            continue;
        }
        for path in crate::policy::protected::grants_except(&root.path, carve_out) {
            ruleset.allow_no_links(&path, writable)?;
        }
    }
    Ok(())
}
