//! JavaScript sessions (skipped when node is missing).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{run, text};
use futures::StreamExt;
use oi_computer::LocalComputer;
use oi_core::computer::{Computer, Output};

fn has_node() -> bool {
    let ok = std::process::Command::new("node")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        oi_testkit::skipped!("skipped: node is not installed");
    }
    ok
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declarations_persist_and_can_be_rerun() {
    if !has_node() {
        return;
    }
    let c = LocalComputer::new();
    assert_eq!(
        text(
            &run(
                &c,
                "javascript",
                "let a = 1;\nconst b = 2;\nfunction f() { return a + b; }"
            )
            .await
        ),
        ""
    );
    assert_eq!(text(&run(&c, "js", "console.log(f() + a)").await), "4\n");
    assert_eq!(text(&run(&c, "node", "let a = 10;\na * 2").await), "20\n");
    let out = text(&run(&c, "js", "null.x").await);
    assert!(out.contains("TypeError"), "{out}");
    assert_eq!(
        text(&run(&c, "js", "console.log(await Promise.resolve(7))").await),
        "7\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_interrupts_a_busy_loop() {
    if !has_node() {
        return;
    }
    let c = Arc::new(LocalComputer::new());
    run(&c, "js", "var kept = 'yes'").await;
    let stream = c.run("js", "console.log('spin'); while (true) {}");
    let stopper = Arc::clone(&c);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        stopper.stop();
    });
    let started = Instant::now();
    let out: Vec<Output> = tokio::time::timeout(Duration::from_secs(5), stream.collect())
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_millis(2000));
    assert!(text(&out).contains("spin"));
    assert_eq!(text(&run(&c, "js", "console.log(kept)").await), "yes\n");
}
