//! Reading `/proc`: live processes in a group or a PID namespace, tasks of a user.

/// The fields after `comm` in `/proc/<pid>/stat` (state is the first).
fn stat_fields(pid: &str) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// The numeric entries of `/proc`.
fn pids() -> impl Iterator<Item = String> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| name.bytes().all(|b| b.is_ascii_digit()))
}

/// How many live (non-zombie) processes are in process group `pgid`.
pub(crate) fn count_group(pgid: u32) -> usize {
    let pgid = pgid.to_string();
    pids()
        .filter(|pid| {
            stat_fields(pid).is_some_and(|f| {
                // fields: state ppid pgrp …
                f.first().is_some_and(|s| s != "Z" && s != "X") && f.get(2) == Some(&pgid)
            })
        })
        .count()
}

/// Whether `pid` is a live (non-zombie) process.
pub(crate) fn is_live(pid: &str) -> bool {
    stat_fields(pid).is_some_and(|f| f.first().is_some_and(|s| s != "Z" && s != "X"))
}

/// How many live processes are in the PID namespace whose inode is `inode`.
pub(crate) fn count_namespace(inode: u64) -> usize {
    use std::os::unix::fs::MetadataExt;
    pids()
        .filter(|pid| {
            std::fs::metadata(format!("/proc/{pid}/ns/pid")).is_ok_and(|m| m.ino() == inode)
                && is_live(pid)
        })
        .count()
}

/// The number of tasks (threads) of processes whose real uid is `uid`.
pub(crate) fn tasks_of_uid(uid: libc::uid_t) -> Option<u64> {
    let uid = uid.to_string();
    let mut total = 0u64;
    for pid in pids() {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let real = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().next());
        if real != Some(uid.as_str()) {
            continue;
        }
        total += status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|n| n.trim().parse::<u64>().ok())
            .unwrap_or(1);
    }
    Some(total)
}
