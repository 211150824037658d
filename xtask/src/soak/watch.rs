//! Watching a server process from outside: its resident memory, its open descriptors, and
//! the processes under it (the sessions' language processes and what they started), so that
//! none is left once the server has exited.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// A process: its id and its start time (ids are reused).
pub type ProcessKey = (u32, u64);

/// What one server was seen to use.
#[derive(Debug, Default, Clone)]
pub struct Usage {
    /// Samples taken.
    pub samples: usize,
    /// Resident memory: first sample and highest, in KiB.
    pub first_rss_kib: u64,
    /// The highest resident memory, in KiB.
    pub max_rss_kib: u64,
    /// The last sample, in KiB.
    pub last_rss_kib: u64,
    /// The most open descriptors.
    pub max_fds: usize,
    /// The most processes under the server at once.
    pub max_children: usize,
    /// What they were (command names, counted), when there were the most.
    pub max_children_names: String,
    /// The most process groups under the server at once (a language session is one group,
    /// with what its code started; a session starting may briefly run helpers such as a
    /// `python3` shim's shell).
    pub max_groups: usize,
    /// Every process seen under the server.
    pub seen: HashSet<ProcessKey>,
}

/// `(ppid, start time)` of a process, from `/proc/PID/stat`.
fn stat(pid: u32) -> Option<(u32, u64)> {
    stat_fields(pid).map(|f| (f.0, f.2))
}

/// `(ppid, process group, start time)` of a process.
fn stat_fields(pid: u32) -> Option<(u32, u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold anything: read after the last one.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state(0) ppid(1) pgrp(2) … starttime is field 22 of the line, 19 here.
    Some((
        fields.get(1)?.parse().ok()?,
        fields.get(2)?.parse().ok()?,
        fields.get(19)?.parse().ok()?,
    ))
}

/// The process groups of `processes` (each language session is one group).
fn groups(processes: &[ProcessKey]) -> usize {
    processes
        .iter()
        .filter_map(|(pid, _)| stat_fields(*pid).map(|f| f.1))
        .collect::<HashSet<u32>>()
        .len()
}

/// Every process under `root`, with its start time.
pub fn descendants(root: u32) -> Vec<ProcessKey> {
    let mut children: HashMap<u32, Vec<(u32, u64)>> = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some((ppid, start)) = stat(pid) {
            children.entry(ppid).or_default().push((pid, start));
        }
    }
    let mut found = Vec::new();
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        for &(child, start) in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            found.push((child, start));
            queue.push(child);
        }
    }
    found
}

/// The command names of `processes`, counted: `python3 ×12, sh ×1`.
fn names(processes: &[ProcessKey]) -> String {
    let mut counts: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for (pid, _) in processes {
        let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        *counts.entry(name.trim().to_owned()).or_default() += 1;
    }
    counts
        .iter()
        .map(|(name, n)| format!("{name} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether the process is still there (same id, same start time).
pub fn alive(key: ProcessKey) -> bool {
    stat(key.0).is_some_and(|(_, start)| start == key.1)
}

/// Resident memory of `pid`, in KiB.
pub fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| dir.count())
        .unwrap_or(0)
}

impl Usage {
    /// Takes one sample of `pid`.
    pub fn sample(&mut self, pid: u32) {
        let rss = rss_kib(pid);
        if self.samples == 0 {
            self.first_rss_kib = rss;
        }
        self.samples += 1;
        self.last_rss_kib = rss;
        self.max_rss_kib = self.max_rss_kib.max(rss);
        self.max_fds = self.max_fds.max(open_fds(pid));
        let under = descendants(pid);
        if under.len() > self.max_children {
            self.max_children = under.len();
            self.max_children_names = names(&under);
        }
        self.max_groups = self.max_groups.max(groups(&under));
        self.seen.extend(under);
    }

    /// The processes seen under the server that still live, after waiting up to `grace`.
    pub async fn left_after_exit(&self, grace: Duration) -> Vec<ProcessKey> {
        let deadline = Instant::now() + grace;
        loop {
            let left: Vec<ProcessKey> = self.seen.iter().copied().filter(|k| alive(*k)).collect();
            if left.is_empty() || Instant::now() >= deadline {
                return left;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
