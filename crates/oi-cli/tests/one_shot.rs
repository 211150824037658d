//! `oi MESSAGE` one-shot, run as a real process against the scripted model server over HTTP.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod oi_common;

use std::process::Output;

use oi_common::{Oi, text};
use oi_testkit::{Script, ScriptedServer};

struct Setup {
    _runtime: tokio::runtime::Runtime,
    server: ScriptedServer,
    home: tempfile::TempDir,
}

fn setup() -> Setup {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(ScriptedServer::start(Script::calculator()))
        .unwrap();
    Setup {
        _runtime: runtime,
        server,
        home: tempfile::tempdir().unwrap(),
    }
}

fn oi(setup: &Setup, args: &[&str], stdin: &str) -> Output {
    Oi {
        args: args.to_vec(),
        stdin,
        ..Oi::default()
    }
    .run(setup.home.path())
}

#[test]
fn computes_in_one_shot_and_saves_the_conversation() {
    let s = setup();
    let base = s.server.base_url();
    let out = oi(&s, &["-y", "--api_base", &base, "compute 239023*79043"], "");
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    insta::assert_snapshot!("one_shot_tool_mode", text(&out.stdout));
    let saved = s.home.path().join(".config/open-interpreter/conversations");
    let files: Vec<_> = std::fs::read_dir(&saved).unwrap().collect();
    assert_eq!(files.len(), 1);
}

#[test]
fn text_mode_with_kebab_case_and_short_flags() {
    let s = setup();
    let base = s.server.base_url();
    let out = oi(
        &s,
        &[
            "--auto-run",
            "-ab",
            &base,
            "--no-llm-supports-functions",
            "-m",
            "openai/local",
            "compute",
            "6*7",
        ],
        "",
    );
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    insta::assert_snapshot!("one_shot_text_mode", text(&out.stdout));
}

#[test]
fn reads_the_message_from_stdin_in_a_pipe() {
    let s = setup();
    let base = s.server.base_url();
    let out = oi(&s, &["-s", "-y", "--api_base", &base], "compute 2*21\n");
    assert!(out.status.success(), "stderr: {}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("The result is 42."),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn asks_before_running_and_a_no_declines() {
    let s = setup();
    let base = s.server.base_url();
    let declined = oi(&s, &["--api_base", &base, "compute 5*5"], "n\n");
    assert!(
        declined.status.success(),
        "stderr: {}",
        text(&declined.stderr)
    );
    insta::assert_snapshot!("one_shot_declined", text(&declined.stdout));
    let approved = oi(&s, &["--api_base", &base, "compute 5*5"], "y\n");
    assert!(
        text(&approved.stdout).contains("The result is 25."),
        "{}",
        text(&approved.stdout)
    );
}

#[test]
fn unreachable_model_server_exits_non_zero_with_a_clear_message() {
    let s = setup();
    let out = oi(
        &s,
        &["-y", "--api_base", "http://127.0.0.1:9/v1", "hello"],
        "",
    );
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("could not reach the model server at http://127.0.0.1:9/v1"),
        "{stderr}"
    );
}

#[test]
fn missing_openai_key_is_one_clear_sentence() {
    let s = setup();
    let out = oi(&s, &["-y", "hello"], "");
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("OPENAI_API_KEY") && stderr.contains("--api_key"),
        "{stderr}"
    );
}

#[test]
fn version_and_unknown_flags() {
    let s = setup();
    let out = oi(&s, &["--version"], "");
    assert!(out.status.success());
    assert!(
        text(&out.stdout).starts_with("oi "),
        "{}",
        text(&out.stdout)
    );
    let out = oi(&s, &["--modle", "x"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--model"),
        "{}",
        text(&out.stderr)
    );
}
