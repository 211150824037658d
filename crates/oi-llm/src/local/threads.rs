//! How many threads llama.cpp gets: one per physical core this process may run on, as
//! llama.cpp's own programs choose (a second hardware thread of a core only slows the
//! matrix products down). Linux: the CPUs in this process's affinity mask, grouped by their
//! `thread_siblings_list`; elsewhere, or when that cannot be read, every available CPU.

use std::collections::BTreeSet;

/// Threads for llama.cpp (at least 1).
pub fn physical_cores() -> usize {
    let available = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let cores = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| allowed_cpus(&status))
        .and_then(|cpus| count_cores(&cpus, read_siblings));
    cores.map_or(available, |c| c.clamp(1, available))
}

/// The CPUs of the `Cpus_allowed_list:` line of `/proc/self/status`.
fn allowed_cpus(status: &str) -> Option<Vec<usize>> {
    let list = status
        .lines()
        .find_map(|line| line.strip_prefix("Cpus_allowed_list:"))?;
    parse_list(list.trim())
}

/// A kernel CPU list such as `0-3,8,10-11`.
fn parse_list(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.parse().ok()?, b.parse().ok()?);
                if b < a || b - a > 65_536 {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    (!cpus.is_empty()).then_some(cpus)
}

fn read_siblings(cpu: usize) -> Option<String> {
    std::fs::read_to_string(format!(
        "/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
    ))
    .ok()
}

/// The number of distinct cores among `cpus`, by their sibling lists; `None` when a CPU's
/// list cannot be read.
fn count_cores(cpus: &[usize], siblings: impl Fn(usize) -> Option<String>) -> Option<usize> {
    let mut cores = BTreeSet::new();
    for cpu in cpus {
        cores.insert(siblings(*cpu)?.trim().to_owned());
    }
    Some(cores.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_lists() {
        assert_eq!(parse_list("0-3,8,10-11"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse_list("5"), Some(vec![5]));
        assert_eq!(parse_list(""), None);
        assert_eq!(parse_list("3-1"), None);
        assert_eq!(parse_list("x"), None);
        let status = "Name:\toi\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n";
        assert_eq!(allowed_cpus(status), Some(vec![0, 1]));
    }

    #[test]
    fn hyperthreads_count_once() {
        // 4 CPUs, two per core: 2 physical cores.
        let siblings = |cpu: usize| Some(if cpu % 2 == 0 { "0,2\n" } else { "1,3\n" }.to_owned());
        assert_eq!(count_cores(&[0, 1, 2, 3], siblings), Some(2));
        assert_eq!(count_cores(&[0, 2], siblings), Some(1));
        assert_eq!(count_cores(&[0, 9], |c| (c == 0).then(String::new)), None);
        assert!(physical_cores() >= 1);
    }
}
