//! Process control: spawning a session's process into its unit (process group, cgroup, PID
//! namespace), and a running session: its handle and fate, the thread reading its output pipe
//! (driver events, output cap), the process-limit watchdog.

pub(crate) mod driver_events;
pub(crate) mod output_cap;
pub(crate) mod pipe_reader;
pub(crate) mod process_limit;
pub(crate) mod session;
pub(crate) mod session_handle;
pub(crate) mod session_unit;
pub(crate) mod spawn;
