//! Java, one shot per run (skipped when no JDK is installed).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{have, run, stop_after, text};
use futures::StreamExt;
use oi_computer::LocalComputer;
use oi_core::computer::Output;

const HELLO: &str = "public class Hello {\n    public static void main(String[] args) {\n        System.out.println(\"hi é\");\n        System.err.println(\"to stderr\");\n    }\n}\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compiles_runs_and_leaves_nothing() {
    if !have("javac", "java run test") {
        return;
    }
    let before: Vec<_> = std::fs::read_dir(".")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    let c = LocalComputer::new();
    assert_eq!(text(&run(&c, "java", HELLO).await), "hi é\nto stderr\n");
    let after: Vec<_> = std::fs::read_dir(".")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(
        before.len(),
        after.len(),
        "files left in the cwd: {after:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_as_the_original() {
    if !have("javac", "java error test") {
        return;
    }
    let c = LocalComputer::new();
    let out = text(&run(&c, "Java", "public class Broken { void x( }").await);
    assert!(out.starts_with("Compilation Error:\n"), "{out}");
    assert!(out.contains("Broken.java:1: error"), "{out}");
    assert_eq!(
        text(&run(&c, "java", "int x = 1;").await),
        "Error: No class definition found in the provided code.\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_ends_a_sleeping_program_and_the_next_run_works() {
    if !have("javac", "java stop test") {
        return;
    }
    let c = Arc::new(LocalComputer::new());
    let code = "public class Sleepy { public static void main(String[] a) throws Exception { System.out.println(\"zzz\"); Thread.sleep(600000); } }";
    let mut stream = c.run("java", code);
    // wait until the program runs (compiling takes a while)
    let deadline = Instant::now() + Duration::from_secs(30);
    while let Some(o) = tokio::time::timeout_at(deadline.into(), stream.next())
        .await
        .unwrap()
    {
        if o.content.as_text().is_some_and(|t| t.contains("zzz")) {
            break;
        }
    }
    stop_after(Arc::clone(&c), Duration::from_millis(10));
    let started = Instant::now();
    let _: Vec<Output> = tokio::time::timeout(Duration::from_secs(5), stream.collect())
        .await
        .expect("stop did not end the run");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "{:?}",
        started.elapsed()
    );
    let out = text(&run(&c, "java", HELLO).await);
    assert!(out.ends_with("hi é\nto stderr\n"), "{out}");
    assert!(!out.contains("state"), "no state-lost note for Java: {out}");
}

/// A source longer than a pipe reaches javac whole: the host writes it piece by piece into a
/// directory of its own making (oi opens no file for it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_longer_than_a_pipe_compiles() {
    if !have("javac", "java long source test") {
        return;
    }
    let mut code = String::from("public class Long {\n");
    for i in 0..3_000 {
        code.push_str(&format!(
            "    static int f{i}() {{ return {i}; }} // {i:>40}\n"
        ));
    }
    code.push_str(
        "    public static void main(String[] a) { System.out.println(f2999() + 1); }\n}\n",
    );
    assert!(code.len() > 200_000);
    let c = LocalComputer::new();
    assert_eq!(text(&run(&c, "java", &code).await), "3000\n");
}
