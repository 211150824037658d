//! Per-session resource limits with real processes.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{have, run, text};
use oi_computer::{LocalComputer, ResourceLimits};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_memory_hog_gets_memory_error_and_the_next_run_works() {
    if !have("python3", "memory hog") {
        return;
    }
    let c = LocalComputer::new().with_limits(ResourceLimits {
        max_memory_bytes: Some(500_000_000),
        ..ResourceLimits::default()
    });
    let out = text(&run(&c, "python", "x = 1\ny = bytearray(2_000_000_000)").await);
    assert!(out.contains("MemoryError"), "{out}");
    let out = text(&run(&c, "python", "print(x + 1, len(bytearray(10_000_000)))").await);
    assert_eq!(out, "2 10000000\n", "the session survived with its state");
    if have("node", "memory hog (node)") {
        let out = text(&run(&c, "javascript", "console.log('node starts')").await);
        assert_eq!(out, "node starts\n", "node starts under the memory limit");
        let out = text(
            &run(
                &c,
                "javascript",
                "const a = []; for (let i = 0; i < 100; i++) a.push(Buffer.alloc(100_000_000, 1)); console.log('ALLOCATED')",
            )
            .await,
        );
        assert!(!out.contains("ALLOCATED"), "{out}");
        let out = text(&run(&c, "javascript", "console.log(1 + 1)").await);
        assert!(out.ends_with("2\n"), "{out}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cpu_hog_ends_the_session_with_a_message_and_the_next_run_works() {
    if !have("python3", "cpu hog") {
        return;
    }
    let c = LocalComputer::new().with_limits(ResourceLimits {
        max_cpu_seconds: Some(1),
        ..ResourceLimits::default()
    });
    let out = text(&run(&c, "python", "x = 1\nwhile True: pass").await);
    assert!(
        out.contains("hit its CPU limit and was restarted; state was lost"),
        "{out}"
    );
    let out = text(&run(&c, "python", "print(globals().get('x', 'fresh'))").await);
    assert_eq!(out, "fresh\n", "a new session runs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn too_many_processes_end_the_session_with_a_message() {
    if !have("bash", "process limit") {
        return;
    }
    // Bounded on purpose: 40 sleeps, not a fork bomb. As root (as on CI) RLIMIT_NPROC does not
    // hold, so this exercises the process-group watchdog that enforces the limit for everyone.
    let c = LocalComputer::new().with_limits(ResourceLimits {
        max_processes: Some(8),
        ..ResourceLimits::default()
    });
    assert_eq!(text(&run(&c, "shell", "echo fine").await), "fine\n");
    let pgid = c.process_groups()[0];
    let out = text(
        &run(
            &c,
            "shell",
            "for i in $(seq 1 40); do sleep 30 & done; wait; echo NOT-KILLED",
        )
        .await,
    );
    assert!(out.contains("hit its process limit"), "{out}");
    assert!(out.contains("more than 8 processes"), "{out}");
    assert!(!out.contains("NOT-KILLED"), "{out}");
    // Every process of the old session is gone.
    let deadline = std::time::Instant::now() + Duration::from_secs(3);
    // SAFETY: signal 0 only checks for existence.
    while unsafe { libc::killpg(pgid as i32, 0) } == 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_ne!(
        unsafe { libc::killpg(pgid as i32, 0) },
        0,
        "the group is gone"
    );
    assert_eq!(text(&run(&c, "shell", "echo next").await), "next\n");
}
