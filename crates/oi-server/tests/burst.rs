//! A burst of clients connecting at the same instant (issue 17), through the real binary: the
//! listen backlog is the system's maximum, so no connection waits for a SYN retransmit (one
//! second and more) because the accept queue overflowed at 128.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::sync::Arc;
use std::time::{Duration, Instant};

use oi_testkit::{Script, ScriptedServer};
use process::Launch;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_clients_connecting_at_once_wait_for_no_retransmit() {
    let model = ScriptedServer::start(Script::new([])).await.unwrap();
    let server = Launch::new(&model.base_url()).start();
    let addr: std::net::SocketAddr = server.addr().parse().unwrap();
    let clients = 1000;
    let start = Arc::new(tokio::sync::Barrier::new(clients + 1));
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let start = start.clone();
            tokio::spawn(async move {
                start.wait().await;
                let began = Instant::now();
                let stream = tokio::net::TcpStream::connect(addr).await;
                (stream, began.elapsed())
            })
        })
        .collect();
    start.wait().await;
    let mut slowest = Duration::ZERO;
    let mut streams = Vec::new();
    for task in tasks {
        let (stream, took) = task.await.unwrap();
        streams.push(stream.expect("connects"));
        slowest = slowest.max(took);
    }
    eprintln!("{clients} connections at once: the slowest took {slowest:?}");
    assert!(
        slowest < Duration::from_millis(900),
        "a connection waited {slowest:?}: the listen queue overflowed and its SYN was retried"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_connected_session_costs_under_64_kib() {
    let model = ScriptedServer::start(Script::new([])).await.unwrap();
    let server = Launch::new(&model.base_url())
        .args(&["--max_sessions", "600"])
        .start();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = server.rss_kib();
    let sessions = 500;
    let mut sockets = Vec::with_capacity(sessions);
    for i in 0..sessions {
        let url = format!("ws://{}/sessions/idle-{i}", server.addr());
        sockets.push(tokio_tungstenite::connect_async(url).await.unwrap().0);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let per_session = server.rss_kib().saturating_sub(before) / sessions as u64;
    eprintln!("{sessions} idle connected sessions: {per_session} KiB each");
    assert!(per_session < 64, "{per_session} KiB per idle session");
    drop(sockets);
}
