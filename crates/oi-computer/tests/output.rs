//! Output handling across languages: recipient markers, the head+tail cap, floods, stop timing.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{rss_bytes, run, text};
use futures::StreamExt;
use oi_computer::LocalComputer;
use oi_core::computer::{Computer, Output};
use oi_core::lmc::Recipient;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recipient_and_hide_traceback_markers() {
    let c = LocalComputer::new();
    let out = c
        .run_collect(
            "python",
            "print('before')\nprint('@@@RECIPIENT:user@@@CONTENT:at 12:30: done@@@END')\nprint('after')",
        )
        .await;
    assert_eq!(
        out,
        vec![
            Output::console("before\n"),
            Output::console("at 12:30: done").to(Recipient::User),
            Output::console("after\n"),
        ]
    );
    let out = text(
        &run(
            &c,
            "python",
            "def f():\n    raise Exception('@@@HIDE_TRACEBACK@@@ You may not: do that ')\nf()",
        )
        .await,
    );
    assert_eq!(out, "Stopping execution.\n\nYou may not: do that\n");
    let out = text(&run(&c, "shell", "echo 'x: @@@HIDE_TRACEBACK@@@ no: more'").await);
    assert_eq!(out, "Stopping execution.\n\nno: more\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_cap_output_keeps_head_and_tail_with_sizes() {
    let c = LocalComputer::new().with_output_cap(40_000);
    let out = text(
        &run(
            &c,
            "python",
            "for i in range(100000):\n    print(f'line {i:06d}')",
        )
        .await,
    );
    assert!(
        out.starts_with("line 000000\nline 000001\n"),
        "{}",
        &out[..100]
    );
    assert!(
        out.ends_with("line 099998\nline 099999\n"),
        "{}",
        &out[out.len() - 100..]
    );
    assert!(out.len() < 42_000, "{}", out.len());
    assert!(
        out.contains("bytes of output omitted (1200000 bytes in all); showing the last 10000]"),
        "no marker with the sizes"
    );
    assert_eq!(text(&run(&c, "python", "print('ok')").await), "ok\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yes_for_three_seconds_stays_bounded() {
    let c = LocalComputer::new();
    run(&c, "shell", "true").await;
    let before = rss_bytes().unwrap_or(0);
    let started = Instant::now();
    let out = text(&run(&c, "shell", "timeout 3 yes; echo finished").await);
    assert!(started.elapsed() < Duration::from_secs(10));
    let grown = rss_bytes().unwrap_or(0).saturating_sub(before);
    eprintln!(
        "yes for 3 s: {} bytes kept, RSS grew {grown} bytes",
        out.len()
    );
    assert!(out.ends_with("y\ny\nfinished\n"), "tail lost");
    assert!(out.len() < 1_100_000, "{}", out.len());
    assert!(grown < 64 * 1024 * 1024, "RSS grew by {grown} bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn printing_200_mb_from_python_stays_bounded() {
    let c = LocalComputer::new();
    run(&c, "python", "pass").await;
    let before = rss_bytes().unwrap_or(0);
    let started = Instant::now();
    let mut stream = c.run(
        "python",
        "import sys\nline = 'x' * 999 + '\\n'\nfor _ in range(200_000):\n    sys.stdout.write(line)\nprint('END')",
    );
    let mut bytes = 0usize;
    let mut last = String::new();
    while let Some(o) = stream.next().await {
        if let Some(t) = o.content.as_text() {
            bytes += t.len();
            last = t.to_owned();
        }
    }
    let grown = rss_bytes().unwrap_or(0).saturating_sub(before);
    eprintln!(
        "200 MB from python: {bytes} bytes kept, {:?}, RSS grew {grown} bytes",
        started.elapsed()
    );
    assert!(last.ends_with("END\n"), "tail lost");
    assert!(
        last.contains("bytes of output omitted (200000004 bytes in all)"),
        "{}",
        &last[..200]
    );
    assert!(bytes < 1_100_000, "{bytes}");
    assert!(grown < 64 * 1024 * 1024, "RSS grew by {grown} bytes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_during_sleep_600_returns_within_a_second() {
    for (language, code) in [
        (
            "python",
            "import time\nprint('s', flush=True)\ntime.sleep(600)",
        ),
        ("shell", "echo s\nsleep 600"),
    ] {
        let c = Arc::new(LocalComputer::new());
        let mut stream = c.run(language, code);
        loop {
            let o = tokio::time::timeout(Duration::from_secs(10), stream.next())
                .await
                .unwrap()
                .unwrap();
            if o.content.as_text().is_some_and(|t| t.contains('s')) {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let stopped = Instant::now();
        c.stop();
        let _: Vec<Output> = tokio::time::timeout(Duration::from_secs(5), stream.collect())
            .await
            .unwrap();
        let took = stopped.elapsed();
        assert!(
            took < Duration::from_secs(1),
            "{language}: stop took {took:?}"
        );
        let next = text(
            &run(
                &c,
                language,
                if language == "python" {
                    "print('next')"
                } else {
                    "echo next"
                },
            )
            .await,
        );
        assert!(next.ends_with("next\n"), "{language}: {next}");
    }
}
