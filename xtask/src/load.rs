//! Server load test (loopback only, bounded), measuring the server and not the client:
//!
//! - [`run`]: N WebSocket clients connect at the same instant, each to its own session of a
//!   real `oi-server` process, and then all send one message at the same instant (a text
//!   reply of ~17 frames from the scripted model). Reported: connect times (a full listen
//!   backlog shows as SYN retransmits, 1 s and more), first chunk and completion times, the
//!   server's CPU per turn, and its memory per idle connected session.
//! - [`cpu_per_turn`]: one session, turn after turn, the server's CPU time per turn as the
//!   conversation grows (1 600 messages after 800 turns).
//!
//! The server's CPU is the sum of its threads' run time (`/proc/PID/task/*/schedstat`, in
//! nanoseconds). Every client socket has TCP_NODELAY: three small frames per message would
//! otherwise wait for the server's delayed ACK (the 44 ms floor the first version measured).

mod replicas;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message as Frame;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// What one load run measured.
#[derive(Debug, Clone)]
pub struct LoadReport {
    /// Concurrent sessions.
    pub sessions: usize,
    /// Chunks received in all, per second of the whole run.
    pub chunks_per_second: f64,
    /// Time from sending `end` to the first chunk: (p50, p99), in ms.
    pub first_chunk_ms: (f64, f64),
    /// Time from sending `end` to `complete`: (p50, p99), in ms.
    pub completion_ms: (f64, f64),
    /// Gap between consecutive chunks of one turn: (p50, p99), in ms.
    pub chunk_gap_ms: (f64, f64),
    /// Time to connect and upgrade, all clients at once: (p50, p99, max), in ms.
    pub connect_ms: (f64, f64, f64),
    /// Server CPU time for all the turns, in ms.
    pub server_cpu_ms: f64,
    /// CPU time of this process meanwhile (the clients and the scripted model, on the same
    /// cores), in ms.
    pub generator_cpu_ms: f64,
    /// Server memory per idle connected session, in KiB.
    pub idle_session_kib: f64,
    /// Server RSS with every session connected and idle, in MiB.
    pub server_rss_mib: f64,
    /// Connections that failed and turns that did not end with `complete`.
    pub failures: usize,
    /// The listen backlog the kernel allows (`net.core.somaxconn`).
    pub somaxconn: u64,
}

impl LoadReport {
    /// Server CPU per turn, in ms.
    pub fn cpu_per_turn_ms(&self) -> f64 {
        self.server_cpu_ms / self.sessions.max(1) as f64
    }

    /// The completion time the server's CPU alone explains: every turn's CPU spread over the
    /// cores.
    pub fn cpu_bound_ms(&self) -> f64 {
        self.server_cpu_ms / cores() as f64
    }

    /// The completion time the whole machine's CPU explains: the server's, the clients' and
    /// the scripted model's, spread over the cores.
    pub fn machine_bound_ms(&self) -> f64 {
        (self.server_cpu_ms + self.generator_cpu_ms) / cores() as f64
    }
}

/// CPU per turn over one range of turns of one session.
#[derive(Debug, Clone)]
pub struct TurnWindow {
    /// First and last turn (1-based, inclusive).
    pub turns: (usize, usize),
    /// Messages in the conversation at the end of the window.
    pub messages: usize,
    /// Server CPU per turn, in ms.
    pub cpu_ms: f64,
    /// Wall time per turn, as the client saw it, in ms.
    pub wall_ms: f64,
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
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

/// The CPU time all threads of `pid` ran so far, in ns.
fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|text| text.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

/// CPU time of this process so far (all threads), in ns.
fn own_cpu_ns() -> u64 {
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a live, writable `rusage`.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return 0;
    }
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (micros(usage.ru_utime) + micros(usage.ru_stime)) * 1000
}

/// `net.core.somaxconn`: the longest listen backlog the kernel grants.
fn somaxconn() -> u64 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// A server process, stopped with SIGTERM when dropped.
struct ServerProcess {
    child: Child,
    port: u16,
}

impl ServerProcess {
    /// Starts `bin` against the model at `model_base` with a HOME of its own in `home`.
    fn start(bin: &Path, model_base: &str, home: &Path, extra: &[&str]) -> anyhow::Result<Self> {
        Self::start_acknowledging(bin, model_base, home, extra, false)
    }

    /// [`start`](Self::start), in acknowledge mode when `acknowledge`.
    fn start_acknowledging(
        bin: &Path,
        model_base: &str,
        home: &Path,
        extra: &[&str],
        acknowledge: bool,
    ) -> anyhow::Result<Self> {
        std::fs::create_dir_all(home)?;
        let mut child = Command::new(bin)
            .args([
                "--port",
                "0",
                "--api_base",
                model_base,
                "--api_key",
                "x",
                "-y",
            ])
            .args(extra)
            .env("HOME", home)
            .env(
                "INTERPRETER_REQUIRE_ACKNOWLEDGE",
                if acknowledge { "true" } else { "false" },
            )
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        let stderr = child.stderr.take().context("the server's stderr")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if let Some(rest) = line.split("Server will run at http://").nth(1) {
                    let _ = tx.send(rest.rsplit(':').next().and_then(|p| p.trim().parse().ok()));
                }
            }
        });
        let port = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(Some(port)) => port,
            _ => {
                let _ = child.kill();
                bail!("oi-server did not start listening within 30 s");
            }
        };
        Ok(ServerProcess { child, port })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // SAFETY: sending SIGTERM to our own child process id (not yet reaped).
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Connects a WebSocket to `path` with TCP_NODELAY on the client's socket.
async fn connect(port: u16, path: &str) -> anyhow::Result<Ws> {
    let stream = TcpStream::connect(("127.0.0.1", port)).await?;
    stream.set_nodelay(true)?;
    let url = format!("ws://127.0.0.1:{port}{path}");
    let (ws, _) = tokio_tungstenite::client_async(url, MaybeTlsStream::Plain(stream)).await?;
    Ok(ws)
}

/// One client's turn.
struct TurnTimes {
    first_chunk: Option<Duration>,
    completion: Option<Duration>,
    gaps: Vec<Duration>,
    chunks: usize,
}

async fn send_message(socket: &mut Ws, text: &str) -> anyhow::Result<()> {
    socket
        .send(Frame::text(
            r#"{"role":"user","type":"message","start":true}"#,
        ))
        .await?;
    let content = format!(r#"{{"role":"user","type":"message","content":"{text}"}}"#);
    socket.send(Frame::text(content)).await?;
    socket
        .send(Frame::text(
            r#"{"role":"user","type":"message","end":true}"#,
        ))
        .await?;
    Ok(())
}

async fn read_turn(socket: &mut Ws, sent: Instant) -> anyhow::Result<TurnTimes> {
    let mut times = TurnTimes {
        first_chunk: None,
        completion: None,
        gaps: Vec::new(),
        chunks: 0,
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
            times.completion = Some(now - sent);
            break;
        }
    }
    Ok(times)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Where the load test's servers keep their HOME.
fn work_dir() -> PathBuf {
    PathBuf::from("target/load")
}

/// Runs the burst test with `sessions` clients against `server_bin`.
pub async fn run(
    server_bin: &Path,
    model_base: &str,
    sessions: usize,
) -> anyhow::Result<LoadReport> {
    let max = (sessions + 16).to_string();
    let server = ServerProcess::start(
        server_bin,
        model_base,
        &work_dir().join("home-burst"),
        &["--max_sessions", &max],
    )?;
    let (pid, port) = (server.pid(), server.port);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let baseline = rss_kib(pid);
    // Every client connects at the same instant.
    let start = Arc::new(tokio::sync::Barrier::new(sessions + 1));
    let connecting: Vec<_> = (0..sessions)
        .map(|i| {
            let start = start.clone();
            tokio::spawn(async move {
                start.wait().await;
                let began = Instant::now();
                let socket = connect(port, &format!("/sessions/load-{i}")).await;
                (socket, began.elapsed())
            })
        })
        .collect();
    start.wait().await;
    let mut sockets = Vec::with_capacity(sessions);
    let mut connect_times = Vec::with_capacity(sessions);
    let mut failures = 0;
    for task in connecting {
        match task.await {
            Ok((Ok(socket), took)) => {
                sockets.push(socket);
                connect_times.push(ms(took));
            }
            _ => failures += 1,
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let connected = rss_kib(pid);
    let cpu_before = cpu_ns(pid);
    let own_before = own_cpu_ns();
    let go = Arc::new(tokio::sync::Barrier::new(sockets.len() + 1));
    let started = Instant::now();
    let tasks: Vec<_> = sockets
        .into_iter()
        .map(|mut socket| {
            let go = go.clone();
            tokio::spawn(async move {
                go.wait().await;
                send_message(&mut socket, "hello there").await?;
                let sent = Instant::now();
                read_turn(&mut socket, sent).await
            })
        })
        .collect();
    go.wait().await;
    let mut first = Vec::new();
    let mut done = Vec::new();
    let mut gaps = Vec::new();
    let mut chunks = 0usize;
    for task in tasks {
        match task.await {
            Ok(Ok(times)) => {
                chunks += times.chunks;
                match times.completion {
                    Some(took) => done.push(ms(took)),
                    None => failures += 1,
                }
                first.extend(times.first_chunk.map(ms));
                gaps.extend(times.gaps.iter().copied().map(ms));
            }
            _ => failures += 1,
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    // The server's work for the turns is over once every client has its `complete`.
    let server_cpu_ms = cpu_ns(pid).saturating_sub(cpu_before) as f64 / 1e6;
    let generator_cpu_ms = own_cpu_ns().saturating_sub(own_before) as f64 / 1e6;
    drop(server);
    let max_connect = connect_times.iter().copied().fold(0.0, f64::max);
    Ok(LoadReport {
        sessions,
        chunks_per_second: chunks as f64 / elapsed.max(1e-9),
        first_chunk_ms: (percentile(&mut first, 0.5), percentile(&mut first, 0.99)),
        completion_ms: (percentile(&mut done, 0.5), percentile(&mut done, 0.99)),
        chunk_gap_ms: (percentile(&mut gaps, 0.5), percentile(&mut gaps, 0.99)),
        connect_ms: (
            percentile(&mut connect_times, 0.5),
            percentile(&mut connect_times, 0.99),
            max_connect,
        ),
        server_cpu_ms,
        generator_cpu_ms,
        idle_session_kib: connected.saturating_sub(baseline) as f64 / sessions.max(1) as f64,
        server_rss_mib: connected as f64 / 1024.0,
        failures,
        somaxconn: somaxconn(),
    })
}

/// One session, `turns` text turns one after the other: the server's CPU per turn over
/// windows of turns as the conversation grows. `history`: whether the server saves the
/// conversation after each turn (its default); without, a profile turns that off.
pub async fn cpu_per_turn(
    server_bin: &Path,
    model_base: &str,
    turns: usize,
    history: bool,
) -> anyhow::Result<Vec<TurnWindow>> {
    let dir = work_dir();
    let home = dir.join(if history {
        "home-cpu"
    } else {
        "home-cpu-nohistory"
    });
    let _ = std::fs::remove_dir_all(&home);
    let profile = dir.join("no-history.yaml");
    std::fs::create_dir_all(&dir)?;
    // The packaged default profile, plus no conversation file: a profile given with
    // `--profile` replaces `default.yaml`, and that one's `import_computer_api` lengthens
    // every request, so a profile of the one line alone measured a shorter request, not saving.
    let no_history = format!(
        "{}\nconversation_history: false\n",
        include_str!("../../crates/oi-config/profiles/default.yaml")
    );
    std::fs::write(&profile, no_history)?;
    let profile_arg = profile.to_string_lossy().into_owned();
    let extra: Vec<&str> = if history {
        Vec::new()
    } else {
        vec!["--profile", &profile_arg]
    };
    let server = ServerProcess::start(server_bin, model_base, &home, &extra)?;
    let pid = server.pid();
    let mut socket = connect(server.port, "/sessions/cpu").await?;
    // Windows that double, and the last 50 turns on their own (the cost at the end).
    let mut bounds: Vec<usize> = [50, 100, 200, 400, 800, 1600]
        .into_iter()
        .filter(|b| *b < turns.saturating_sub(50))
        .collect();
    bounds.extend([turns.saturating_sub(50), turns]);
    bounds.retain(|b| *b > 0);
    bounds.dedup();
    let mut windows = Vec::new();
    let (mut from, mut cpu, mut wall) = (1, cpu_ns(pid), Instant::now());
    for turn in 1..=turns {
        send_message(&mut socket, "hello there").await?;
        let times = read_turn(&mut socket, Instant::now()).await?;
        if times.completion.is_none() {
            bail!("turn {turn} of the CPU test did not complete");
        }
        if bounds.contains(&turn) {
            let (now_cpu, now) = (cpu_ns(pid), Instant::now());
            let count = (turn + 1 - from) as f64;
            windows.push(TurnWindow {
                turns: (from, turn),
                messages: 2 * turn,
                cpu_ms: now_cpu.saturating_sub(cpu) as f64 / 1e6 / count,
                wall_ms: ms(now - wall) / count,
            });
            (from, cpu, wall) = (turn + 1, now_cpu, now);
        }
    }
    drop(server);
    Ok(windows)
}

/// The header of the burst table.
pub const BURST_HEADER: &str = "| sessions | connect p50 / p99 / max | `end` → first chunk p50 / p99 | `end` → `complete` p50 / p99 | chunk gap p99 | server CPU per turn | server CPU ÷ cores | all CPU ÷ cores (server, clients, model) | chunks/s | server RSS, all connected | memory per idle session | failed |\n|---|---|---|---|---|---|---|---|---|---|---|---|";

/// One row of the burst table.
pub fn burst_row(r: &LoadReport) -> String {
    format!(
        "| {} | {:.1} / {:.1} / {:.1} ms | {:.1} / {:.1} ms | {:.1} / {:.1} ms | {:.2} ms | {:.3} ms | {:.0} ms | {:.0} ms | {:.0} | {:.1} MiB | {:.0} KiB | {} |",
        r.sessions,
        r.connect_ms.0,
        r.connect_ms.1,
        r.connect_ms.2,
        r.first_chunk_ms.0,
        r.first_chunk_ms.1,
        r.completion_ms.0,
        r.completion_ms.1,
        r.chunk_gap_ms.1,
        r.cpu_per_turn_ms(),
        r.cpu_bound_ms(),
        r.machine_bound_ms(),
        r.chunks_per_second,
        r.server_rss_mib,
        r.idle_session_kib,
        r.failures
    )
}

/// The CPU-per-turn table.
pub fn windows_table(with: &[TurnWindow], without: &[TurnWindow]) -> String {
    let mut out = String::from(
        "| turns | messages at the end | server CPU per turn | without saving the conversation | wall per turn |\n|---|---|---|---|---|\n",
    );
    for (i, w) in with.iter().enumerate() {
        let other = without
            .get(i)
            .map_or("–".to_owned(), |o| format!("{:.3} ms", o.cpu_ms));
        let _ = writeln!(
            out,
            "| {}–{} | {} | {:.3} ms | {other} | {:.2} ms |",
            w.turns.0, w.turns.1, w.messages, w.cpu_ms, w.wall_ms
        );
    }
    out
}

/// Every figure of issue 17 beside its goal.
pub fn goals_table(windows: &[TurnWindow], bursts: &[LoadReport]) -> String {
    let mut out = String::from("| figure | measured | goal |\n|---|---|---|\n");
    if let Some(fresh) = windows.first() {
        let _ = writeln!(
            out,
            "| server CPU per turn, fresh session (turns {}–{}) | {:.3} ms | ≤ 0.3 ms |",
            fresh.turns.0, fresh.turns.1, fresh.cpu_ms
        );
    }
    if let Some(long) = windows.last() {
        let _ = writeln!(
            out,
            "| server CPU per turn at {} messages (turns {}–{}) | {:.3} ms | ≤ 1 ms |",
            long.messages, long.turns.0, long.turns.1, long.cpu_ms
        );
    }
    for r in bursts {
        let _ = writeln!(
            out,
            "| {n} clients connecting at once: connect p99 / max | {:.1} / {:.1} ms | no SYN lost to a full backlog (< 1 000 ms; backlog = somaxconn = {}) |",
            r.connect_ms.1,
            r.connect_ms.2,
            r.somaxconn,
            n = r.sessions
        );
        let _ = writeln!(
            out,
            "| {n} turns at the same instant: failed | {} | 0 |",
            r.failures,
            n = r.sessions
        );
        let _ = writeln!(
            out,
            "| {n} turns at the same instant: first chunk p50 / p99 | {:.1} / {:.1} ms | – |",
            r.first_chunk_ms.0,
            r.first_chunk_ms.1,
            n = r.sessions
        );
        let _ = writeln!(
            out,
            "| {n} turns at the same instant: completion p50 / p99 | {:.1} / {:.1} ms | ≤ server CPU per turn × {n} ÷ {} cores = {:.0} ms (the clients and the model on the same cores: all CPU ÷ cores = {:.0} ms) |",
            r.completion_ms.0,
            r.completion_ms.1,
            cores(),
            r.cpu_bound_ms(),
            r.machine_bound_ms(),
            n = r.sessions
        );
        let _ = writeln!(
            out,
            "| {n} idle connected sessions: memory per session (RSS {:.1} MiB) | {:.0} KiB | ≤ 64 KiB |",
            r.server_rss_mib,
            r.idle_session_kib,
            n = r.sessions
        );
    }
    out
}

/// `cargo xtask load [--turns N] [SESSIONS…]`: the burst test for each number of sessions
/// (default 1, 100, 1000) and the CPU per turn over `--turns` turns (default 800), with
/// every figure beside its goal. With `--replicas N[,M…] [--store URL]`: only the burst of
/// new sessions over that many replicas sharing the store (see [`replicas`]).
pub fn main(root: &Path, args: &[String]) -> anyhow::Result<()> {
    let mut turns = 800;
    let mut sessions = Vec::new();
    let mut replica_counts = Vec::new();
    let mut store = None;
    let mut acknowledge = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--turns" {
            let value = args.next().context("--turns needs a number")?;
            turns = value
                .parse()
                .with_context(|| format!("--turns {value}: not a whole number"))?;
            continue;
        }
        if arg == "--replicas" {
            let value = args
                .next()
                .context("--replicas needs a number (or a list: 1,3)")?;
            for n in value.split(',') {
                replica_counts.push(n.trim().parse::<usize>().with_context(|| {
                    format!("--replicas {value}: give whole numbers, e.g. --replicas 1,3")
                })?);
            }
            continue;
        }
        if arg == "--ack" {
            acknowledge = true;
            continue;
        }
        if arg == "--store" {
            let value = args
                .next()
                .context("--store needs a URL: --store redis://127.0.0.1:6379/0")?;
            store = Some(value.clone());
            continue;
        }
        sessions.push(
            arg.parse::<usize>()
                .with_context(|| format!("`{arg}`: sessions are whole numbers (or --turns N)"))?,
        );
    }
    if sessions.is_empty() {
        sessions = vec![1, 100, 1000];
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let model = runtime.block_on(oi_testkit::ScriptedServer::start(
        oi_testkit::Script::calculator().without_recording(),
    ))?;
    // `OI_LOAD_SERVER=target/profiling/oi-server` measures another build (one with symbols,
    // for `perf record -p`); the release build otherwise.
    let server_bin = std::env::var_os("OI_LOAD_SERVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target/release/oi-server"));
    let base = model.base_url();
    if !replica_counts.is_empty() {
        if replica_counts.iter().any(|n| *n > 1) && store.is_none() {
            bail!("--replicas above 1 needs --store redis://HOST:PORT/DB (a running Redis)");
        }
        println!("{}", replicas::HEADER);
        for &n in &replica_counts {
            for &s in &sessions {
                eprintln!("load: {s} new sessions over {n} replica(s)");
                let setup = replicas::Setup {
                    replicas: n,
                    store: store.as_deref(),
                    acknowledge,
                };
                let report = runtime.block_on(replicas::burst(&server_bin, &base, &setup, s))?;
                println!("{}", replicas::row(&report));
            }
        }
        return Ok(());
    }
    eprintln!("load: CPU per turn over {turns} turns of one session");
    let with = runtime.block_on(cpu_per_turn(&server_bin, &base, turns, true))?;
    let without = runtime.block_on(cpu_per_turn(&server_bin, &base, turns, false))?;
    println!("{}", windows_table(&with, &without));
    println!("{BURST_HEADER}");
    let mut bursts = Vec::new();
    for n in sessions {
        eprintln!("load: {n} sessions at once");
        let report = runtime.block_on(run(&server_bin, &base, n))?;
        println!("{}", burst_row(&report));
        bursts.push(report);
    }
    let largest: Vec<LoadReport> = bursts
        .iter()
        .max_by_key(|r| r.sessions)
        .cloned()
        .into_iter()
        .collect();
    println!("\n{}", goals_table(&with, &largest));
    Ok(())
}

/// What `cargo xtask bench` adds after its load table: CPU per turn and the goals.
pub fn bench_section(windows: &[TurnWindow], bursts: &[LoadReport]) -> String {
    let largest: Vec<LoadReport> = bursts
        .iter()
        .max_by_key(|r| r.sessions)
        .cloned()
        .into_iter()
        .collect();
    format!(
        "\n### Server CPU per turn as one conversation grows\n\n{}\n### Issue 17's figures beside their goals\n\n{}",
        windows_table(windows, &[]),
        goals_table(windows, &largest)
    )
}
