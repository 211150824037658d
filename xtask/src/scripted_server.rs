//! `cargo xtask scripted-server [--host H] [--port P] [--script FILE] [--requests FILE]`: the
//! scripted OpenAI-compatible model server until CTRL-C (or SIGTERM).
//!
//! It prints the address it really listens on (`--port 0` picks a free port) as its first line
//! on stdout: `scripted model server (…) at http://127.0.0.1:PORT/v1 — CTRL-C to stop`.
//! `--script FILE` answers from a JSON script (see [`crate::script_file`]) instead of the
//! calculator; `--requests FILE` keeps FILE up to date with the requests received so far (a
//! JSON list of `{"path", "body"}`), for tests that check what a client sent.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use oi_testkit::{Script, ScriptedServer};

use crate::flag_value;

/// Runs the command.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let host = flag_value(args, "--host").unwrap_or_else(|| "127.0.0.1".to_owned());
    let port = flag_value(args, "--port").unwrap_or_else(|| "8787".to_owned());
    let addr: SocketAddr = format!("{host}:{port}")
        .parse()
        .with_context(|| format!("`{host}:{port}` is not an address"))?;
    let script_path = flag_value(args, "--script").map(PathBuf::from);
    let (script, what) = match &script_path {
        Some(path) => (
            crate::script_file::load(path)?,
            format!("script {}", path.display()),
        ),
        None => (Script::calculator(), "calculator".to_owned()),
    };
    let requests = flag_value(args, "--requests").map(PathBuf::from);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(serve(addr, script, &what, requests))
}

async fn serve(
    addr: SocketAddr,
    script: Script,
    what: &str,
    requests: Option<PathBuf>,
) -> anyhow::Result<()> {
    let server = ScriptedServer::start_on(addr, script)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let mut stdout = std::io::stdout();
    writeln!(
        stdout,
        "scripted model server ({what}) at {} — CTRL-C to stop",
        server.base_url()
    )?;
    stdout.flush()?;
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut written = usize::MAX;
    loop {
        if let Some(path) = &requests {
            written = record(&server, path, written)?;
        }
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            _ = terminate.recv() => break,
            () = tokio::time::sleep(Duration::from_millis(10)) => {}
        }
    }
    if let Some(path) = &requests {
        record(&server, path, usize::MAX)?;
    }
    Ok(())
}

/// Writes the requests received to `path` (atomically) when there are more than `written`.
fn record(server: &ScriptedServer, path: &Path, written: usize) -> anyhow::Result<usize> {
    let requests = server.requests();
    if requests.len() == written {
        return Ok(written);
    }
    let list: Vec<serde_json::Value> = requests
        .iter()
        .map(|r| serde_json::json!({ "path": r.path, "body": r.body }))
        .collect();
    let partial = path.with_extension("partial");
    std::fs::write(&partial, serde_json::to_vec(&list)?)
        .with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, path).with_context(|| format!("writing {}", path.display()))?;
    Ok(requests.len())
}
