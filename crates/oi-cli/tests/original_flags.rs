//! The original's remaining CLI flags through the real `oi` and the scripted model server:
//! `--llama3` and `--codestral` (their models through Ollama, pulled once the user agrees),
//! `--assistant`, `-sp` accepted and explained, `--local_models` printing where models are.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::process::Output;

mod oi_common;
use oi_common::{start_server as start, text};
use oi_testkit::Reply;

fn oi(home: &Path, args: &[&str], env: &[(&str, &str)], stdin: &str) -> Output {
    oi_common::oi_without_providers(home, args, env, stdin)
}

#[test]
fn llama3_runs_llama3_through_ollama_and_speak_messages_is_explained() {
    let (_rt, server) = start(vec![Reply::text("Hello from llama3.")]);
    let host = format!("http://{}", server.addr());
    let home = tempfile::tempdir().unwrap();
    let out = oi(
        home.path(),
        &["--llama3", "-sp", "-y", "hi"],
        &[("OLLAMA_HOST", &host)],
        "",
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("Hello from llama3."), "{stdout}");
    assert!(stderr.contains("does not read messages aloud"), "{stderr}");
    assert_eq!(server.ollama_pulled(), ["llama3:latest"], "pulled with -y");
    let request = &server.requests()[0];
    assert_eq!(request.body["model"], "llama3");
    assert_eq!(request.body["max_tokens"], 1000);
    assert!(request.body.get("tools").is_none(), "fenced code, no tools");
}

#[test]
fn codestral_and_assistant_pick_their_models() {
    let (_rt, server) = start(vec![
        Reply::text("one"),
        Reply::text("Hi. The task is done."),
    ]);
    let host = format!("http://{}", server.addr());
    let home = tempfile::tempdir().unwrap();
    let out = oi(
        home.path(),
        &["--codestral", "-y", "hi"],
        &[("OLLAMA_HOST", &host)],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = oi(
        home.path(),
        &["--assistant", "hi"],
        &[
            ("OPENAI_BASE_URL", &server.base_url()),
            ("OPENAI_API_KEY", "sk-test"),
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = server.requests();
    assert_eq!(requests[0].body["model"], "codestral");
    assert_eq!(requests[1].body["model"], "gpt-4o");
    assert_eq!(requests[1].body["max_tokens"], 4096);
}

#[test]
fn local_models_prints_where_the_models_are_and_exits() {
    let home = tempfile::tempdir().unwrap();
    let model = home.path().join("m.gguf");
    let out = oi(
        home.path(),
        &["--local_models"],
        &[("OI_MODEL_PATH", model.to_str().unwrap())],
        "",
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(stdout.lines().next(), home.path().to_str(), "{stdout}");
    assert!(stdout.contains("not fetched yet"), "{stdout}");
}
