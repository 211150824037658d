//! Reading `/proc`: processes in a group or a PID namespace, tasks of a user; and the
//! watchdog that kills a session whose unit (cgroup, namespace or process group) grows past
//! its process limit.

use std::sync::Arc;
use std::time::Duration;

use crate::session::{Fate, Handle};

/// How often the process watchdog counts.
const WATCH_EVERY: Duration = Duration::from_millis(50);

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

/// Starts a thread that kills `handle`'s unit (fate [`Fate::ProcessLimit`]) when it has more
/// than `max` processes; it ends with the session.
pub(crate) fn watch_processes(handle: Arc<Handle>, max: u32) -> std::io::Result<()> {
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    std::thread::Builder::new()
        .name(format!("oi-nproc-{}", handle.unit().pgid()))
        .stack_size(128 * 1024)
        .spawn(move || {
            while handle.usable() {
                if handle.unit().count() > max {
                    handle.kill(Fate::ProcessLimit);
                    // Forks racing with the kill: kill until nothing is left.
                    for _ in 0..100 {
                        if !handle.unit().alive() {
                            break;
                        }
                        handle.unit().kill();
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    return;
                }
                std::thread::sleep(WATCH_EVERY);
            }
        })?;
    Ok(())
}
