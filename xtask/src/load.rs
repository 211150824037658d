//! Server load test (loopback only, bounded): N WebSocket clients, each in its own session of a
//! real `oi-server` process, each running one turn against the scripted model.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::Message as Frame;

/// What one load run measured.
#[derive(Debug, Clone)]
pub struct LoadReport {
    /// Concurrent sessions.
    pub sessions: usize,
    /// Chunks received in all, per second of the whole run.
    pub chunks_per_second: f64,
    /// Time from sending `end` to the first chunk: (p50, p99), in ms.
    pub first_chunk_ms: (f64, f64),
    /// Gap between consecutive chunks of one turn: (p50, p99), in ms.
    pub chunk_gap_ms: (f64, f64),
    /// Server memory per idle connected session, in KiB.
    pub idle_session_kib: f64,
    /// Server RSS with every session connected and idle, in MiB.
    pub server_rss_mib: f64,
    /// Turns that did not end with `complete` (errors, timeouts).
    pub failures: usize,
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((values.len() as f64 - 1.0) * p).round() as usize;
    values[rank.min(values.len() - 1)]
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

struct ServerProcess(Child);

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // SAFETY: sending SIGTERM to our own child process id.
        unsafe {
            libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

async fn wait_until_listening(port: u16) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("oi-server did not start listening on port {port}")
}

/// One client's turn: (first-chunk latency, chunk gaps, chunk count, completed).
struct TurnTimes {
    first_chunk: Option<Duration>,
    gaps: Vec<Duration>,
    chunks: usize,
    completed: bool,
}

async fn client_turn(
    socket: &mut tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
) -> anyhow::Result<TurnTimes> {
    for frame in [
        r#"{"role":"user","type":"message","start":true}"#,
        r#"{"role":"user","type":"message","content":"hello there"}"#,
    ] {
        socket.send(Frame::text(frame)).await?;
    }
    socket
        .send(Frame::text(
            r#"{"role":"user","type":"message","end":true}"#,
        ))
        .await?;
    let sent = Instant::now();
    let mut times = TurnTimes {
        first_chunk: None,
        gaps: Vec::new(),
        chunks: 0,
        completed: false,
    };
    let mut last = sent;
    let deadline = Duration::from_secs(120);
    while let Ok(Some(frame)) = tokio::time::timeout(deadline, socket.next()).await {
        let Frame::Text(text) = frame? else { continue };
        let now = Instant::now();
        if times.first_chunk.is_none() {
            times.first_chunk = Some(now - sent);
        } else {
            times.gaps.push(now - last);
        }
        last = now;
        times.chunks += 1;
        if text.contains(r#""status""#) && text.contains(r#""complete""#) {
            times.completed = true;
            break;
        }
    }
    Ok(times)
}

/// Runs the load test with `sessions` concurrent clients against `server_bin`.
pub async fn run(
    server_bin: &Path,
    model_base: &str,
    sessions: usize,
) -> anyhow::Result<LoadReport> {
    let port = free_port()?;
    let child = Command::new(server_bin)
        .args([
            "--port",
            &port.to_string(),
            "--api_base",
            model_base,
            "--api_key",
            "x",
            "-y",
        ])
        .args(["--max-sessions", &(sessions + 16).to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("starting {}", server_bin.display()))?;
    let server = ServerProcess(child);
    let pid = server.0.id();
    wait_until_listening(port).await?;
    let baseline = rss_kib(pid);
    let mut sockets = Vec::with_capacity(sessions);
    for i in 0..sessions {
        let url = format!("ws://127.0.0.1:{port}/sessions/load-{i}");
        let (socket, _) = tokio_tungstenite::connect_async(url)
            .await
            .context("connecting a client")?;
        sockets.push(socket);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let connected = rss_kib(pid);
    let started = Instant::now();
    let tasks: Vec<_> = sockets
        .into_iter()
        .map(|mut socket| tokio::spawn(async move { client_turn(&mut socket).await }))
        .collect();
    let mut first = Vec::new();
    let mut gaps = Vec::new();
    let mut chunks = 0usize;
    let mut failures = 0usize;
    for task in tasks {
        match task.await {
            Ok(Ok(times)) => {
                chunks += times.chunks;
                if !times.completed {
                    failures += 1;
                }
                first.extend(times.first_chunk.map(|d| d.as_secs_f64() * 1000.0));
                gaps.extend(times.gaps.iter().map(|d| d.as_secs_f64() * 1000.0));
            }
            _ => failures += 1,
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    drop(server);
    Ok(LoadReport {
        sessions,
        chunks_per_second: chunks as f64 / elapsed.max(1e-9),
        first_chunk_ms: (percentile(&mut first, 0.5), percentile(&mut first, 0.99)),
        chunk_gap_ms: (percentile(&mut gaps, 0.5), percentile(&mut gaps, 0.99)),
        idle_session_kib: connected.saturating_sub(baseline) as f64 / sessions.max(1) as f64,
        server_rss_mib: connected as f64 / 1024.0,
        failures,
    })
}
