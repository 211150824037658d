//! Ruby sessions, with real processes (skipped when `ruby` is not installed).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{have, lines, run, stop_after, text};
use futures::StreamExt;
use oi_computer::LocalComputer;
use oi_core::computer::Output;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_persists_and_values_are_shown() {
    if !have("ruby", "ruby state test") {
        return;
    }
    let c = LocalComputer::new();
    assert_eq!(
        text(&run(&c, "ruby", "x = 41\ndef twice(v) = v * 2").await),
        ""
    );
    assert_eq!(text(&run(&c, "Ruby", "puts x + 1").await), "42\n");
    assert_eq!(text(&run(&c, "ruby", "twice(x)").await), "82\n");
    assert_eq!(
        text(&run(&c, "ruby", "gets.inspect").await),
        "\"nil\"\n",
        "stdin is EOF"
    );
    let out = run(&c, "ruby", "a = 1\n\nb = 2\nputs a + b").await;
    assert_eq!(lines(&out), vec![1, 3, 4]);
    assert_eq!(text(&out), "3\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_output_and_the_session_goes_on() {
    if !have("ruby", "ruby error test") {
        return;
    }
    let c = LocalComputer::new();
    let out = text(&run(&c, "ruby", "def f\n  1/0\nend\nf").await);
    assert!(out.contains("divided by 0 (ZeroDivisionError)"), "{out}");
    assert!(!out.contains("-e:"), "driver frames leaked: {out}");
    let out = text(&run(&c, "ruby", "def (").await);
    assert!(
        out.contains("SyntaxError") || out.contains("syntax error"),
        "{out}"
    );
    assert_eq!(text(&run(&c, "ruby", "puts 'ok'").await), "ok\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_during_sleep_keeps_state() {
    if !have("ruby", "ruby stop test") {
        return;
    }
    let c = Arc::new(LocalComputer::new());
    run(&c, "ruby", "kept = 'yes'").await;
    let stream = c.run("ruby", "puts 'sleeping'\nsleep 600");
    stop_after(Arc::clone(&c), Duration::from_millis(400));
    let started = Instant::now();
    let out: Vec<Output> = tokio::time::timeout(Duration::from_secs(5), stream.collect())
        .await
        .expect("stop did not end the run");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    assert!(text(&out).contains("Interrupt"), "{out:?}");
    assert_eq!(text(&run(&c, "ruby", "puts kept").await), "yes\n");
}
