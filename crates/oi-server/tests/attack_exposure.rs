//! Binding beyond loopback without a key, through the real `oi-server` binary: it refuses to
//! start (one line saying how to set a key) unless the operator accepts the risk.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use oi_testkit::{Script, ScriptedServer};
use process::Launch;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_interfaces_without_a_key_refuses_to_start() {
    let model = ScriptedServer::start(Script::new([])).await.unwrap();
    for host in ["0.0.0.0", "::"] {
        let refused = Launch::new(&model.base_url())
            .args(&["--host", host])
            .try_start();
        let Err((status, stderr)) = refused else {
            panic!("oi-server started on {host} without a key");
        };
        if stderr.contains("cannot listen") {
            eprintln!("skipped {host}: cannot bind it here: {stderr}");
            continue;
        }
        assert!(!status.success());
        let line = stderr.trim();
        assert_eq!(line.lines().count(), 1, "one line: {line}");
        assert!(line.contains("INTERPRETER_API_KEY"), "{line}");
        assert!(line.contains("--insecure-no-key"), "{line}");
    }
    // The same through the environment.
    let refused = Launch::new(&model.base_url())
        .env("INTERPRETER_HOST", "0.0.0.0")
        .try_start();
    assert!(refused.is_err(), "INTERPRETER_HOST=0.0.0.0 without a key");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_or_the_explicit_flag_lets_it_start_and_the_flag_warns_loudly() {
    let model = ScriptedServer::start(Script::new([])).await.unwrap();
    let keyed = Launch::new(&model.base_url())
        .args(&["--host", "0.0.0.0"])
        .env("INTERPRETER_API_KEY", "s3cret")
        .start();
    assert!(!keyed.stderr().contains("WARNING"), "{}", keyed.stderr());
    drop(keyed);
    let risky = Launch::new(&model.base_url())
        .args(&["--host", "0.0.0.0", "--insecure-no-key"])
        .start();
    assert!(
        risky
            .stderr()
            .contains("ANYONE WHO CAN REACH THIS PORT CAN RUN CODE"),
        "{}",
        risky.stderr()
    );
    drop(risky);
    let by_env = Launch::new(&model.base_url())
        .args(&["--host", "0.0.0.0"])
        .env("INTERPRETER_INSECURE_NO_KEY", "true")
        .start();
    assert!(by_env.stderr().contains("WARNING"), "{}", by_env.stderr());
    // Loopback needs neither.
    let local = Launch::new(&model.base_url()).start();
    assert!(!local.stderr().contains("WARNING"));
}
