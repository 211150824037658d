//! The policy a run asks for is the one it runs under (issue 21.7): a computer built without a
//! sandbox runs a block under `readonly` when the caller's settings say so, restarting the
//! session (and saying that its state was lost) only when the policy changed under a session
//! that had run code.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::text;
use futures::StreamExt;
use oi_computer::{LocalComputer, ResourceLimits, SandboxMode, SandboxPolicy, probe};
use oi_core::computer::Computer;
use oi_core::settings::computer::ComputerSettings;

/// Runs `code` under `policy`; all it printed.
async fn run_under(c: &LocalComputer, code: &str, policy: &ComputerSettings) -> String {
    let outputs: Vec<_> = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        Computer::run(c, "shell", code, policy).collect::<Vec<_>>(),
    )
    .await
    .expect("the run ends within 20 s");
    text(&outputs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_run_takes_the_policy_it_is_given() {
    let support = probe();
    if !support.filesystem() {
        assert!(
            std::env::var("OI_TEST_REQUIRE_ALL").as_deref() != Ok("1"),
            "OI_TEST_REQUIRE_ALL=1 but the kernel cannot sandbox files: {support}"
        );
        oi_testkit::skipped!("skipped: the kernel cannot sandbox files here ({support})");
        return;
    }
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let target = work.path().join("written.txt");
    let write = format!(
        "export KEPT=yes; echo x > '{}' && echo wrote",
        target.display()
    );
    let off = ComputerSettings::default();
    let readonly = ComputerSettings {
        sandbox: SandboxPolicy {
            mode: SandboxMode::ReadOnly,
            workspace: work.path().to_path_buf(),
            ..SandboxPolicy::default()
        },
        limits: ResourceLimits::default(),
        api: false,
    };
    let c = LocalComputer::new();

    // A session started ahead of any code is replaced silently.
    c.prepare("shell");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let out = run_under(&c, &write, &readonly).await;
    assert!(!target.exists(), "{out}");
    assert!(!out.contains("restarted"), "{out}");

    // Loosened (only oi itself may; the server refuses it): the session is replaced, and said so.
    let out = run_under(&c, &write, &off).await;
    assert!(target.exists() && out.contains("wrote"), "{out}");
    assert!(out.contains("restarted"), "{out}");
    std::fs::remove_file(&target).unwrap_or_else(|e| panic!("{e}"));

    // The same policy again keeps the session and its state.
    let out = run_under(&c, "echo ${KEPT:-lost}", &off).await;
    assert_eq!(out, "yes\n");

    // Tightened: the next block cannot write, and its state is gone.
    let out = run_under(&c, &format!("echo ${{KEPT:-lost}}; {write}"), &readonly).await;
    assert!(!target.exists(), "{out}");
    assert!(out.contains("lost") && out.contains("restarted"), "{out}");
}
