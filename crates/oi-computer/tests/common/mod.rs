//! Helpers shared by the integration tests.
#![allow(dead_code, missing_docs, clippy::expect_used, clippy::unwrap_used)]

use std::time::Duration;

use futures::StreamExt;
use oi_core::computer::{Computer, Output};
use oi_core::lmc::Content;

/// All text of console outputs.
pub fn text(outputs: &[Output]) -> String {
    outputs
        .iter()
        .filter(|o| o.format.as_deref() == Some("output"))
        .filter_map(|o| o.content.as_text())
        .collect()
}

/// The active lines, in order.
pub fn lines(outputs: &[Output]) -> Vec<u64> {
    outputs
        .iter()
        .filter_map(|o| match o.content {
            Content::Line(n) if o.format.as_deref() == Some("active_line") => Some(n),
            _ => None,
        })
        .collect()
}

/// Runs and collects the stream, failing after 20 s.
pub async fn run(computer: &oi_computer::LocalComputer, language: &str, code: &str) -> Vec<Output> {
    tokio::time::timeout(
        Duration::from_secs(20),
        computer.run(language, code).collect::<Vec<_>>(),
    )
    .await
    .expect("run did not finish within 20 s")
}

/// Whether process `pid` is alive (zombies count as dead).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next()
                .unwrap_or("");
            state != "Z" && state != "X"
        }
        Err(_) => false,
    }
}

/// Waits up to `within` for `pid` to die.
pub async fn wait_dead(pid: i32, within: Duration) -> bool {
    let deadline = std::time::Instant::now() + within;
    while std::time::Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    !alive(pid)
}

/// Whether `program` is on `PATH`.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
        .unwrap_or(false)
}

/// Whether `program` is on `PATH`; when it is not, says why the calling test is skipped (a
/// failure under `OI_TEST_REQUIRE_ALL=1`).
pub fn have(program: &str, test: &str) -> bool {
    let found = on_path(program);
    if !found {
        oi_testkit::skipped!("skipped {test}: `{program}` is not installed");
    }
    found
}

/// Stops `computer` after `after`, from another task.
pub fn stop_after(computer: std::sync::Arc<impl Computer + 'static>, after: Duration) {
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        computer.stop();
    });
}

/// This process's resident set size in bytes (Linux), from /proc/self/status.
pub fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
