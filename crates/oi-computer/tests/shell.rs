//! Shell sessions and process-group cleanup, with real processes.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{alive, lines, run, text, wait_dead};
use futures::StreamExt;
use oi_computer::LocalComputer;
use oi_core::computer::{Computer, Output};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cd_and_variables_persist() {
    let c = LocalComputer::new();
    run(&c, "shell", "cd /tmp").await;
    assert_eq!(text(&run(&c, "bash", "pwd").await), "/tmp\n");
    run(&c, "sh", "export A=1\nB=2").await;
    assert_eq!(text(&run(&c, "SHELL", "echo $A$B").await), "12\n");
    assert_eq!(c.process_groups().len(), 1, "aliases share one session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_is_merged_in_order_and_no_blank_marker_lines() {
    let c = LocalComputer::new();
    let out = c
        .run_collect("shell", "echo one\necho two >&2\necho three")
        .await;
    assert_eq!(out, vec![Output::console("one\ntwo\nthree\n")]);
    let out = text(&run(&c, "shell", "printf 'no newline'").await);
    assert_eq!(out, "no newline");
    let out = text(&run(&c, "shell", "x=$(echo sub)\necho \"$x\" | tr a-z A-Z").await);
    assert_eq!(out, "SUB\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn active_lines_follow_the_code() {
    let c = LocalComputer::new();
    let out = run(
        &c,
        "bash",
        "echo a\n\nif true; then\n  echo b\nfi\nfor i in 1 2; do\n  echo $i\ndone\n",
    )
    .await;
    assert_eq!(text(&out), "a\nb\n1\n2\n");
    let got = lines(&out);
    assert_eq!(got.first(), Some(&1), "{got:?}");
    assert!(got.contains(&4) && got.contains(&7), "{got:?}");
    assert!(got.iter().all(|&n| n <= 9), "{got:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_gets_eof() {
    let c = LocalComputer::new();
    let started = Instant::now();
    let out = text(
        &run(
            &c,
            "shell",
            "read x; echo \"status=$? x=$x\"\ncat; echo done",
        )
        .await,
    );
    assert_eq!(out, "status=1 x=\ndone\n");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_during_sleep_ends_quickly_and_next_run_works() {
    let c = Arc::new(LocalComputer::new());
    let stream = c.run("shell", "echo start\nsleep 600");
    let stopper = Arc::clone(&c);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        stopper.stop();
    });
    let started = Instant::now();
    let out: Vec<Output> = tokio::time::timeout(Duration::from_secs(5), stream.collect())
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_millis(1800),
        "took {:?}",
        started.elapsed()
    );
    assert!(text(&out).contains("start"));
    assert_eq!(
        text(&run(&c, "shell", "echo again").await).lines().last(),
        Some("again")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_restarts_the_shell_next_time() {
    let c = LocalComputer::new();
    let out = text(&run(&c, "shell", "exit 3").await);
    assert!(out.contains("exited with exit code 3"), "{out}");
    assert_eq!(text(&run(&c, "shell", "echo back").await), "back\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminate_kills_grandchildren() {
    let c = LocalComputer::new();
    let out = text(&run(&c, "shell", "sleep 600 >/dev/null 2>&1 &\necho $!").await);
    let shell_child: i32 = out.trim().parse().unwrap();
    let out = text(
        &run(
            &c,
            "python",
            "import subprocess\np = subprocess.Popen(['sleep', '600'])\nprint(p.pid)",
        )
        .await,
    );
    let py_child: i32 = out.trim().parse().unwrap();
    assert!(alive(shell_child) && alive(py_child));
    let groups = c.process_groups();
    assert_eq!(groups.len(), 2);
    c.terminate().await;
    assert!(
        wait_dead(shell_child, Duration::from_secs(2)).await,
        "shell grandchild survived"
    );
    assert!(
        wait_dead(py_child, Duration::from_secs(2)).await,
        "python grandchild survived"
    );
    // sessions come back on demand
    assert_eq!(text(&run(&c, "shell", "echo fresh").await), "fresh\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_computer_kills_its_groups() {
    let c = LocalComputer::new();
    let out = text(&run(&c, "shell", "sleep 600 >/dev/null 2>&1 &\necho $!").await);
    let pid: i32 = out.trim().parse().unwrap();
    drop(c);
    assert!(
        wait_dead(pid, Duration::from_secs(2)).await,
        "grandchild survived drop"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_keeps_the_shell_state() {
    let c = Arc::new(LocalComputer::new());
    run(
        &c,
        "shell",
        "cd /tmp\nKEPT=yes\nf() { sleep 600; echo 'not reached'; }",
    )
    .await;
    for code in [
        "sleep 600\necho 'not reached'",
        "f\necho 'not reached'",
        "for i in 1 2; do sleep 600; done\necho 'not reached'",
    ] {
        let stream = c.run("shell", code);
        let stopper = Arc::clone(&c);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            stopper.stop();
        });
        let started = Instant::now();
        let out: Vec<Output> = tokio::time::timeout(Duration::from_secs(5), stream.collect())
            .await
            .unwrap();
        assert!(
            started.elapsed() < Duration::from_millis(1200),
            "{code}: {:?}",
            started.elapsed()
        );
        assert!(!text(&out).contains("not reached"), "{code}: {out:?}");
        assert_eq!(
            text(&run(&c, "shell", "echo \"$PWD $KEPT\"").await),
            "/tmp yes\n",
            "{code}"
        );
    }
}

/// A block reaches the shell through its command pipe as here-documents, whatever it holds:
/// lines that look like delimiters, quotes, backslashes, no final newline, and a block far
/// larger than a pipe (written into the session's own directory by the shell itself) with its
/// active lines still counted from its first line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_block_reaches_the_shell_whole() {
    let c = LocalComputer::new();
    let tricky = "cat <<'EOF'\nEOF_X '\\\" $HOME\nEOF\necho 'a'\\''b' \"\\\\\"\nprintf end";
    assert_eq!(
        text(&run(&c, "shell", tricky).await),
        "EOF_X '\\\" $HOME\na'b \\\nend"
    );
    let mut big = String::from("n=0\n");
    for i in 0..40_000 {
        big.push_str(&format!("n=$((n+1)) # {i:>20}\n"));
    }
    big.push_str("echo \"n=$n line=$LINENO\"");
    assert!(big.len() > 1_000_000);
    let out = run(&c, "shell", &big).await;
    assert_eq!(text(&out), "n=40000 line=40002\n");
    assert_eq!(lines(&out).first(), Some(&1));
    assert_eq!(text(&run(&c, "shell", "echo $n").await), "40000\n");
}
