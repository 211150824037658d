//! A cgroup v2 leaf per session, where the host lets oi create one: every process the session
//! starts stays in it (a process cannot move itself out without write access to a common
//! ancestor's `cgroup.procs`, which sandboxed code lacks, and `setsid` or double forks do not
//! leave a cgroup), so the session's processes can be counted and killed all at once.
//!
//! The leaf is `oi-<pid namespace>-<pid>-<nonce>` under oi's own cgroup (found in `/proc/self/cgroup` and the
//! cgroup2 mount in `/proc/self/mountinfo`). The child joins it before exec by writing `0` to
//! its `cgroup.procs` (opened by the parent). Killing writes `1` to `cgroup.kill` (Linux 5.14+;
//! before that, each listed process gets SIGKILL until none is left). The leaf is removed once
//! empty. Leaves left by an oi that died are killed and removed when the next oi of the same
//! PID namespace (where that pid means the same process) first uses cgroups in the same place. Where the controllers are delegated to oi's cgroup, `pids.max`
//! and `memory.max` bound the session as a whole.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::policy::limits::ResourceLimits;

/// The prefix of every leaf oi creates.
const PREFIX: &str = "oi-";

/// oi's own cgroup v2 directory, where it may create leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CgroupParent {
    dir: PathBuf,
    pids: bool,
    memory: bool,
}

impl CgroupParent {
    /// oi's cgroup v2 directory, when the cgroup2 file system is mounted, the directory is
    /// writable, and its `cgroup.procs` too; `None` otherwise (containers, users without a
    /// delegated subtree).
    pub(crate) fn find() -> Option<CgroupParent> {
        let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let dir = own_cgroup_dir(&mountinfo, &own)?;
        if !writable(&dir) || !writable(&dir.join("cgroup.procs")) {
            return None;
        }
        let enabled =
            std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
        let has = |name: &str| enabled.split_whitespace().any(|c| c == name);
        Some(CgroupParent {
            pids: has("pids"),
            memory: has("memory"),
            dir,
        })
    }

    /// Creates the leaf `oi-<pid>-<tag>` with `limits` applied where the controllers allow.
    pub(crate) fn create_leaf(&self, tag: &str, limits: &ResourceLimits) -> std::io::Result<Leaf> {
        let dir = self.dir.join(format!(
            "{PREFIX}{}-{}-{tag}",
            own_pid_namespace(),
            std::process::id()
        ));
        std::fs::create_dir(&dir)?;
        let leaf = Leaf { dir };
        if let (true, Some(max)) = (self.pids, limits.max_processes) {
            // Tasks, not processes: the same generous backstop as RLIMIT_NPROC; the watchdog
            // enforces the process count itself.
            let tasks = u64::from(max).saturating_mul(4).saturating_add(64);
            let _ = std::fs::write(leaf.dir.join("pids.max"), tasks.to_string());
        }
        if let (true, Some(bytes)) = (self.memory, limits.max_memory_bytes) {
            let _ = std::fs::write(leaf.dir.join("memory.max"), bytes.to_string());
        }
        Ok(leaf)
    }

    /// Kills and removes the leaves of oi processes of our PID namespace that no longer exist.
    pub(crate) fn sweep_stale(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let namespace = own_pid_namespace();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some((owner_namespace, pid)) = name.to_str().and_then(leaf_owner) else {
                continue;
            };
            if owner_namespace != namespace || Path::new(&format!("/proc/{pid}")).exists() {
                continue; // another namespace's oi (its pids mean nothing here), or alive
            }
            let stale = Leaf { dir: entry.path() };
            stale.kill();
            drop(stale); // removes it (now or from a background thread)
        }
    }
}

/// The inode of this process's PID namespace (0 when unknown).
fn own_pid_namespace() -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self/ns/pid").map_or(0, |m| m.ino())
}

/// The PID namespace and pid of the oi that created the leaf `name`.
fn leaf_owner(name: &str) -> Option<(u64, u32)> {
    let mut parts = name.strip_prefix(PREFIX)?.splitn(3, '-');
    let namespace = parts.next()?.parse().ok()?;
    let pid = parts.next()?.parse().ok()?;
    parts.next()?;
    Some((namespace, pid))
}

/// The cgroup v2 directory of this process, from `/proc/self/mountinfo` and
/// `/proc/self/cgroup`.
fn own_cgroup_dir(mountinfo: &str, own: &str) -> Option<PathBuf> {
    let path = own
        .lines()
        .find_map(|line| line.strip_prefix("0::"))?
        .trim();
    if path.split('/').any(|part| part == "..") {
        return None; // outside our cgroup namespace's view
    }
    for line in mountinfo.lines() {
        let Some((mount, fs)) = line.split_once(" - ") else {
            continue;
        };
        if fs.split_whitespace().next() != Some("cgroup2") {
            continue;
        }
        let fields: Vec<&str> = mount.split_whitespace().collect();
        let (Some(root), Some(point)) = (fields.get(3), fields.get(4)) else {
            continue;
        };
        let Some(rest) = path.strip_prefix(root.trim_end_matches('/')) else {
            continue;
        };
        let point = PathBuf::from(unescape(point));
        return Some(point.join(rest.trim_start_matches('/')));
    }
    None
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|d| {
            std::str::from_utf8(d)
                .ok()
                .and_then(|d| u8::from_str_radix(d, 8).ok())
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn writable(path: &Path) -> bool {
    let Ok(path) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: `path` is a valid NUL-terminated string that outlives the call.
    unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
}

/// One session's cgroup; killed and removed on drop.
#[derive(Debug)]
pub(crate) struct Leaf {
    dir: PathBuf,
}

impl Leaf {
    /// `cgroup.procs`, opened for the child to write `0` into (close-on-exec).
    pub(crate) fn procs_for_child(&self) -> std::io::Result<OwnedFd> {
        let file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open(self.dir.join("cgroup.procs"))?;
        Ok(OwnedFd::from(file))
    }

    /// The ids of the processes in the leaf.
    pub(crate) fn pids(&self) -> Vec<u32> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Whether a process still lives in the leaf.
    pub(crate) fn populated(&self) -> bool {
        match std::fs::read_to_string(self.dir.join("cgroup.events")) {
            Ok(events) => events.lines().any(|l| l.trim() == "populated 1"),
            Err(_) => !self.pids().is_empty(),
        }
    }

    /// Sends SIGKILL to every process in the leaf.
    pub(crate) fn kill(&self) {
        let killed = File::options()
            .write(true)
            .open(self.dir.join("cgroup.kill"))
            .and_then(|mut f| f.write_all(b"1"));
        if killed.is_ok() {
            return;
        }
        // Before Linux 5.14: kill what is listed until nothing is (forks race with us).
        for _ in 0..100 {
            let pids = self.pids();
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                if let Ok(pid) = libc::pid_t::try_from(pid) {
                    // SAFETY: kill only sends a signal; it touches no memory of ours.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Removes the empty leaf `dir`; true when it is gone.
fn remove(dir: &Path) -> bool {
    match std::fs::remove_dir(dir) {
        Ok(()) => true,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

impl Leaf {
    /// Kills what is left and removes the leaf, waiting up to 100 ms for the killed processes
    /// to exit; true when it is gone. (Dropping the leaf does the same, then keeps trying from
    /// a thread.)
    pub(crate) fn finish(&self) -> bool {
        self.kill();
        for _ in 0..20 {
            if remove(&self.dir) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    }
}

impl Drop for Leaf {
    fn drop(&mut self) {
        // Killed processes take a moment to exit: wait a little for them (so that an oi
        // exiting right after leaves nothing behind), then go on from a thread.
        if self.finish() {
            return;
        }
        let dir = std::mem::take(&mut self.dir);
        let spawned = std::thread::Builder::new()
            .name("oi-cgroup-rmdir".to_owned())
            .stack_size(64 * 1024)
            .spawn(move || {
                for _ in 0..400 {
                    std::thread::sleep(Duration::from_millis(5));
                    if remove(&dir) {
                        break;
                    }
                }
            });
        drop(spawned);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_names_carry_their_owner() {
        assert_eq!(
            leaf_owner("oi-4026531836-812-abcdef"),
            Some((4026531836, 812))
        );
        assert_eq!(leaf_owner("oi-812-abcdef"), None);
        assert_eq!(leaf_owner("user.slice"), None);
    }

    #[test]
    fn finds_the_own_cgroup_under_the_cgroup2_mount() {
        let mountinfo = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw\n\
                         41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        assert_eq!(
            own_cgroup_dir(mountinfo, "4:memory:/x\n0::/\n"),
            Some(PathBuf::from("/sys/fs/cgroup/unified"))
        );
        let unified = "29 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";
        assert_eq!(
            own_cgroup_dir(unified, "0::/user.slice/user-1000.slice/session-2.scope\n"),
            Some(PathBuf::from(
                "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"
            ))
        );
        let escaped = "29 23 0:26 / /mnt/cg\\040x rw - cgroup2 cgroup2 rw\n";
        assert_eq!(
            own_cgroup_dir(escaped, "0::/a\n"),
            Some(PathBuf::from("/mnt/cg x/a"))
        );
        assert_eq!(own_cgroup_dir(unified, "0::/../../x\n"), None);
        assert_eq!(own_cgroup_dir("", "0::/\n"), None);
        assert_eq!(own_cgroup_dir(unified, "1:cpu:/\n"), None);
    }
}
