//! Python sessions, with real processes.

mod common;

use std::time::{Duration, Instant};

use common::{lines, run, text};
use futures::StreamExt;
use oi_computer::LocalComputer;
use oi_core::computer::{Computer, Output};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_persists_and_trailing_expression_is_shown() {
    let c = LocalComputer::new();
    assert_eq!(text(&run(&c, "python", "x = 41").await), "");
    assert_eq!(text(&run(&c, "Python", "print(x+1)").await), "42\n");
    assert_eq!(text(&run(&c, "py", "10+12").await), "22\n");
    assert_eq!(text(&run(&c, "py", "None").await), "");
    assert_eq!(c.process_groups().len(), 1, "aliases share one session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_collect_is_exact() {
    let c = LocalComputer::new();
    assert_eq!(
        c.run_collect("python", "print(1)").await,
        vec![Output::console("1\n")]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn active_lines_survive_blank_lines_and_multiline_strings() {
    let c = LocalComputer::new();
    let code = "a = 1\n\ns = \"\"\"one\n\nthree\n\"\"\"\n\nif a:\n\n    b = 2\nprint(len(s.splitlines()))\n";
    let out = run(&c, "python", code).await;
    assert_eq!(lines(&out), vec![1, 3, 8, 10, 11]);
    assert_eq!(text(&out), "3\n");
    // active line precedes the print's output
    let pos_line = out
        .iter()
        .position(|o| *o == Output::active_line(11))
        .unwrap();
    let pos_text = out
        .iter()
        .position(|o| o.content.as_text().is_some_and(|t| t.contains('3')))
        .unwrap();
    assert!(pos_line < pos_text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traceback_and_syntax_error_are_output() {
    let c = LocalComputer::new();
    let out = text(&run(&c, "python", "def f():\n    return 1/0\nf()").await);
    assert!(out.contains("Traceback (most recent call last)"), "{out}");
    assert!(out.contains("ZeroDivisionError"), "{out}");
    assert!(
        !out.contains("python_driver") && !out.contains("_run("),
        "driver frames leaked: {out}"
    );
    let out = text(&run(&c, "python", "def f(:").await);
    assert!(out.contains("SyntaxError"), "{out}");
    assert_eq!(
        text(&run(&c, "python", "print('still fine')").await),
        "still fine\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_gets_eof() {
    let c = LocalComputer::new();
    let out = text(&run(&c, "python", "input('name? ')").await);
    assert!(out.contains("EOFError"), "{out}");
    let out = text(
        &run(
            &c,
            "python",
            "import subprocess\nprint(subprocess.run(['cat'], capture_output=True).returncode)",
        )
        .await,
    );
    assert_eq!(out, "0\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_lines_stream_promptly() {
    let c = LocalComputer::new();
    let mut stream = c.run(
        "python",
        "import sys, time\nprint('a', end='')\ntime.sleep(2)\nprint('b')",
    );
    let started = Instant::now();
    loop {
        let o = tokio::time::timeout(Duration::from_secs(5), stream.next())
            .await
            .unwrap()
            .unwrap();
        if o.content.as_text() == Some("a") {
            break;
        }
    }
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "partial output was held back"
    );
    let rest: Vec<Output> = stream.collect().await;
    assert_eq!(text(&rest), "b\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_interrupts_and_keeps_state() {
    let c = std::sync::Arc::new(LocalComputer::new());
    run(&*c, "python", "kept = 'yes'").await;
    let stream = c.run(
        "python",
        "import time\nprint('sleeping', flush=True)\ntime.sleep(600)",
    );
    let stopper = std::sync::Arc::clone(&c);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        stopper.stop();
    });
    let started = Instant::now();
    let out: Vec<Output> = tokio::time::timeout(Duration::from_secs(5), stream.collect())
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(2000),
        "took {:?}",
        started.elapsed()
    );
    let out = text(&out);
    assert!(
        out.contains("sleeping") && out.contains("KeyboardInterrupt"),
        "{out}"
    );
    assert_eq!(text(&run(&*c, "python", "print(kept)").await), "yes\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_kills_code_that_ignores_interrupts() {
    let c = std::sync::Arc::new(LocalComputer::new());
    run(&*c, "python", "lost = 1").await;
    let stream = c.run("python", "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('x', flush=True)\ntime.sleep(600)");
    let stopper = std::sync::Arc::clone(&c);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        stopper.stop();
    });
    let started = Instant::now();
    let _: Vec<Output> = tokio::time::timeout(Duration::from_secs(5), stream.collect())
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "took {:?}",
        started.elapsed()
    );
    let out = text(&run(&*c, "python", "print('lost' in globals())").await);
    assert!(out.contains("state") && out.ends_with("False\n"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_stream_stops_the_run_and_nothing_leaks() {
    let c = LocalComputer::new();
    run(&c, "python", "y = 5").await;
    {
        let mut stream = c.run(
            "python",
            "import time\nprint('begin', flush=True)\ntry:\n    time.sleep(600)\nfinally:\n    print('LATE-OUTPUT')",
        );
        // read until the run is under way, then drop the stream
        loop {
            let o = stream.next().await.unwrap();
            if o.content.as_text().is_some_and(|t| t.contains("begin")) {
                break;
            }
        }
    }
    let started = Instant::now();
    let out = text(&run(&c, "python", "print(y)").await);
    assert_eq!(out, "5\n", "stale output leaked or state lost");
    assert!(started.elapsed() < Duration::from_millis(1500));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_is_capped() {
    let c = LocalComputer::new().with_output_cap(10_000);
    let out = text(&run(&c, "python", "for i in range(100000):\n    print('y' * 50)").await);
    assert!(out.len() < 11_000, "{}", out.len());
    assert!(out.contains("output truncated") && out.contains("bytes of output omitted"));
    assert_eq!(text(&run(&c, "python", "print('ok')").await), "ok\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_is_reported() {
    let c = LocalComputer::new().with_timeout(Duration::from_millis(700));
    let started = Instant::now();
    let out = text(&run(&c, "python", "import time\ntime.sleep(600)").await);
    assert!(
        out.contains("was stopped") && out.contains("KeyboardInterrupt"),
        "{out}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rich_html_repr_is_code_output() {
    let c = LocalComputer::new();
    let out = run(
        &c,
        "python",
        "class T:\n    def _repr_html_(self):\n        return '<b>hi</b>'\nT()",
    )
    .await;
    assert!(out.contains(&Output::code("html", "<b>hi</b>")), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matplotlib_figures_become_images() {
    let has = std::process::Command::new("python3")
        .args(["-c", "import matplotlib"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !has {
        eprintln!("skipped: matplotlib is not importable");
        return;
    }
    let c = LocalComputer::new();
    let out = run(
        &c,
        "python",
        "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])",
    )
    .await;
    assert!(
        out.iter().any(|o| o.format.as_deref() == Some("base64.png")
            && o.content
                .as_text()
                .is_some_and(|t| t.starts_with("iVBORw0KGgo"))),
        "{out:?}"
    );
    // plt.show() also yields the figure, once
    let out = run(
        &c,
        "python",
        "fig, ax = plt.subplots()
ax.bar([1, 2], [3, 4])
plt.show()",
    )
    .await;
    let images = out
        .iter()
        .filter(|o| o.format.as_deref() == Some("base64.png"))
        .count();
    assert_eq!(images, 1, "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement; run with --ignored --nocapture"]
async fn measure_latency() {
    let c = LocalComputer::new();
    let t = Instant::now();
    run(&c, "python", "print(1)").await;
    let cold = t.elapsed();
    let t = Instant::now();
    for _ in 0..20 {
        run(&c, "python", "print(1)").await;
    }
    eprintln!(
        "python print(1): cold {cold:?}, warm {:?}",
        t.elapsed() / 20
    );
    let t = Instant::now();
    run(&c, "shell", "echo 1").await;
    let cold = t.elapsed();
    let t = Instant::now();
    for _ in 0..20 {
        run(&c, "shell", "echo 1").await;
    }
    eprintln!("shell echo 1: cold {cold:?}, warm {:?}", t.elapsed() / 20);
}
