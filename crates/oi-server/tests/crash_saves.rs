//! A conversation file survives the server being killed while it writes: the real `oi-server`
//! binary runs a loop of turns on several sessions (each turn appends its messages to the
//! session's file) and is killed with SIGKILL, again and again at different moments. Every
//! conversation file left then loads (one torn mid-write is repaired on load), holds the
//! start of its own conversation, and keeps every turn whose `complete` the client received
//! (a turn's `complete` is sent after its save).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod process;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use oi_core::{Message, Role};
use oi_testkit::{Reply, Script, ScriptedServer};
use process::Launch;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message as Frame;

const SESSIONS: usize = 4;
/// When each server is killed, after its sessions start their turns (ms).
const KILLS_AFTER_MS: [u64; 5] = [400, 650, 900, 1150, 1400];

/// The answer to `text` ("… turn N"): long, so that an append takes a while.
fn answer(text: &str) -> String {
    format!("answer to {text}: {}", "all work and no play ".repeat(800))
}

fn reply(body: &Value) -> Reply {
    let text = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    Reply::text(answer(&text))
}

fn user_text(session: &str, turn: usize) -> String {
    format!("crash test {session} turn {turn}")
}

/// Runs turns on `session` until the server goes away; `done` counts the turns whose
/// `complete` came.
async fn turns(port: u16, session: String, done: Arc<AtomicUsize>) {
    let url = format!("ws://127.0.0.1:{port}/sessions/{session}");
    let Ok((mut ws, _)) = tokio_tungstenite::connect_async(url).await else {
        return;
    };
    for turn in 0.. {
        let text = user_text(&session, turn);
        for frame in [
            json!({"role": "user", "type": "message", "start": true}),
            json!({"role": "user", "type": "message", "content": text}),
            json!({"role": "user", "type": "message", "end": true}),
        ] {
            if ws
                .send(Frame::Text(frame.to_string().into()))
                .await
                .is_err()
            {
                return;
            }
        }
        loop {
            match tokio::time::timeout(Duration::from_secs(15), ws.next()).await {
                Ok(Some(Ok(Frame::Text(text)))) => {
                    let value: Value = serde_json::from_str(text.as_str()).unwrap();
                    assert_ne!(value["type"], "error", "{value}");
                    if value["role"] == "server" && value["content"] == "complete" {
                        break;
                    }
                }
                Ok(Some(Ok(_))) => {}
                _ => return,
            }
        }
        done.store(turn + 1, Ordering::SeqCst);
    }
}

/// Checks one conversation file; its session (none for an empty file), and whether it was
/// torn.
fn check_file(path: &Path, completed: &BTreeMap<String, usize>) -> (Option<String>, bool) {
    let raw = std::fs::read(path).unwrap();
    let whole = serde_json::from_slice::<Vec<Message>>(&raw).ok();
    let loaded = oi_core::history::load(path)
        .unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()));
    if let Some(whole) = &whole {
        assert!(&loaded == whole, "{}", path.display());
        // Appended turn by turn, the file is byte for byte what one whole save writes.
        let same = raw == serde_json::to_vec(whole).unwrap();
        assert!(same, "{} is not written as a whole save", path.display());
    }
    // Repaired or not, the file is now one plain JSON list.
    let now = std::fs::read(path).unwrap();
    let plain = now == serde_json::to_vec(&loaded).unwrap();
    assert!(
        plain,
        "{} is not a plain list after loading",
        path.display()
    );
    if loaded.is_empty() {
        // Claimed by a first turn that the kill cut before its first save.
        return (None, whole.is_none());
    }
    let first = loaded[0].text().to_owned();
    let session = first
        .strip_prefix("crash test ")
        .and_then(|rest| rest.strip_suffix(" turn 0"))
        .unwrap_or_else(|| {
            panic!(
                "{}: not a conversation of this test: {first}",
                path.display()
            )
        })
        .to_owned();
    for (i, message) in loaded.iter().enumerate() {
        let turn = i / 2;
        let expected = if i % 2 == 0 {
            Message::user(user_text(&session, turn))
        } else {
            Message::assistant(answer(&user_text(&session, turn)))
        };
        assert!(
            message == &expected,
            "{}: message {i} is not the expected one",
            path.display()
        );
    }
    let done = completed.get(&session).copied().unwrap_or(0);
    assert!(
        loaded.len() >= 2 * done,
        "{}: {done} turns were answered, but only {} messages are kept",
        path.display(),
        loaded.len()
    );
    assert_eq!(loaded[loaded.len() - 1].role, Role::Assistant);
    (Some(session), whole.is_none())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_while_it_saves_loses_no_whole_turn() {
    let model = ScriptedServer::start(Script::responder(reply).without_recording())
        .await
        .unwrap();
    let config = tempfile::tempdir().unwrap();
    let dir = config.path().join("open-interpreter/conversations");
    let mut completed = BTreeMap::new();
    for (round, after) in KILLS_AFTER_MS.iter().enumerate() {
        let server = Launch::new(&model.base_url())
            .env("XDG_CONFIG_HOME", config.path().to_str().unwrap())
            .start();
        let counters: Vec<(String, Arc<AtomicUsize>)> = (0..SESSIONS)
            .map(|s| (format!("r{round}s{s}"), Arc::new(AtomicUsize::new(0))))
            .collect();
        let tasks: Vec<_> = counters
            .iter()
            .map(|(session, done)| tokio::spawn(turns(server.port, session.clone(), done.clone())))
            .collect();
        tokio::time::sleep(Duration::from_millis(*after)).await;
        // SIGKILL: no destructor, no flush, whatever the server was writing.
        drop(server);
        for task in tasks {
            task.await.unwrap();
        }
        for (session, done) in counters {
            completed.insert(session, done.load(Ordering::SeqCst));
        }
    }
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    let mut torn = 0;
    let mut kept = BTreeMap::new();
    for file in &files {
        let (session, was_torn) = check_file(file, &completed);
        torn += usize::from(was_torn);
        if let Some(session) = session {
            assert!(
                kept.insert(session, file).is_none(),
                "two files for one session"
            );
        }
    }
    for (session, done) in &completed {
        assert!(
            *done == 0 || kept.contains_key(session),
            "{session}'s file is gone"
        );
    }
    let turns: usize = completed.values().sum();
    assert!(
        turns > SESSIONS * KILLS_AFTER_MS.len(),
        "too few turns ran: {completed:?}"
    );
    eprintln!(
        "{} files, {turns} answered turns, {torn} torn by a kill and repaired on load",
        files.len()
    );
}
