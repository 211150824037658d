//! A PID, a mount and an IPC namespace per sandboxed session (Linux): the session's interpreter is
//! PID 1 of its own namespace, so when it dies the kernel kills everything the session
//! started (`setsid`, double forks and `nohup` included), and a fresh procfs on `/proc` shows
//! only the session's processes (oi's `environ` and `cmdline` are out of reach). Mount
//! propagation is made private (nothing the host mounts later appears), every mount is made
//! read-only but the writable roots (`write_wall.rs`), and oi's own directories are bind-mounted
//! read-only, with every directory between a writable root and them bound onto itself so it
//! cannot be renamed away. A private instance of the terminal file system on `/dev/pts` keeps
//! oi's own terminal out of reach. The IPC namespace leaves the host's System V shared memory,
//! semaphores and message queues out of sight, and so do a fresh `tmpfs` on `/dev/shm` (POSIX
//! shared memory and semaphores live there as files) and a fresh `mqueue` on `/dev/mqueue`
//! (POSIX message queues; mounted in the new IPC namespace, it shows that namespace's).
//!
//! As root the namespaces are created directly; other users get them inside a new user
//! namespace that maps only their own uid and gid (`setgroups` denied). The plan is built in
//! the parent; the child only makes syscalls on it between clone and exec.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::base::errno::errno;
use crate::policy::sandbox_support::NamespaceSupport;
use crate::sandbox::child_step::Step;
use crate::sandbox::no_links::Identity;

/// Mount flags a read-only bind remount must keep (inside a user namespace, the kernel refuses
/// to drop them).
const KEPT_FLAGS: [(libc::c_ulong, libc::c_ulong); 6] = [
    (libc::ST_NOSUID, libc::MS_NOSUID),
    (libc::ST_NODEV, libc::MS_NODEV),
    (libc::ST_NOEXEC, libc::MS_NOEXEC),
    (libc::ST_NOATIME, libc::MS_NOATIME),
    (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
    (libc::ST_RELATIME, libc::MS_RELATIME),
];

/// What the child mounted of its own, besides the plan's binds: Landlock rules made in the
/// parent do not cover these new file systems, so the child grants them afterwards.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PrivateMounts {
    /// A private terminal file system on `/dev/pts`.
    pub terminals: bool,
    /// A private `tmpfs` on `/dev/shm`.
    pub shm: bool,
    /// The private instance's `ptmx` bound over `/dev/ptmx`.
    pub ptmx: bool,
}

/// A directory the child mounts on, with the identity it had when the parent opened it
/// without following links: the child checks it again before mounting.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    /// Its canonical path.
    pub path: PathBuf,
    /// What it is.
    pub identity: crate::sandbox::no_links::Identity,
}

/// The mount steps of one session, in order.
#[derive(Debug)]
pub(crate) struct NamespacePlan {
    /// The `clone` flags: `CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC`, with `CLONE_NEWUSER` for
    /// non-root.
    pub flags: libc::c_int,
    /// `uid_map` and `gid_map` lines for a user namespace.
    user_maps: Option<(CString, CString)>,
    /// The writable roots, outermost first: bound onto themselves and left writable when
    /// everything else is made read-only. `None`: a writable root is `/`, so there is no wall
    /// to build.
    writable: Option<Vec<(CString, Identity)>>,
    /// Directories bound onto themselves (so they cannot be renamed), outermost first.
    pinned: Vec<(CString, Identity)>,
    /// Directories bound read-only, with the flags their remount keeps.
    read_only: Vec<(CString, Identity, libc::c_ulong)>,
    /// oi's own directories, hidden under an empty read-only `tmpfs`.
    hidden: Vec<(CString, Identity)>,
    /// Whether the host has `/dev/mqueue` to mount a fresh message queue file system on.
    mqueue: bool,
}

impl NamespacePlan {
    /// The plan for `support`: every mount but the `writable` roots becomes read-only,
    /// `pinned` directories keep their place, `read_only` ones become read-only, `hidden` ones
    /// are covered by an empty read-only `tmpfs` (all canonical, existing, opened without
    /// links by the parent).
    pub(crate) fn new(
        support: NamespaceSupport,
        writable: &[Place],
        pinned: &[Place],
        read_only: &[Place],
        hidden: &[Place],
    ) -> std::io::Result<Option<NamespacePlan>> {
        let base = libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
        let (flags, user_maps) = match support {
            NamespaceSupport::Unavailable => return Ok(None),
            NamespaceSupport::Direct => (base, None),
            NamespaceSupport::WithUserNamespace => (base | libc::CLONE_NEWUSER, Some(own_maps()?)),
        };
        let read_only = read_only
            .iter()
            .map(|p| Ok((c_path(&p.path)?, p.identity, kept_flags(&p.path)?)))
            .collect::<std::io::Result<Vec<_>>>()?;
        let places = |places: &[Place]| {
            places
                .iter()
                .map(|p| Ok((c_path(&p.path)?, p.identity)))
                .collect::<std::io::Result<Vec<_>>>()
        };
        let mut writable: Vec<&Place> = writable.iter().collect();
        writable.sort_by_key(|p| p.path.components().count());
        let writable = if writable.iter().any(|p| p.path == Path::new("/")) {
            None
        } else {
            Some(
                writable
                    .into_iter()
                    .map(|p| Ok((c_path(&p.path)?, p.identity)))
                    .collect::<std::io::Result<Vec<_>>>()?,
            )
        };
        Ok(Some(NamespacePlan {
            flags,
            user_maps,
            writable,
            pinned: places(pinned)?,
            read_only,
            hidden: places(hidden)?,
            mqueue: Path::new("/dev/mqueue").is_dir(),
        }))
    }

    /// In the child, right after clone: maps the user, makes propagation private, mounts the
    /// fresh procfs, builds the write wall, binds, and mounts a private instance of the terminal file system on
    /// `/dev/pts` (so oi's own terminal is not there to open; `/dev/ptmx` then allocates from
    /// it), a private `tmpfs` on `/dev/shm` and `mqueue` on `/dev/mqueue`. Returns what of
    /// these was mounted (kernels or containers without them keep the host's). Only syscalls
    /// on memory built before the clone.
    pub(crate) fn apply_in_child(&self) -> Result<PrivateMounts, (Step, i32)> {
        if let Some((uid_map, gid_map)) = &self.user_maps {
            write_file(c"/proc/self/setgroups", b"deny")
                .and_then(|()| write_file(c"/proc/self/uid_map", uid_map.as_bytes()))
                .and_then(|()| write_file(c"/proc/self/gid_map", gid_map.as_bytes()))
                .map_err(|e| (Step::UserMaps, e))?;
        }
        mount(None, c"/", None, libc::MS_REC | libc::MS_PRIVATE, None)
            .map_err(|e| (Step::Propagation, e))?;
        mount(
            Some(c"proc"),
            c"/proc",
            Some(c"proc"),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            None,
        )
        .map_err(|e| (Step::Proc, e))?;
        // Each place is checked to be the directory the parent opened without links: code of
        // another session may have swapped it for a link since.
        let check = |dir: &CString, identity: Identity| {
            crate::sandbox::no_links::check_in_child(dir, identity).map_err(|e| (Step::Swapped, e))
        };
        if let Some(writable) = &self.writable {
            // The wall first, so that every mount made after it is one this plan chose.
            for (dir, identity) in writable {
                check(dir, *identity)?;
                mount(Some(dir), dir, None, libc::MS_BIND | libc::MS_REC, None)
                    .map_err(|e| (Step::WriteWall, e))?;
            }
            crate::sandbox::write_wall::all_read_only().map_err(|e| (Step::WriteWall, e))?;
            for (dir, _) in writable {
                crate::sandbox::write_wall::writable_again(dir)
                    .map_err(|e| (Step::WriteWall, e))?;
            }
        }
        for (dir, identity) in &self.pinned {
            check(dir, *identity)?;
            mount(Some(dir), dir, None, libc::MS_BIND | libc::MS_REC, None)
                .map_err(|e| (Step::Bind, e))?;
        }
        for (dir, identity, kept) in &self.read_only {
            check(dir, *identity)?;
            mount(Some(dir), dir, None, libc::MS_BIND | libc::MS_REC, None)
                .map_err(|e| (Step::Bind, e))?;
            let remount = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | kept;
            mount(None, dir, None, remount, None).map_err(|e| (Step::Bind, e))?;
        }
        for (dir, identity) in &self.hidden {
            check(dir, *identity)?;
            mount(
                Some(c"tmpfs"),
                dir,
                Some(c"tmpfs"),
                libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                Some(c"mode=0555,size=4k"),
            )
            .map_err(|e| (Step::Hide, e))?;
        }
        let terminals = mount(
            Some(c"devpts"),
            c"/dev/pts",
            Some(c"devpts"),
            libc::MS_NOSUID | libc::MS_NOEXEC,
            Some(c"newinstance,ptmxmode=0666,mode=0600"),
        )
        .is_ok();
        // The instance's own `ptmx` over the host's `/dev/ptmx` node: opening and using a
        // terminal then touches no inode of the host (the tty layer updates the times of the
        // node it was opened through, read-only mount or not). Best effort: without it
        // `/dev/ptmx` still allocates from the private instance.
        let ptmx = terminals
            && mount(
                Some(c"/dev/pts/ptmx"),
                c"/dev/ptmx",
                None,
                libc::MS_BIND,
                None,
            )
            .is_ok();
        let shm = mount(
            Some(c"tmpfs"),
            c"/dev/shm",
            Some(c"tmpfs"),
            libc::MS_NOSUID | libc::MS_NODEV,
            Some(c"mode=1777"),
        )
        .is_ok();
        if self.mqueue {
            let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
            // Best effort: without it the host's queues stay visible as files, but Landlock
            // keeps them read-only.
            let _ = mount(
                Some(c"mqueue"),
                c"/dev/mqueue",
                Some(c"mqueue"),
                flags,
                None,
            );
        }
        Ok(PrivateMounts {
            terminals,
            shm,
            ptmx,
        })
    }
}

/// `"<uid> <uid> 1"` and `"<gid> <gid> 1"`: the user keeps its own ids, and only those.
fn own_maps() -> std::io::Result<(CString, CString)> {
    // SAFETY: getuid and getgid cannot fail and touch no memory.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let line = |id: u32| CString::new(format!("{id} {id} 1")).map_err(std::io::Error::other);
    Ok((line(uid)?, line(gid)?))
}

fn c_path(path: &Path) -> std::io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::other(format!("{} contains a NUL byte", path.display())))
}

/// The flags of the mount `dir` is on that a read-only remount must keep.
fn kept_flags(dir: &Path) -> std::io::Result<libc::c_ulong> {
    let path = c_path(dir)?;
    // SAFETY: an all-zero statvfs is a valid value of this plain C struct.
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a valid NUL-terminated string and `stat` a writable struct, both
    // outliving the call.
    if unsafe { libc::statvfs(path.as_ptr(), &mut stat) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(KEPT_FLAGS
        .iter()
        .filter(|(st, _)| stat.f_flag & st != 0)
        .fold(0, |flags, (_, ms)| flags | ms))
}

/// `mount(2)`; `data` is the file system's option string. The error is the errno.
fn mount(
    source: Option<&std::ffi::CStr>,
    target: &std::ffi::CStr,
    fstype: Option<&std::ffi::CStr>,
    flags: libc::c_ulong,
    data: Option<&std::ffi::CStr>,
) -> Result<(), i32> {
    let ptr = |s: Option<&std::ffi::CStr>| s.map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is null or a valid NUL-terminated string that outlives the call.
    let rc = unsafe {
        libc::mount(
            ptr(source),
            target.as_ptr(),
            ptr(fstype),
            flags,
            ptr(data).cast(),
        )
    };
    if rc != 0 {
        return Err(errno());
    }
    Ok(())
}

/// Writes `data` to the existing file `path` in one `write`; the error is the errno.
fn write_file(path: &std::ffi::CStr, data: &[u8]) -> Result<(), i32> {
    // SAFETY: `path` is a valid NUL-terminated string that outlives the call.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: `data` is valid for `data.len()` bytes; `fd` is the descriptor just opened.
    let written = unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) };
    let result = if usize::try_from(written).ok() == Some(data.len()) {
        Ok(())
    } else {
        Err(errno())
    };
    // SAFETY: `fd` is ours and closed once.
    unsafe { libc::close(fd) };
    result
}
