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
    run(&c, "python", "kept = 'yes'").await;
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
    assert_eq!(text(&run(&c, "python", "print(kept)").await), "yes\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_kills_code_that_ignores_interrupts() {
    let c = std::sync::Arc::new(LocalComputer::new());
    run(&c, "python", "lost = 1").await;
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
    let out = text(&run(&c, "python", "print('lost' in globals())").await);
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

/// CPU seconds this test process has used (all threads).
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a rusage struct.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_that_ignores_the_interrupt_is_killed_without_spinning_and_says_so() {
    let c = LocalComputer::new()
        .with_timeout(Duration::from_millis(300))
        .with_stop_grace(Duration::from_secs(2));
    let before = cpu_seconds();
    let out = text(
        &run(
            &c,
            "python",
            "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(600)",
        )
        .await,
    );
    let spent = cpu_seconds() - before;
    assert!(
        out.contains("was stopped") && out.contains("did not stop when interrupted"),
        "{out}"
    );
    assert!(
        spent < 0.5,
        "{spent:.2} s of CPU while waiting out the stop grace"
    );
    let next = text(&run(&c, "python", "print('again')").await);
    assert!(
        next.contains("again") && next.to_lowercase().contains("lost"),
        "the next run says the state was lost: {next}"
    );
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
        oi_testkit::skipped!("skipped: matplotlib is not importable");
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

// --- The Python models write after training on notebooks (issue 16) ----------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_lines_run_with_variables_and_active_lines_stay_exact() {
    let c = LocalComputer::new();
    let code = "name = 'oi'\n!echo hello {name} $name\nfiles = !printf 'a\\nb\\n'\nprint(len(files), files.n)\n\nfor i in range(2):\n    !echo loop {i}\n!!echo captured";
    let out = run(&c, "python", code).await;
    assert_eq!(
        text(&out),
        "hello oi oi\n2 a\nb\nloop 0\nloop 1\n['captured']\n",
        "{out:?}"
    );
    assert_eq!(lines(&out), vec![1, 2, 3, 4, 6, 7, 8]);
    let status = text(&run(&c, "python", "!exit 3\nprint(_exit_code)").await);
    assert_eq!(status, "3\n");
    let untouched = text(
        &run(
            &c,
            "python",
            "s = '''\n!not a command\n%not a magic\n'''\nprint(s.split())",
        )
        .await,
    );
    assert_eq!(
        untouched,
        "['!not', 'a', 'command', '%not', 'a', 'magic']\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn line_magics_cd_env_time_timeit_matplotlib_pip() {
    let c = LocalComputer::new();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().canonicalize().unwrap();
    let code = format!(
        "%cd {}\nimport os\nprint(os.getcwd())\n%pwd",
        path.display()
    );
    let shown = path.display().to_string();
    assert_eq!(
        text(&run(&c, "python", &code).await),
        format!("{shown}\n{shown}\n'{shown}'\n")
    );
    let out = text(&run(&c, "python", "cd ..\nprint(os.getcwd())").await);
    assert!(
        out.ends_with(&format!("{}\n", path.parent().unwrap().display())),
        "{out}"
    );
    let out = text(
        &run(
            &c,
            "python",
            "%env OI_TEST_VAR=42\nprint(os.environ['OI_TEST_VAR'])\n%env OI_TEST_VAR",
        )
        .await,
    );
    assert_eq!(out, "env: OI_TEST_VAR=42\n42\n'42'\n");
    let out = text(&run(&c, "python", "%time total = sum(range(1000))\nprint(total)").await);
    assert!(
        out.starts_with("CPU times: user ")
            && out.contains("\nWall time: ")
            && out.ends_with("499500\n"),
        "{out}"
    );
    let out = text(&run(&c, "python", "%time 6*7").await);
    assert!(
        out.contains("Wall time: ") && out.ends_with("42\n"),
        "{out}"
    );
    let out = text(&run(&c, "python", "%timeit -n 3 -r 2 sum(range(10))").await);
    assert!(
        out.contains(" per loop (mean ± std. dev. of 2 runs, 3 loops each)"),
        "{out}"
    );
    assert_eq!(
        text(&run(&c, "python", "%matplotlib inline\nprint('ok')").await),
        "ok\n"
    );
    let out = text(&run(&c, "python", "%pip --version").await);
    assert!(out.starts_with("pip "), "{out}");
    let out = text(&run(&c, "python", "pip show pip").await);
    assert!(out.contains("Name: pip"), "automagic pip: {out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_magics_are_one_clear_line() {
    let c = LocalComputer::new();
    let out = text(
        &run(
            &c,
            "python",
            "print('before')\n%nosuchmagic arg\nprint('after')",
        )
        .await,
    );
    let mut rest = out.lines();
    assert_eq!(rest.next(), Some("before"));
    let line = rest.next().unwrap();
    assert!(
        line.starts_with("%nosuchmagic is not a magic") && line.contains("!command"),
        "{out}"
    );
    assert_eq!(
        rest.next(),
        None,
        "one line, no traceback, the cell stops: {out}"
    );
    let out = text(&run(&c, "python", "%%nosuchcell\nx").await);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.contains("%%writefile"), "{out}");
    let out = text(&run(&c, "python", "%cd /nonexistent/dir").await);
    assert_eq!(out.lines().count(), 1, "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cell_magics_writefile_bash_time_capture() {
    let c = LocalComputer::new();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("hello.py");
    let code = format!(
        "%%writefile {}\nprint('hello from the file')\n",
        file.display()
    );
    let out = text(&run(&c, "python", &code).await);
    assert_eq!(out, format!("Writing {}\n", file.display()));
    let out = text(&run(&c, "python", &format!("%run {}", file.display())).await);
    assert_eq!(out, "hello from the file\n");
    if common::have("bash", "the %%bash half") {
        let out = text(&run(&c, "python", "%%bash\necho from bash\necho $((6*7))").await);
        assert_eq!(out, "from bash\n42\n");
    }
    let out = run(&c, "python", "%%time\nx = 1\ny = x + 1\ny").await;
    assert_eq!(lines(&out), vec![2, 3, 4]);
    let printed = text(&out);
    assert!(printed.starts_with("2\nCPU times:"), "{printed}");
    let out = text(&run(&c, "python", "%%capture cap\nprint('hidden')").await);
    assert_eq!(out, "");
    assert_eq!(
        text(&run(&c, "python", "cap.stdout").await),
        "'hidden\\n'\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn display_shows_text_html_images_and_dataframes() {
    let c = LocalComputer::new();
    let out = run(
        &c,
        "python",
        "display('text', 42)\nfrom IPython.display import HTML, Markdown, display\ndisplay(HTML('<b>bold</b>'))\nclass Picture:\n    def _repr_png_(self):\n        return b'\\x89PNG-data'\ndisplay(Picture())",
    )
    .await;
    assert!(text(&out).starts_with("'text'\n42\n"), "{out:?}");
    assert!(
        out.contains(&Output::code("html", "<b>bold</b>")),
        "{out:?}"
    );
    assert!(
        out.contains(&Output::image("base64.png", "iVBORy1kYXRh")),
        "{out:?}"
    );
    let has_pandas = std::process::Command::new("python3")
        .args(["-c", "import pandas"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_pandas {
        oi_testkit::skipped!("skipped the DataFrame half: pandas is not importable");
        return;
    }
    let out = run(
        &c,
        "python",
        "import pandas as pd\ndisplay(pd.DataFrame({'a': [1, 2]}))",
    )
    .await;
    assert!(
        out.iter().any(|o| o.format.as_deref() == Some("html")
            && o.content.as_text().is_some_and(|t| t.contains("<table"))),
        "{out:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_interrupts_a_shell_line_and_keeps_state() {
    let c = std::sync::Arc::new(LocalComputer::new());
    run(&c, "python", "kept = 'yes'").await;
    let stream = c.run("python", "print('start', flush=True)\n!sleep 600");
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
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(text(&out).contains("start"), "{out:?}");
    assert_eq!(text(&run(&c, "python", "print(kept)").await), "yes\n");
}
