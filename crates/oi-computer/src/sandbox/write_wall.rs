//! The write wall of a sandboxed session (Linux): in its mount namespace every mount is made
//! read-only at once (`mount_setattr(2)` with `AT_RECURSIVE`), and only the writable roots
//! (the workspace, the temp directory, the session's scratch directory, `/dev/shm`) are
//! bound back writable. The kernel then refuses every kind of change to a file outside them
//! with `EROFS`, whatever the syscall: data, names, modes, owners, times, extended attributes,
//! ACLs and inode flags alike. Landlock models only some of these (no rights for `chmod`,
//! `chown`, `utime`, xattrs); it stays as a further layer, with seccomp.
//!
//! The mounts below a writable root stay read-only (only the root's own mount is cleared):
//! a file system mounted inside the workspace is not made writable by the sandbox. Mounts
//! made later on the host do not appear in the session (its propagation is private).
//!
//! Only syscalls on memory built before the clone happen in the child.

use std::ffi::CStr;

use crate::base::errno::errno;

/// `MOUNT_ATTR_RDONLY` of `<linux/mount.h>`.
const MOUNT_ATTR_RDONLY: u64 = 0x0000_0001;
/// `AT_RECURSIVE` of `<linux/fcntl.h>`: the whole mount tree below the path.
const AT_RECURSIVE: libc::c_uint = 0x8000;
/// `AT_SYMLINK_NOFOLLOW`: a writable root that became a link is not followed.
const AT_SYMLINK_NOFOLLOW: libc::c_uint = 0x100;

/// `struct mount_attr` of `<linux/mount.h>` (version 0, 32 bytes).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// Makes every mount of the namespace read-only. The error is the errno (`ENOSYS` before
/// Linux 5.12: then the namespace probe fails and sessions go without a mount namespace).
pub(crate) fn all_read_only() -> Result<(), i32> {
    set_attr(c"/", AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0)
}

/// Makes the mount at `root` (a bind of the root onto itself) writable again, not the mounts
/// below it. A mount the host made read-only and the kernel locked so (`EPERM` in a user
/// namespace) stays read-only: nothing is loosened beyond the host's own rules.
pub(crate) fn writable_again(root: &CStr) -> Result<(), i32> {
    match set_attr(root, AT_SYMLINK_NOFOLLOW, 0, MOUNT_ATTR_RDONLY) {
        Err(libc::EPERM) => Ok(()),
        other => other,
    }
}

/// `mount_setattr(AT_FDCWD, path, flags, {set, clr})`; the error is the errno.
fn set_attr(path: &CStr, flags: libc::c_uint, set: u64, clr: u64) -> Result<(), i32> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: clr,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: `path` is a valid NUL-terminated string and `attr` a `struct mount_attr` of the
    // size passed, both outliving the call; the kernel only reads them.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if rc != 0 {
        return Err(errno());
    }
    Ok(())
}
