//! Opening the directories a session's sandbox is built on without following any symbolic
//! link (Linux). Their paths were made canonical once, when the user or the server set them;
//! sandboxed code may since have replaced one of them (or a directory on the way) by a link,
//! to have the next session grant, or start in, whatever the link points at. So each session
//! opens every such path with `openat2(RESOLVE_NO_SYMLINKS)` (or, on kernels without it,
//! component by component with `O_NOFOLLOW`), and uses the descriptor, or the identity of the
//! directory it names, from then on — never the name alone.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// What a directory is, whatever name leads to it: its device and inode numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Identity {
    /// `st_dev`.
    pub dev: u64,
    /// `st_ino`.
    pub ino: u64,
}

/// Whether `e` says a symbolic link was met on the way.
pub(crate) fn is_link_error(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

/// Opens `path` (`O_PATH`, close-on-exec) without following any link on the way or at its
/// end: `ELOOP` when there is one. `openat2` through rustix (as oi-server's `beneath.rs`
/// does), or [`open_by_components`] where the kernel or a seccomp filter refuses it.
pub(crate) fn open(path: &Path) -> std::io::Result<OwnedFd> {
    use rustix::fs::{CWD, Mode, OFlags, ResolveFlags, openat2};
    use rustix::io::Errno;
    let flags = OFlags::PATH | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    match openat2(CWD, path, flags, Mode::empty(), ResolveFlags::NO_SYMLINKS) {
        Ok(fd) => {
            refuse_link(&fd)?;
            Ok(fd)
        }
        Err(Errno::NOSYS | Errno::PERM) => open_by_components(path),
        Err(e) => Err(e.into()),
    }
}

/// The fallback of [`open`]: from `/` (or the current directory), one component at a time
/// with `O_NOFOLLOW`, refusing a link at every step.
fn open_by_components(path: &Path) -> std::io::Result<OwnedFd> {
    let start: &[u8] = if path.is_absolute() { b"/\0" } else { b".\0" };
    // SAFETY: `start` is a valid NUL-terminated string.
    let fd = unsafe {
        libc::open(
            start.as_ptr().cast(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: open succeeded, so `fd` is a new descriptor owned by nobody else.
    let mut dir = unsafe { OwnedFd::from_raw_fd(fd) };
    for component in path.components() {
        let name = match component {
            Component::Normal(name) => name,
            Component::RootDir | Component::CurDir => continue,
            Component::ParentDir | Component::Prefix(_) => {
                return Err(std::io::Error::other(format!(
                    "{} is not a canonical path",
                    path.display()
                )));
            }
        };
        let name = CString::new(name.as_bytes())
            .map_err(|_| std::io::Error::other("a path component contains a NUL byte"))?;
        // SAFETY: `dir` is an open descriptor and `name` a valid NUL-terminated string.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                name.as_ptr(),
                libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: openat succeeded, so `fd` is a new descriptor owned by nobody else.
        dir = unsafe { OwnedFd::from_raw_fd(fd) };
        refuse_link(&dir)?;
    }
    Ok(dir)
}

/// `ELOOP` when `fd` (opened with `O_PATH | O_NOFOLLOW`) is a symbolic link itself.
fn refuse_link(fd: &OwnedFd) -> std::io::Result<()> {
    if stat_fd(fd)?.st_mode & libc::S_IFMT == libc::S_IFLNK {
        return Err(std::io::Error::from_raw_os_error(libc::ELOOP));
    }
    Ok(())
}

fn stat_fd(fd: &OwnedFd) -> std::io::Result<libc::stat> {
    // SAFETY: an all-zero stat is a valid value of this plain C struct.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `fd` is open and `stat` a writable struct outliving the call.
    if unsafe { libc::fstat(fd.as_raw_fd(), &mut stat) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(stat)
}

/// Whether `fd` is a directory.
pub(crate) fn is_dir(fd: &OwnedFd) -> bool {
    stat_fd(fd).is_ok_and(|s| s.st_mode & libc::S_IFMT == libc::S_IFDIR)
}

/// The identity of what `fd` names.
pub(crate) fn identity(fd: &OwnedFd) -> std::io::Result<Identity> {
    let stat = stat_fd(fd)?;
    Ok(Identity {
        dev: stat.st_dev,
        ino: stat.st_ino,
    })
}

/// In the child: whether `path`, looked up now (in the session's mount namespace), is the
/// directory `expected` the parent opened without links. Only a syscall on memory built before
/// the clone. The error is the errno (`ESTALE` for another directory).
pub(crate) fn check_in_child(path: &std::ffi::CStr, expected: Identity) -> Result<(), i32> {
    // SAFETY: an all-zero stat is a valid value of this plain C struct.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a valid NUL-terminated string and `stat` a writable struct, both
    // outliving the call.
    if unsafe { libc::lstat(path.as_ptr(), &mut stat) } != 0 {
        return Err(crate::base::errno::errno());
    }
    if stat.st_dev != expected.dev || stat.st_ino != expected.ino {
        return Err(libc::ESTALE);
    }
    Ok(())
}

/// In the child, after `chdir`: whether the current directory is `expected`. The error is the
/// errno (`ESTALE` for another directory).
pub(crate) fn check_cwd_in_child(expected: Identity) -> Result<(), i32> {
    check_in_child(c".", expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_anywhere_on_the_path_is_refused_and_a_real_path_opens() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = std::fs::canonicalize(root.path()).unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir_all(root.join("real/inner")).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(root.join("real"), root.join("link"))
            .unwrap_or_else(|e| panic!("{e}"));
        let opened = open(&root.join("real/inner")).unwrap_or_else(|e| panic!("{e}"));
        assert!(is_dir(&opened));
        for path in [root.join("link"), root.join("link/inner")] {
            assert!(open(&path).is_err_and(|e| is_link_error(&e)), "{path:?}");
            assert!(
                open_by_components(&path).is_err_and(|e| is_link_error(&e)),
                "{path:?}"
            );
        }
        let walked = open_by_components(&root.join("real/inner")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            identity(&walked).ok(),
            identity(&opened).ok(),
            "both ways reach the same directory"
        );
    }
}
