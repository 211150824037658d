//! The watchdog that kills a session whose unit (cgroup, namespace or process group) grows
//! past its process limit.

use std::sync::Arc;
use std::time::Duration;

use crate::process::session_handle::{Fate, Handle};

/// How often the process watchdog counts.
const WATCH_EVERY: Duration = Duration::from_millis(50);

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
