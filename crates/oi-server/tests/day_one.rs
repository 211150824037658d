//! What Open Interpreter users expect of the server on day one, through the real `oi-server`
//! binary and a WebSocket client: a server turn is saved as a conversation in the same folder
//! and with the same kind of name as a CLI turn, and a conversation past the model's context
//! window is trimmed with the note shown once to the client.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod process;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Ws, say, until_complete};
use oi_testkit::{Reply, Script, ScriptedServer};
use process::Launch;
use serde_json::Value;

async fn connect(port: u16) -> Ws {
    tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{port}/"))
        .await
        .unwrap()
        .0
}

/// The `*.json` files under `dir`, by name.
fn conversation_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Waits up to 10 s for a conversation file to appear under `dir`.
fn wait_for_files(dir: &Path) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let files = conversation_files(dir);
        if !files.is_empty() || Instant::now() > deadline {
            return files;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The part of a conversation file name before the date (`compute_67__…` → `compute_67`).
fn stem(name: &str) -> &str {
    name.split("__").next().unwrap_or(name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_turn_is_saved_like_a_cli_turn() {
    let model = ScriptedServer::start(Script::new([
        Reply::text("It is 42."),
        Reply::text("It is 42."),
    ]))
    .await
    .unwrap();
    let server_config = tempfile::tempdir().unwrap();
    let server = Launch::new(&model.base_url())
        .env("XDG_CONFIG_HOME", server_config.path().to_str().unwrap())
        .start();
    let mut ws = connect(server.port).await;
    say(&mut ws, "message", "What is six times seven?").await;
    let frames = until_complete(&mut ws, false).await;
    assert!(
        frames.iter().any(|f| f["content"] == "It is 42."),
        "{frames:?}"
    );
    let server_dir = server_config.path().join("open-interpreter/conversations");
    let server_files = wait_for_files(&server_dir);

    let cli_home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_oi-server").replace("oi-server", "oi"))
        .args(["--api_base", &model.base_url(), "--api_key", "x", "-y"])
        .arg("What is six times seven?")
        .env("HOME", cli_home.path())
        .env("XDG_CONFIG_HOME", cli_home.path().join(".config"))
        .output();
    let Ok(out) = out else {
        oi_testkit::skipped!("skipped the CLI half: the oi binary is not built next to oi-server");
        assert_eq!(server_files.len(), 1, "{server_files:?}");
        return;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cli_files = conversation_files(
        &cli_home
            .path()
            .join(".config/open-interpreter/conversations"),
    );
    assert_eq!(
        server_files.len(),
        1,
        "the server saved one conversation: {server_files:?}"
    );
    assert_eq!(cli_files.len(), 1, "{cli_files:?}");
    assert_eq!(stem(&server_files[0]), stem(&cli_files[0]));
    assert_eq!(stem(&server_files[0]), "What_is_six_times");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(server_dir.join(&server_files[0])).unwrap())
            .unwrap();
    let roles: Vec<&str> = saved
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(roles, ["user", "assistant"], "{saved}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversation_history_false_turns_saving_off() {
    let model = ScriptedServer::start(Script::new([Reply::text("Not saved.")]))
        .await
        .unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = Launch::new(&model.base_url())
        .env("XDG_CONFIG_HOME", config.path().to_str().unwrap())
        .start();
    let response = process::raw(
        &server.addr(),
        &process::post(
            "/settings",
            &["Content-Type: application/json"],
            r#"{"conversation_history": false}"#,
        ),
    )
    .await;
    assert_eq!(response.status, 200, "{}", response.body());
    let mut ws = connect(server.port).await;
    say(&mut ws, "message", "Do not keep this").await;
    until_complete(&mut ws, false).await;
    std::thread::sleep(Duration::from_millis(300));
    let dir = config.path().join("open-interpreter/conversations");
    assert!(
        conversation_files(&dir).is_empty(),
        "{:?}",
        conversation_files(&dir)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_client_sees_the_trimming_note_once() {
    let turns = 6;
    let replies: Vec<Reply> = (1..=turns)
        .map(|i| Reply::text(format!("Noted {i}.")))
        .collect();
    let model = ScriptedServer::start(Script::new(replies)).await.unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = Launch::new(&model.base_url())
        .args(&["--model", "gpt-4"])
        .env("XDG_CONFIG_HOME", config.path().to_str().unwrap())
        .start();
    let mut ws = connect(server.port).await;
    let mut shown = String::new();
    for i in 1..=turns {
        let text = format!("message {i}: {}", "alpha beta gamma delta ".repeat(500));
        say(&mut ws, "message", &text).await;
        for frame in until_complete(&mut ws, false).await {
            if frame["role"] == "assistant" && frame["type"] == "message" {
                shown.push_str(frame["content"].as_str().unwrap_or_default());
            }
        }
    }
    assert_eq!(shown.matches("oi left out the").count(), 1, "{shown}");
    let requests = model.requests();
    let last = requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(last[0]["role"], "system");
    let newest = last.last().unwrap()["content"].as_str().unwrap();
    assert!(
        newest.starts_with(&format!("message {turns}:")),
        "{newest:.30}"
    );
    assert!(
        !last.iter().any(|m| m["content"]
            .as_str()
            .is_some_and(|c| c.starts_with("message 1:"))),
        "the oldest message was left out"
    );
    assert!(
        !last.iter().any(|m| m["content"]
            .as_str()
            .is_some_and(|c| c.contains("oi left out"))),
        "the note is not sent back to the model"
    );
}
