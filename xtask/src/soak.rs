//! `cargo xtask soak [--clients N] [--seconds S] [--ack] [--seed N] [--max-rss-mib M]`: many
//! clients on two real `oi-server` processes for a while, each looping over random actions on
//! its own session, every invariant checked as they go (issue 18).
//!
//! - The `auto` server runs `-y` in interrupt mode: text turns, Python turns, a 30 s sleep
//!   stopped at a random point, 300 000-character floods, sockets dropped or closed mid-turn
//!   and a new connection at once, sessions deleted while their code runs, model faults (an
//!   HTTP error, a reply broken off), and close handshakes (as Python's `websockets` closes)
//!   while code runs silently or while the model streams, then a new connection to the
//!   session at once and a message that must be answered (issue 22).
//! - The `approve` server asks before running code, in queue mode: `go`, `stop` at an
//!   approval, two messages back to back, a message queued behind a streaming one and the
//!   socket dropped.
//! - A third of the clients are Python's `websockets` library (a driver process in a venv
//!   under `target/`), the others tokio-tungstenite; `--ack` runs both servers in
//!   acknowledge mode, every chunk acknowledged and checked to arrive exactly once.
//!
//! Checked: every input answered by the `complete` naming it (or an error chunk then that
//! `complete`), in order; a client's own messages whole and exactly what the model and the
//! code produced (no chunk lost, doubled or reordered); close handshakes answered within a
//! second, stops within three; pings answered; server RSS, descriptors and processes
//! bounded; no process under a server left once it has exited after SIGTERM. It prints a
//! summary table and fails on any violation.

mod actions;
mod check;
mod client;
mod link;
mod model;
mod servers;
mod tally;
mod watch;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use actions::{APPROVE, AUTO, Action};
use client::{ANSWER_TIMEOUT, Client, Target};
use link::{Library, Link};
use servers::Server;
use tally::Tally;
use watch::Usage;

/// The Python client, written next to its venv at run time.
const CLIENT_PY: &str = include_str!("soak/client.py");

/// How the soak runs.
#[derive(Debug, Clone)]
struct Options {
    clients: usize,
    seconds: u64,
    ack: bool,
    seed: u64,
    max_rss_mib: u64,
}

fn options(args: &[String]) -> anyhow::Result<Options> {
    let mut options = Options {
        clients: 12,
        seconds: 180,
        ack: false,
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1),
        max_rss_mib: 512,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> anyhow::Result<u64> {
            let value = args
                .next()
                .with_context(|| format!("{name} needs a number"))?;
            value
                .parse()
                .with_context(|| format!("{name} {value}: not a whole number"))
        };
        match arg.as_str() {
            "--clients" => options.clients = usize::try_from(number("--clients")?)?,
            "--seconds" => options.seconds = number("--seconds")?,
            "--seed" => options.seed = number("--seed")?,
            "--max-rss-mib" => options.max_rss_mib = number("--max-rss-mib")?,
            "--ack" => options.ack = true,
            other => bail!(
                "unknown soak option `{other}`: use --clients N, --seconds S, --ack, --seed N, --max-rss-mib M"
            ),
        }
    }
    if options.clients == 0 {
        bail!("--clients must be at least 1");
    }
    Ok(options)
}

/// Builds the release server.
fn build(root: &Path) -> anyhow::Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let ok = Command::new(cargo)
        .current_dir(root)
        .args(["build", "--quiet", "--release", "-p", "oi-server"])
        .status()?
        .success();
    if !ok {
        bail!("building the release oi-server failed");
    }
    Ok(root.join("target/release/oi-server"))
}

/// A Python with `websockets` in `target/soak-venv` (made once), and the client script; or
/// why there is none.
fn python(root: &Path, dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let venv = root.join("target/soak-venv");
    let interpreter = venv.join("bin/python");
    let has = |python: &Path| {
        Command::new(python)
            .args(["-c", "import websockets.asyncio.client"])
            .status()
            .is_ok_and(|s| s.success())
    };
    if !has(&interpreter) {
        eprintln!(
            "soak: making a venv with Python's websockets in {}",
            venv.display()
        );
        let made = Command::new("python3")
            .arg("-m")
            .arg("venv")
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success());
        if !made {
            return Err("python3 -m venv failed (is python3 with venv installed?)".to_owned());
        }
        let installed = Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "websockets>=13"])
            .status()
            .is_ok_and(|s| s.success());
        if !installed || !has(&interpreter) {
            return Err("pip could not install websockets (no network?)".to_owned());
        }
    }
    let script = dir.join("client.py");
    std::fs::write(&script, CLIENT_PY).map_err(|e| format!("writing {}: {e}", script.display()))?;
    Ok((interpreter, script))
}

/// Runs the soak.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let options = options(args)?;
    let root = std::env::current_dir()?;
    let bin = build(&root)?;
    let dir = root.join("target/soak");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let python = match python(&root, &dir) {
        Ok(found) => Some(found),
        Err(why) => {
            eprintln!("soak: WARNING: no Python websockets clients: {why}");
            None
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(soak(&options, &bin, &dir, python))
}

/// One server with its usage.
struct Watched {
    server: Server,
    usage: Arc<Mutex<Usage>>,
    clients: usize,
}

async fn soak(
    options: &Options,
    bin: &Path,
    dir: &Path,
    python: Option<(PathBuf, PathBuf)>,
) -> anyhow::Result<()> {
    let model = oi_testkit::ScriptedServer::start(model::script()).await?;
    let sessions = (options.clients + 8).to_string();
    let ack: Vec<(&str, &str)> = if options.ack {
        vec![("INTERPRETER_REQUIRE_ACKNOWLEDGE", "true")]
    } else {
        Vec::new()
    };
    let base = model.base_url();
    let auto = Server::start(
        "auto",
        bin,
        &base,
        &["-y", "--max_sessions", &sessions],
        &ack,
        dir,
    )?;
    let approve = Server::start(
        "approve",
        bin,
        &base,
        &["--queue", "--max_sessions", &sessions],
        &ack,
        dir,
    )?;
    let targets = [
        Target {
            name: auto.name,
            addr: auto.addr.clone(),
        },
        Target {
            name: approve.name,
            addr: approve.addr.clone(),
        },
    ];
    let mut watched: Vec<Watched> = [auto, approve]
        .into_iter()
        .map(|server| Watched {
            server,
            usage: Arc::default(),
            clients: 0,
        })
        .collect();
    let done = Arc::new(AtomicBool::new(false));
    let watchers: Vec<_> = watched
        .iter()
        .map(|w| {
            let (pid, usage, done) = (w.server.pid(), w.usage.clone(), done.clone());
            tokio::spawn(async move {
                while !done.load(Ordering::SeqCst) {
                    let sample = tokio::task::spawn_blocking({
                        let usage = usage.clone();
                        move || {
                            if let Ok(mut usage) = usage.lock() {
                                usage.sample(pid);
                            }
                        }
                    });
                    let _ = sample.await;
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
            })
        })
        .collect();

    let tally = Arc::new(Mutex::new(Tally::default()));
    let until = Instant::now() + Duration::from_secs(options.seconds);
    let mut tasks = Vec::new();
    let mut libraries = Vec::new();
    for index in 0..options.clients {
        let on_approve = index % 4 == 3;
        let target = targets[usize::from(on_approve)].clone();
        watched[usize::from(on_approve)].clients += 1;
        let library = if python.is_some() && index % 3 == 1 {
            Library::Python
        } else {
            Library::Rust
        };
        libraries.push(library);
        let link = Link::new(
            library,
            python.as_ref().map(|(p, s)| (p.as_path(), s.as_path())),
        )?;
        let seed = options.seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let client = Client::new(index, link, target, options.ack, seed, tally.clone());
        let actions: &'static [(Action, u64)] = if on_approve { &APPROVE } else { &AUTO };
        tasks.push(tokio::spawn(client_loop(client, actions, until)));
    }
    let python_clients = libraries.iter().filter(|l| **l == Library::Python).count();
    eprintln!(
        "soak: {} clients ({} Python websockets, {} tokio-tungstenite) for {} s{}; seed {}",
        options.clients,
        python_clients,
        options.clients - python_clients,
        options.seconds,
        if options.ack {
            ", acknowledge mode"
        } else {
            ""
        },
        options.seed
    );
    for task in tasks {
        let grace = ANSWER_TIMEOUT * 3;
        let left = (until + grace).saturating_duration_since(Instant::now());
        if tokio::time::timeout(left, task).await.is_err() {
            tally
                .lock()
                .map_err(|_| anyhow::anyhow!("tally"))?
                .violation("a client did not finish its last action in time".to_owned());
        }
    }
    done.store(true, Ordering::SeqCst);
    for watcher in watchers {
        let _ = watcher.await;
    }
    let mut tally = match Arc::try_unwrap(tally) {
        Ok(mutex) => mutex.into_inner().unwrap_or_default(),
        Err(shared) => std::mem::take(&mut *shared.lock().map_err(|_| anyhow::anyhow!("tally"))?),
    };
    let resources = finish_servers(&mut watched, options, &mut tally).await;
    if tally.unaccounted() > 0 {
        let missing = tally.unaccounted();
        tally.violation(format!(
            "{missing} inputs were neither answered nor given up (their connections failed)"
        ));
    }
    drop(model);
    println!(
        "\n## Soak: {} clients, {} s{}\n",
        options.clients,
        options.seconds,
        if options.ack {
            ", acknowledge mode"
        } else {
            ""
        }
    );
    println!("{}", tally.table());
    println!("{resources}");
    let violations = tally.violations();
    if violations.is_empty() {
        println!("violations: 0");
        return Ok(());
    }
    println!("violations: {}", violations.len());
    for violation in violations.iter().take(40) {
        println!("- {violation}");
    }
    bail!("the soak found {} violations", violations.len())
}

/// Stops each server with SIGTERM, checks what it used and that nothing it started lives on;
/// returns the resource table.
async fn finish_servers(watched: &mut [Watched], options: &Options, tally: &mut Tally) -> String {
    let mut table = String::from(
        "| server | clients | RSS first / max / last (MiB) | max open fds | max process groups (processes) under it | processes seen | left after exit |\n|---|---|---|---|---|---|---|\n",
    );
    for w in watched.iter_mut() {
        let exited = w.server.stop(Duration::from_secs(10));
        if !exited {
            tally.violation(format!(
                "{}: the server did not exit within 10 s of SIGTERM: {}",
                w.server.name,
                w.server.last_words(5)
            ));
        }
        let usage = w.usage.lock().map(|u| u.clone()).unwrap_or_default();
        let left = usage.left_after_exit(Duration::from_secs(3)).await;
        if !left.is_empty() {
            tally.violation(format!(
                "{}: {} processes started under the server still run after it exited: {:?}",
                w.server.name,
                left.len(),
                left
            ));
        }
        let mib = |kib: u64| kib as f64 / 1024.0;
        if usage.max_rss_kib > options.max_rss_mib * 1024 {
            tally.violation(format!(
                "{}: RSS reached {:.0} MiB (bound {} MiB)",
                w.server.name,
                mib(usage.max_rss_kib),
                options.max_rss_mib
            ));
        }
        let fd_bound = 64 + 16 * w.clients;
        if usage.max_fds > fd_bound {
            tally.violation(format!(
                "{}: {} descriptors open at once (bound {fd_bound})",
                w.server.name, usage.max_fds
            ));
        }
        // One language session (a process group) per session — one per client, and
        // `default` — plus one being replaced after a kill for each.
        let group_bound = 2 * (w.clients + 1);
        if usage.max_groups > group_bound {
            tally.violation(format!(
                "{}: {} language sessions (process groups) under the server at once (bound {group_bound}); the most processes: {}",
                w.server.name, usage.max_groups, usage.max_children_names
            ));
        }
        table.push_str(&format!(
            "| {} | {} | {:.1} / {:.1} / {:.1} | {} | {} ({}) | {} | {} |\n",
            w.server.name,
            w.clients,
            mib(usage.first_rss_kib),
            mib(usage.max_rss_kib),
            mib(usage.last_rss_kib),
            usage.max_fds,
            usage.max_groups,
            usage.max_children,
            usage.seen.len(),
            left.len()
        ));
    }
    table
}

/// One client's loop: random actions until `until`, then a clean close.
async fn client_loop(mut client: Client, actions: &'static [(Action, u64)], until: Instant) {
    let weights: Vec<u64> = actions.iter().map(|(_, w)| *w).collect();
    if !connect(&mut client).await {
        return;
    }
    while Instant::now() < until {
        let action = actions[client.rng.pick(&weights)].0;
        let outcome = action.run(&mut client).await;
        let (name, library) = (client.target.name, client.library());
        client
            .tally_mut()
            .run(name, action.name(), library, outcome.ok, outcome.latency);
        if outcome.reconnect {
            client.link.forget().await;
            if !connect(&mut client).await {
                return;
            }
        }
    }
    let _ = client.close().await;
}

/// Connects, retrying a little; false (and a violation) when it cannot.
async fn connect(client: &mut Client) -> bool {
    let mut last = String::new();
    for _ in 0..5 {
        match client.connect().await {
            Ok(()) => return true,
            Err(error) => last = format!("{error:#}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    client.violation("connect", format!("could not connect: {last}"));
    false
}
