//! Providers by the names users type, through the real `oi` and the scripted model server
//! standing in for each API: `groq/…` goes to Groq's path with `GROQ_API_KEY` (and the code
//! never sees that key), an unknown prefix and a missing key are one clear line, an Ollama
//! model that is not pulled is pulled once the user agrees (or at once with `-y`), and
//! `oi --local` without the embedded model offers the local servers that are running.

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
fn groq_by_its_prefix_with_its_key_which_the_code_never_sees() {
    let code = "import os\nprint('groq key', 'GROQ_API_KEY' in os.environ, 'gsk_test_key_123' in str(os.environ))";
    let (_rt, server) = start(vec![Reply::tool_call("python", code), Reply::text("Done.")]);
    let home = tempfile::tempdir().unwrap();
    let base = format!("http://{}/openai/v1", server.addr());
    let out = oi(
        home.path(),
        &["-m", "groq/llama-3.1-70b-versatile", "-y", "check"],
        &[
            ("GROQ_API_BASE", &base),
            ("GROQ_API_KEY", "gsk_test_key_123"),
            ("OPENAI_API_KEY", "sk-openai-decoy-456"),
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = server.requests();
    let first = &requests[0];
    assert_eq!(first.path, "/openai/v1/chat/completions");
    assert_eq!(
        first.authorization.as_deref(),
        Some("Bearer gsk_test_key_123")
    );
    assert_eq!(first.body["model"], "llama-3.1-70b-versatile");
    assert!(
        first.body.get("tools").is_some(),
        "Groq's Llama 3.1 takes the execute tool"
    );
    assert!(
        text(&out.stdout).contains("groq key False False"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn an_unknown_prefix_and_a_missing_key_are_one_clear_line() {
    let home = tempfile::tempdir().unwrap();
    let out = oi(home.path(), &["-m", "cohere2/command", "-y", "hi"], &[], "");
    assert!(!out.status.success());
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    let line = all
        .lines()
        .find(|l| l.contains("`cohere2`"))
        .unwrap_or_else(|| panic!("{all}"));
    for prefix in ["groq", "gemini", "openrouter", "deepseek", "--api_base"] {
        assert!(line.contains(prefix), "{line}");
    }
    let out = oi(
        home.path(),
        &["-m", "gemini/gemini-1.5-flash", "-y", "hi"],
        &[],
        "",
    );
    assert!(!out.status.success());
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        all.contains("GEMINI_API_KEY") && all.contains("--api_key"),
        "{all}"
    );
    let out = oi(
        home.path(),
        &["-m", "bedrock/anthropic.claude-3-5-sonnet", "-y", "hi"],
        &[],
        "",
    );
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        all.contains("not supported") && all.contains("--api_base"),
        "{all}"
    );
}

#[test]
fn an_ollama_model_that_is_not_pulled_is_pulled_once_the_user_agrees() {
    let (_rt, server) = start(vec![
        Reply::text("Hello from a fresh model."),
        Reply::text("Again."),
    ]);
    let host = format!("http://{}", server.addr());
    let env = [("OLLAMA_HOST", host.as_str())];
    let home = tempfile::tempdir().unwrap();

    let declined = oi(home.path(), &["-m", "ollama/freshmodel", "hi"], &env, "n\n");
    assert!(!declined.status.success());
    let stderr = text(&declined.stderr);
    assert!(
        stderr.contains("`freshmodel` is not pulled yet"),
        "{stderr}"
    );
    assert!(stderr.contains("ollama pull freshmodel"), "{stderr}");
    assert!(server.ollama_pulled().is_empty());
    assert!(
        server.requests().is_empty(),
        "nothing was asked of the model"
    );

    let agreed = oi(home.path(), &["-m", "ollama/freshmodel", "hi"], &env, "y\n");
    let stderr = text(&agreed.stderr);
    assert!(agreed.status.success(), "{stderr}");
    assert_eq!(server.ollama_pulled(), ["freshmodel:latest"]);
    assert!(
        stderr.contains("pulling 6a0746a1ec1a: 25% of 4.0 MB"),
        "{stderr}"
    );
    assert!(stderr.contains("Model `freshmodel` pulled."), "{stderr}");
    assert!(text(&agreed.stdout).contains("Hello from a fresh model."));
    let request = server.requests().pop().unwrap();
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.body["model"], "freshmodel");

    let with_yes = oi(
        home.path(),
        &["-m", "ollama/otherfresh", "-y", "hi"],
        &env,
        "",
    );
    let stderr = text(&with_yes.stderr);
    assert!(with_yes.status.success(), "{stderr}");
    assert!(!stderr.contains("(y/n)"), "-y does not ask: {stderr}");
    assert_eq!(
        server.ollama_pulled(),
        ["freshmodel:latest", "otherfresh:latest"]
    );

    let present = oi(
        home.path(),
        &["-m", "ollama/llama3.1:8b", "-y", "hi"],
        &env,
        "",
    );
    assert!(
        !text(&present.stderr).contains("Pulling"),
        "{}",
        text(&present.stderr)
    );
    assert_eq!(server.ollama_pulled().len(), 2);
}

#[test]
fn offline_never_pulls_even_with_yes_and_says_how_to() {
    let (_rt, server) = start(vec![Reply::text("unused")]);
    let host = format!("http://{}", server.addr());
    let env = [("OLLAMA_HOST", host.as_str())];
    let home = tempfile::tempdir().unwrap();
    let out = oi(
        home.path(),
        &["-m", "ollama/freshmodel", "-y", "--offline", "hi"],
        &env,
        "y\n",
    );
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("offline mode downloads nothing: run `ollama pull freshmodel`"),
        "{stderr}"
    );
    assert!(server.ollama_pulled().is_empty(), "offline pulled a model");
    assert!(
        server.requests().is_empty(),
        "nothing was asked of the model"
    );
}

#[test]
fn a_failed_pull_is_a_clear_error() {
    let (_rt, server) = start(vec![]);
    let host = format!("http://{}", server.addr());
    let home = tempfile::tempdir().unwrap();
    let out = oi(
        home.path(),
        &["-m", "ollama/missing-model", "-y", "hi"],
        &[("OLLAMA_HOST", &host)],
        "",
    );
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "Ollama could not pull `missing-model`: pull model manifest: file does not exist"
        ),
        "{stderr}"
    );
}

#[test]
fn local_without_the_embedded_model_offers_the_running_servers() {
    if cfg!(feature = "local") {
        eprintln!("skipped: this oi has the embedded model");
        return;
    }
    let (_rt, server) = start(vec![]);
    let ollama = format!("http://{}", server.addr());
    let studio = format!("http://{}/v1", server.addr());
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nothing = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let home = tempfile::tempdir().unwrap();
    let out = oi(
        home.path(),
        &["--local", "-y", "hi"],
        &[
            ("OLLAMA_HOST", &ollama),
            ("LM_STUDIO_API_BASE", &studio),
            ("LLAMAFILE_API_BASE", &nothing),
        ],
        "",
    );
    assert!(!out.status.success());
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(all.contains("--features local"), "{all}");
    assert!(
        all.contains(&format!(
            "Ollama at {ollama} (scripted, llama3.1:8b): OLLAMA_HOST={ollama} oi --model ollama/scripted"
        )),
        "{all}"
    );
    assert!(
        all.contains(&format!(
            "LM Studio at {studio} (scripted): LM_STUDIO_API_BASE={studio} oi --model lm_studio/scripted"
        )),
        "{all}"
    );
    assert!(!all.contains("llama.cpp server at"), "{all}");
    assert!(server.requests().is_empty(), "nothing was sent to a model");
}
