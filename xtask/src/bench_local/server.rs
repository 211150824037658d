//! The reference: llama.cpp's own server (`llama-server`, from the `xllamacpp` wheel on PyPI)
//! in a venv under `target/`, on the same GGUF with the same threads and context, started
//! once and kept warm (model loaded, prompt cache on), as a resident model server is.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};

/// The wheel (a prebuilt llama.cpp server; see /work/shared/spec/local-model.md).
const WHEEL: &str = "xllamacpp==2026.10.11549";

/// Starts `llama-server` in-process in Python and prints `ready SECONDS` once it listens.
const LAUNCHER: &str = r#"import sys, time
started = time.time()
import xllamacpp as xlc
model, n_ctx, port, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
p = xlc.CommonParams()
p.model.path = model
p.n_ctx = n_ctx
p.n_parallel = 1
p.use_jinja = True
p.hostnames = ["127.0.0.1"]
p.port = port
p.cpuparams.n_threads = threads
p.cpuparams_batch.n_threads = threads
p.model_alias = {"local"}
server = xlc.Server(p)
print(f"ready {time.time() - started:.3f}", flush=True)
while True:
    time.sleep(3600)
"#;

/// A running reference server.
pub struct Server {
    child: Child,
    /// Its base URL (`http://127.0.0.1:PORT/v1`).
    pub url: String,
    /// Process start to listening (Python, the model load, llama.cpp's warm-up run).
    pub start_s: f64,
    log: PathBuf,
    read: u64,
}

/// One request as the server's log reports it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerCall {
    /// Prompt tokens evaluated (not taken from its cache).
    pub evaluated: f64,
    /// Evaluating them.
    pub prompt_s: f64,
    /// Tokens generated.
    pub generated: f64,
    /// Generating them.
    pub generation_s: f64,
}

/// The venv's Python with the wheel installed (once); `None`, with the reason printed, when
/// pip cannot install it.
pub fn python(work: &Path) -> Option<PathBuf> {
    let venv = work.join("llamacpp-venv");
    let python = venv.join("bin").join("python");
    let importable = |python: &Path| {
        Command::new(python)
            .args(["-c", "import xllamacpp"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if importable(&python) {
        return Some(python);
    }
    println!(
        "installing llama.cpp's server ({WHEEL}) into {}…",
        venv.display()
    );
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success());
    let installed = made
        && Command::new(venv.join("bin").join("pip"))
            .args(["install", "-q", WHEEL])
            .status()
            .is_ok_and(|s| s.success());
    if installed && importable(&python) {
        Some(python)
    } else {
        println!(
            "could not install {WHEEL} (no python3 venv or no PyPI): the llama.cpp column is left out"
        );
        None
    }
}

impl Server {
    /// Starts the server on `model` with `n_ctx` and `threads` (under SCHED_FIFO when
    /// `realtime`); waits until it listens.
    pub fn start(
        python: &Path,
        work: &Path,
        model: &Path,
        n_ctx: u32,
        threads: usize,
        realtime: bool,
    ) -> anyhow::Result<Server> {
        let launcher = work.join("serve_llamacpp.py");
        std::fs::write(&launcher, LAUNCHER)?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let log = work.join("llamacpp-server.log");
        let log_file = std::fs::File::create(&log)?;
        let mut command = if realtime {
            let mut chrt = Command::new("chrt");
            chrt.args(["-f", "50"]).arg(python);
            chrt
        } else {
            Command::new(python)
        };
        let mut child = command
            .arg(&launcher)
            .arg(model)
            .arg(n_ctx.to_string())
            .arg(port.to_string())
            .arg(threads.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log_file)
            .spawn()
            .context("starting llama.cpp's server")?;
        let stdout = child.stdout.take().context("the server's stdout")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = match rx.recv_timeout(Duration::from_secs(180)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                bail!(
                    "llama.cpp's server did not start within 180 s (log: {})",
                    log.display()
                );
            }
        };
        let Some(start_s) = line
            .strip_prefix("ready ")
            .and_then(|s| s.trim().parse::<f64>().ok())
        else {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "llama.cpp's server failed to start (log: {})",
                log.display()
            );
        };
        Ok(Server {
            child,
            url: format!("http://127.0.0.1:{port}/v1"),
            start_s,
            log,
            read: 0,
        })
    }

    /// The requests the server finished since the last call.
    pub fn new_calls(&mut self) -> Vec<ServerCall> {
        // The log line of a request comes just after its reply.
        std::thread::sleep(Duration::from_millis(100));
        let mut text = String::new();
        if let Ok(mut file) = std::fs::File::open(&self.log) {
            let _ = file.seek(SeekFrom::Start(self.read));
            let _ = file.read_to_string(&mut text);
        }
        self.read += text.len() as u64;
        parse_log(&text)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `prompt eval time = X ms / N tokens` and `eval time = Y ms / G tokens` pairs.
fn parse_log(text: &str) -> Vec<ServerCall> {
    let mut calls = Vec::new();
    let mut current = ServerCall::default();
    for line in text.lines() {
        let Some((ms, tokens)) = timing(line) else {
            continue;
        };
        if line.contains("prompt eval time") {
            current = ServerCall {
                evaluated: tokens,
                prompt_s: ms / 1000.0,
                ..ServerCall::default()
            };
        } else {
            current.generated = tokens;
            current.generation_s = ms / 1000.0;
            calls.push(current);
        }
    }
    calls
}

/// `… eval time =   775.36 ms /    25 tokens …` → (775.36, 25).
fn timing(line: &str) -> Option<(f64, f64)> {
    let rest = line.split_once("eval time =")?.1;
    let (ms, rest) = rest.split_once("ms /")?;
    let tokens = rest.split_whitespace().next()?;
    Some((ms.trim().parse().ok()?, tokens.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_llama_server_timings() {
        let log = "0.20.754.201 I slot print_timing: id  0 | task 0 | prompt eval time =     775.36 ms /    25 tokens (   31.01 ms per token,    32.24 tokens per second)\n\
                   0.20.754.214 I slot print_timing: id  0 | task 0 |        eval time =   11993.77 ms /    50 tokens (  244.77 ms per token,     4.09 tokens per second)\n";
        let calls = parse_log(log);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].evaluated, 25.0);
        assert!((calls[0].generation_s - 11.99377).abs() < 1e-9);
    }
}
