//! The server's secrets against the code it runs, through the real `oi-server` binary: a
//! WebSocket client asks, the scripted model writes code that prints its environment and reads
//! the server's `/proc/<ppid>/environ` and `cmdline`, and neither the server's key
//! (`INTERPRETER_API_KEY`) nor the model's key may show up; under `--sandbox workspace`
//! provider keys are withheld too unless `--pass-env` names them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod process;

use common::{Ws, say, until_complete};
use oi_testkit::{Reply, Script, ScriptedServer};
use process::Launch;
use serde_json::Value;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const SERVER_KEY: &str = "srv-test-server-key-0123456789";
const MODEL_KEY: &str = "sk-test-model-key-0123456789";

const CODE: &str = r#"
import os
for name in ["INTERPRETER_API_KEY", "OPENAI_API_KEY", "COPY_OF_KEY", "REPLICATE_API_KEY", "PLAIN_VAR"]:
    print("var", name, "present" if name in os.environ else "absent")
values = "\n".join(os.environ.values())
print("keys in env", "srv-test-server-key" in values or "sk-test-model-key" in values)
ppid = os.getppid()
for what in ["environ", "cmdline"]:
    try:
        data = open("/proc/%d/%s" % (ppid, what), "rb").read()
        leaked = b"srv-test-server-key" in data or b"sk-test-model-key" in data
        print(what, "readable", "LEAKED" if leaked else "clean")
    except OSError as e:
        print(what, "unreadable", e.errno)
"#;

fn have_python() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("python3").is_file()));
    if !found {
        oi_testkit::skipped!("skipped: python3 is not installed");
    }
    found
}

async fn connect(port: u16) -> Ws {
    let mut request = format!("ws://127.0.0.1:{port}/")
        .into_client_request()
        .unwrap();
    request
        .headers_mut()
        .insert("X-API-KEY", SERVER_KEY.parse().unwrap());
    tokio_tungstenite::connect_async(request).await.unwrap().0
}

/// Runs `CODE` in a session of an `oi-server` started with `args`; what the code printed.
async fn printed_by_code(args: &[&str]) -> String {
    let model = ScriptedServer::start(Script::new([
        Reply::tool_call("python", CODE),
        Reply::text("Done."),
    ]))
    .await
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = Launch::new(&model.base_url())
        .args(args)
        .cwd(work.path())
        .env("INTERPRETER_API_KEY", SERVER_KEY)
        .env("OPENAI_API_KEY", MODEL_KEY)
        .env("COPY_OF_KEY", MODEL_KEY)
        .env("REPLICATE_API_KEY", "r8-test-other-provider-0123")
        .env("PLAIN_VAR", "plain")
        .start();
    let mut ws = connect(server.port).await;
    say(&mut ws, "message", "show me your environment").await;
    let frames = until_complete(&mut ws, false).await;
    frames
        .iter()
        .filter(|f| f.get("format").and_then(Value::as_str) == Some("output"))
        .filter_map(|f| f.get("content").and_then(Value::as_str))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_code_never_sees_the_server_or_model_keys() {
    if !have_python() {
        return;
    }
    let out = printed_by_code(&[]).await;
    for name in ["INTERPRETER_API_KEY", "OPENAI_API_KEY", "COPY_OF_KEY"] {
        assert!(out.contains(&format!("var {name} absent")), "{out}");
    }
    assert!(out.contains("var REPLICATE_API_KEY present"), "{out}");
    assert!(out.contains("var PLAIN_VAR present"), "{out}");
    assert!(out.contains("keys in env False"), "{out}");

    let support = oi_computer::probe();
    if !support.filesystem() || !support.seccomp {
        oi_testkit::skipped!("skipped the sandboxed half: {support}");
        return;
    }
    let out = printed_by_code(&["--sandbox", "workspace"]).await;
    for name in [
        "INTERPRETER_API_KEY",
        "OPENAI_API_KEY",
        "COPY_OF_KEY",
        "REPLICATE_API_KEY",
    ] {
        assert!(out.contains(&format!("var {name} absent")), "{out}");
    }
    assert!(out.contains("var PLAIN_VAR present"), "{out}");
    assert!(!out.contains("LEAKED"), "{out}");
    if support.namespaces != oi_computer::NamespaceSupport::Unavailable {
        assert!(out.contains("environ unreadable 2"), "{out}");
        assert!(out.contains("cmdline unreadable 2"), "{out}");
    }
    let out = printed_by_code(&["--sandbox", "workspace", "--pass-env", "REPLICATE_API_KEY"]).await;
    assert!(out.contains("var REPLICATE_API_KEY present"), "{out}");
    assert!(out.contains("var INTERPRETER_API_KEY absent"), "{out}");
}
