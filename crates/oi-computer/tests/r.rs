//! R sessions, with real processes (skipped when `R` is not installed).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{have, lines, run, stop_after, text};
use futures::StreamExt;
use oi_computer::LocalComputer;
use oi_core::computer::Output;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_persists_and_values_are_printed() {
    if !have("R", "R state test") {
        return;
    }
    let c = LocalComputer::new();
    assert_eq!(
        text(&run(&c, "r", "x <- 41\nf <- function(v) v * 2").await),
        ""
    );
    assert_eq!(text(&run(&c, "R", "x + 1").await), "[1] 42\n");
    assert_eq!(text(&run(&c, "r", "cat(f(x), 'é\\n')").await), "82 é\n");
    let out = run(&c, "r", "a <- 1\n\nb <- 2\nprint(a + b)").await;
    assert_eq!(lines(&out), vec![1, 3, 4]);
    assert_eq!(text(&out), "[1] 3\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_and_plots() {
    if !have("R", "R error/plot test") {
        return;
    }
    let c = LocalComputer::new();
    assert_eq!(text(&run(&c, "r", "stop('boom')").await), "Error: boom\n");
    let out = text(&run(&c, "r", "g <- function() missing_thing\ng()").await);
    assert_eq!(out, "Error in g(): object 'missing_thing' not found\n");
    let out = run(&c, "r", "plot(1:3)").await;
    assert!(
        out.iter().any(|o| o.format.as_deref() == Some("base64.png")
            && o.content
                .as_text()
                .is_some_and(|t| t.starts_with("iVBORw0KGgo"))),
        "no PNG: {out:?}"
    );
    // The driver encodes the plot itself (oi opens no file it names): a whole PNG.
    let png = out
        .iter()
        .find_map(|o| (o.format.as_deref() == Some("base64.png")).then(|| o.content.as_text()))
        .flatten()
        .map(|t| base64::Engine::decode(&base64::engine::general_purpose::STANDARD, t.trim()));
    let png = png.and_then(Result::ok).unwrap_or_default();
    assert!(
        png.starts_with(b"\x89PNG") && png.ends_with(b"IEND\xaeB`\x82"),
        "{} bytes",
        png.len()
    );
    assert!(
        !std::path::Path::new("Rplots.pdf").exists(),
        "litter in the cwd"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_during_sleep_keeps_state() {
    if !have("R", "R stop test") {
        return;
    }
    let c = Arc::new(LocalComputer::new());
    run(&c, "r", "kept <- 'yes'").await;
    let stream = c.run("r", "cat('sleeping\\n')\nSys.sleep(600)");
    stop_after(Arc::clone(&c), Duration::from_millis(600));
    let started = Instant::now();
    let out: Vec<Output> = tokio::time::timeout(Duration::from_secs(5), stream.collect())
        .await
        .expect("stop did not end the run");
    assert!(
        started.elapsed() < Duration::from_millis(1800),
        "{:?}",
        started.elapsed()
    );
    assert!(text(&out).contains("Interrupted"), "{out:?}");
    assert_eq!(text(&run(&c, "r", "cat(kept)").await), "yes");
}
