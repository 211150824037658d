//! Each session keeps its own conversation file, through the real `oi-server` binary: eight
//! WebSocket sessions whose first messages start with the same words, sent in the same
//! second, leave eight files, each with its own conversation — on one server and on two
//! servers sharing a conversations folder.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod process;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use common::{Ws, say, until_complete};
use oi_testkit::{Reply, Script, ScriptedServer};
use process::Launch;
use serde_json::Value;

async fn connect(port: u16, session: &str) -> Ws {
    tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{port}/sessions/{session}"))
        .await
        .unwrap()
        .0
}

/// The conversation files under `dir` (`*.json`) and every other file there.
fn files(dir: &Path) -> (Vec<String>, Vec<String>) {
    let names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.into_iter().partition(|n| n.ends_with(".json"))
}

/// Waits until the start of a wall-clock second, so that turns started now end in it.
fn at_a_second_boundary() {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    std::thread::sleep(Duration::from_nanos(u64::from(1_000_000_000 - nanos)));
}

/// Runs one turn on each `(port, session, first message)` at once.
async fn first_turns(turns: &[(u16, String, String)]) {
    let mut sockets = Vec::new();
    for (port, session, _) in turns {
        sockets.push(connect(*port, session).await);
    }
    at_a_second_boundary();
    let runs = sockets
        .into_iter()
        .zip(turns)
        .map(|(mut ws, (_, _, text))| {
            let text = text.clone();
            tokio::spawn(async move {
                say(&mut ws, "message", &text).await;
                until_complete(&mut ws, false).await
            })
        });
    for frames in futures::future::join_all(runs).await {
        let frames = frames.unwrap();
        assert!(
            !frames.iter().any(|f| f["type"] == "error"),
            "a turn failed: {frames:?}"
        );
    }
}

/// Checks that `dir` holds one file per message in `texts`, each with that conversation,
/// named like the original (`zebra_collide_test__<date>[-suffix].json`), and no leftovers.
fn assert_one_file_each(dir: &Path, texts: &[String]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let (json, other) = loop {
        let (json, other) = files(dir);
        if json.len() >= texts.len() || Instant::now() > deadline {
            break (json, other);
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(other.is_empty(), "left-over files: {other:?}");
    assert_eq!(json.len(), texts.len(), "{json:?}");
    let mut firsts = BTreeSet::new();
    for name in &json {
        assert!(name.starts_with("zebra_collide_test__"), "{name}");
        let saved: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap();
        let saved = saved.as_array().unwrap();
        assert_eq!(saved.len(), 2, "{name}: {saved:?}");
        assert_eq!(saved[0]["role"], "user");
        firsts.insert(saved[0]["content"].as_str().unwrap().to_owned());
    }
    let expected: BTreeSet<String> = texts.iter().cloned().collect();
    assert_eq!(firsts, expected, "each file holds its own conversation");
    // The turns ran in the same second, so the original's names collided and the later
    // files were given a suffix; without the suffix they would have overwritten each other.
    let plain = json.iter().filter(|n| n.matches('-').count() == 2).count();
    assert!(plain < json.len(), "no collision happened: {json:?}");
}

fn texts(range: std::ops::Range<usize>) -> Vec<String> {
    range
        .map(|i| format!("zebra collide test session {i}"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_sessions_keep_eight_files_on_one_server() {
    let model = ScriptedServer::start(Script::new((0..8).map(|_| Reply::text("Noted."))))
        .await
        .unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = Launch::new(&model.base_url())
        .env("XDG_CONFIG_HOME", config.path().to_str().unwrap())
        .start();
    let texts = texts(0..8);
    let turns: Vec<_> = texts
        .iter()
        .enumerate()
        .map(|(i, text)| (server.port, format!("s{i}"), text.clone()))
        .collect();
    first_turns(&turns).await;
    assert_one_file_each(
        &config.path().join("open-interpreter/conversations"),
        &texts,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_sessions_keep_eight_files_on_two_servers_sharing_a_folder() {
    let model = ScriptedServer::start(Script::new((0..8).map(|_| Reply::text("Noted."))))
        .await
        .unwrap();
    let config = tempfile::tempdir().unwrap();
    let launch = || {
        Launch::new(&model.base_url())
            .env("XDG_CONFIG_HOME", config.path().to_str().unwrap())
            .start()
    };
    let (one, two) = (launch(), launch());
    let texts = texts(0..8);
    let turns: Vec<_> = texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let port = if i % 2 == 0 { one.port } else { two.port };
            (port, format!("s{i}"), text.clone())
        })
        .collect();
    first_turns(&turns).await;
    assert_one_file_each(
        &config.path().join("open-interpreter/conversations"),
        &texts,
    );
}

async fn http(port: u16, method: &str, path: &str, body: &str) -> (u16, Value) {
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let answer = process::raw(&format!("127.0.0.1:{port}"), &request).await;
    let value = serde_json::from_str(answer.body()).unwrap_or(Value::Null);
    (answer.status, value)
}

/// The conversation's file name is runtime state beside the settings, and the wire shows it
/// as before: `GET /settings` and `GET /settings/conversation_filename` name it once the
/// first save chose it, a client cannot move it (naming it again is accepted), and settings
/// changed after the first save leave the conversation in its one file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_file_name_is_shown_with_the_settings_and_survives_their_changes() {
    let model = ScriptedServer::start(Script::new([Reply::text("One."), Reply::text("Two.")]))
        .await
        .unwrap();
    let config = tempfile::tempdir().unwrap();
    let server = Launch::new(&model.base_url())
        .env("XDG_CONFIG_HOME", config.path().to_str().unwrap())
        .start();
    let port = server.port;
    let (_, before) = http(port, "GET", "/settings", "").await;
    assert_eq!(before["conversation_filename"], Value::Null, "{before}");

    let mut ws = tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{port}/"))
        .await
        .unwrap()
        .0;
    say(&mut ws, "message", "zebra first turn").await;
    until_complete(&mut ws, false).await;
    let dir = config.path().join("open-interpreter/conversations");
    let deadline = Instant::now() + Duration::from_secs(10);
    let name = loop {
        let (_, shown) = http(port, "GET", "/settings/conversation_filename", "").await;
        if let Some(name) = shown["conversation_filename"].as_str() {
            break name.to_owned();
        }
        assert!(Instant::now() < deadline, "no file name shown: {shown}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(name.starts_with("zebra_first"), "{name}");
    let (_, all) = http(port, "GET", "/settings", "").await;
    assert_eq!(all["conversation_filename"], name.as_str());

    let (status, body) = http(
        port,
        "POST",
        "/settings",
        r#"{"conversation_filename": "elsewhere.json"}"#,
    )
    .await;
    assert_eq!(status, 403, "{body}");
    let same = serde_json::json!({"conversation_filename": name}).to_string();
    let (status, body) = http(port, "POST", "/settings", &same).await;
    assert_eq!((status, &body["status"]), (200, &Value::from("success")));
    let (status, _) = http(port, "POST", "/settings", r#"{"custom_instructions": "x"}"#).await;
    assert_eq!(status, 200);

    say(&mut ws, "message", "second turn").await;
    until_complete(&mut ws, false).await;
    let (_, shown) = http(port, "GET", "/settings/conversation_filename", "").await;
    assert_eq!(shown["conversation_filename"], name.as_str());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (json, _) = files(&dir);
        let saved: Value = std::fs::read_to_string(dir.join(&name))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Value::Null);
        let count = saved.as_array().map_or(0, Vec::len);
        if json == [name.clone()] && count == 4 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "one file with both turns expected: {json:?}, {count} messages in {name}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
