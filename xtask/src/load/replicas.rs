//! `cargo xtask load --replicas N [--store URL] [--ack] [SESSIONS…]`: many replicas under a burst of
//! new sessions (loopback only, bounded). N real `oi-server` processes share the store (a
//! Redis that is already running, e.g. `redis-server --port 6390`); S clients each open a new
//! session at the same instant, sent to replica `i mod N` as a load balancer hashing the id
//! would, and hold one turn (a text reply of ~17 frames from the scripted model). Reported:
//! sessions per second (from the first connect to the last `complete`), connect and
//! connect-to-`complete` p50 / p99, and the CPU of all replicas per session. `--ack`: the
//! replicas run in acknowledge mode and the clients acknowledge every chunk.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message as Frame;

use super::{
    ServerProcess, Ws, connect, cpu_ns, ms, percentile, read_turn, send_message, work_dir,
};

/// How the replicas run.
#[derive(Debug, Clone, Copy)]
pub struct Setup<'a> {
    /// How many.
    pub replicas: usize,
    /// The store they share, if any.
    pub store: Option<&'a str>,
    /// Acknowledge mode (the clients ack every chunk).
    pub acknowledge: bool,
}

/// What one burst on N replicas measured.
#[derive(Debug, Clone)]
pub struct ReplicaReport {
    /// Replicas.
    pub replicas: usize,
    /// The store, if any.
    pub store: Option<String>,
    /// Whether in acknowledge mode.
    pub acknowledge: bool,
    /// Sessions opened at once.
    pub sessions: usize,
    /// Sessions that completed their turn, per second of the whole burst.
    pub sessions_per_second: f64,
    /// Connect and upgrade (the lease taken and the session loaded): (p50, p99), in ms.
    pub connect_ms: (f64, f64),
    /// From the connect to the turn's `complete`: (p50, p99), in ms.
    pub session_ms: (f64, f64),
    /// CPU time of all replicas per session, in ms.
    pub cpu_per_session_ms: f64,
    /// Sessions that failed.
    pub failures: usize,
}

/// The header of the replica table.
pub const HEADER: &str = "| replicas | store | acks | sessions at once | sessions/s | connect p50 / p99 | connect → `complete` p50 / p99 | replicas' CPU per session | failed |\n|---|---|---|---|---|---|---|---|---|";

/// One row of the replica table.
pub fn row(r: &ReplicaReport) -> String {
    format!(
        "| {} | {} | {} | {} | {:.0} | {:.1} / {:.1} ms | {:.1} / {:.1} ms | {:.2} ms | {} |",
        r.replicas,
        r.store.as_deref().map_or("none (in-process)", |_| "Redis"),
        if r.acknowledge { "yes" } else { "no" },
        r.sessions,
        r.sessions_per_second,
        r.connect_ms.0,
        r.connect_ms.1,
        r.session_ms.0,
        r.session_ms.1,
        r.cpu_per_session_ms,
        r.failures
    )
}

/// Reads a turn up to its `complete`, acknowledging every chunk.
async fn read_acking(socket: &mut Ws) -> anyhow::Result<()> {
    let deadline = Duration::from_secs(120);
    while let Ok(Some(frame)) = tokio::time::timeout(deadline, socket.next()).await {
        let Frame::Text(text) = frame? else { continue };
        let chunk: serde_json::Value = serde_json::from_str(text.as_str())?;
        if let Some(id) = chunk.get("id").and_then(serde_json::Value::as_str) {
            socket
                .send(Frame::text(serde_json::json!({ "ack": id }).to_string()))
                .await?;
        }
        if chunk.get("content").and_then(serde_json::Value::as_str) == Some("complete") {
            return Ok(());
        }
    }
    anyhow::bail!("the turn did not complete")
}

/// One client: opens its session, holds one turn; (connect, connect → `complete`).
async fn one_session(
    port: u16,
    path: String,
    acknowledge: bool,
) -> anyhow::Result<(Duration, Duration)> {
    let began = Instant::now();
    let mut socket = connect(port, &path).await?;
    let connected = began.elapsed();
    send_message(&mut socket, "hello there").await?;
    if acknowledge {
        read_acking(&mut socket).await?;
    } else {
        let times = read_turn(&mut socket, Instant::now()).await?;
        times.completion.context("the turn did not complete")?;
    }
    Ok((connected, began.elapsed()))
}

/// Runs one burst of `sessions` new sessions over `replicas` replicas.
pub async fn burst(
    server_bin: &Path,
    model_base: &str,
    setup: &Setup<'_>,
    sessions: usize,
) -> anyhow::Result<ReplicaReport> {
    let Setup {
        replicas,
        store,
        acknowledge,
    } = *setup;
    let max = (sessions + 16).to_string();
    let mut extra = vec!["--max_sessions", max.as_str()];
    if let Some(store) = store {
        extra.extend(["--store", store]);
    }
    let servers = (0..replicas.max(1))
        .map(|i| {
            ServerProcess::start_acknowledging(
                server_bin,
                model_base,
                &work_dir().join(format!("home-replica-{i}")),
                &extra,
                acknowledge,
            )
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let ports: Vec<u16> = servers.iter().map(|s| s.port).collect();
    let cpu_before: u64 = servers.iter().map(|s| cpu_ns(s.pid())).sum();
    // New ids each run: a store keeps the sessions of earlier runs.
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let start = Arc::new(tokio::sync::Barrier::new(sessions + 1));
    let tasks: Vec<_> = (0..sessions)
        .map(|i| {
            let start = start.clone();
            let port = ports[i % ports.len()];
            let path = format!("/sessions/load-{run}-{i}");
            tokio::spawn(async move {
                start.wait().await;
                one_session(port, path, acknowledge).await
            })
        })
        .collect();
    start.wait().await;
    let began = Instant::now();
    let (mut connects, mut totals, mut failures) = (Vec::new(), Vec::new(), 0);
    for task in tasks {
        match task.await {
            Ok(Ok((connected, total))) => {
                connects.push(ms(connected));
                totals.push(ms(total));
            }
            _ => failures += 1,
        }
    }
    let elapsed = began.elapsed().as_secs_f64();
    let cpu_after: u64 = servers.iter().map(|s| cpu_ns(s.pid())).sum();
    drop(servers);
    Ok(ReplicaReport {
        replicas,
        store: store.map(str::to_owned),
        acknowledge,
        sessions,
        sessions_per_second: totals.len() as f64 / elapsed.max(1e-9),
        connect_ms: (
            percentile(&mut connects, 0.5),
            percentile(&mut connects, 0.99),
        ),
        session_ms: (percentile(&mut totals, 0.5), percentile(&mut totals, 0.99)),
        cpu_per_session_ms: cpu_after.saturating_sub(cpu_before) as f64
            / 1e6
            / sessions.max(1) as f64,
        failures,
    })
}
