//! The real `oi-server` binary as a child process (temporary HOME, chosen working directory,
//! scripted model), and raw HTTP over TCP: what an attacker on the network or a web page in
//! the user's browser would send.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A running `oi-server`; killed when dropped.
pub struct ServerProcess {
    child: Child,
    /// The port it listens on.
    pub port: u16,
    stderr: Arc<Mutex<String>>,
    _home: tempfile::TempDir,
}

/// How the server is started.
pub struct Launch<'a> {
    /// Extra arguments (after the model arguments and `--port 0`).
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// The working directory.
    pub cwd: Option<&'a Path>,
    /// The model's base URL.
    pub model: String,
    /// Shell commands run before exec (e.g. `ulimit -n 300`), through `sh`.
    pub shell_prefix: Option<String>,
    /// Whether `--api_base MODEL --api_key x` are passed (off: the test gives its own).
    pub model_flags: bool,
    /// Whether `-y` (run code without asking) is passed.
    pub auto_run: bool,
    /// The port to listen on (0: any free one).
    pub port: u16,
}

impl<'a> Launch<'a> {
    /// Default launch against the model at `model`.
    pub fn new(model: &str) -> Self {
        Launch {
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            model: model.to_owned(),
            shell_prefix: None,
            model_flags: true,
            auto_run: true,
            port: 0,
        }
    }

    /// Without `-y`: code waits for the user's approval.
    pub fn asking(mut self) -> Self {
        self.auto_run = false;
        self
    }

    /// Without `--api_base MODEL --api_key x`: the test's own arguments say where the model
    /// is and with which key.
    pub fn without_model_flags(mut self) -> Self {
        self.model_flags = false;
        self
    }

    /// Listens on `port` (instead of any free one).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Adds arguments.
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|a| (*a).to_owned()));
        self
    }

    /// Adds an environment variable.
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sets the working directory.
    pub fn cwd(mut self, dir: &'a Path) -> Self {
        self.cwd = Some(dir);
        self
    }

    /// Runs `prefix` in `sh` before exec-ing the server.
    pub fn shell_prefix(mut self, prefix: &str) -> Self {
        self.shell_prefix = Some(prefix.to_owned());
        self
    }

    fn command(&self, home: &Path) -> Command {
        let bin = env!("CARGO_BIN_EXE_oi-server");
        let mut args: Vec<String> = vec!["--port".into(), self.port.to_string()];
        if self.model_flags {
            args.extend([
                "--api_base".into(),
                self.model.clone(),
                "--api_key".into(),
                "x".into(),
            ]);
        }
        if self.auto_run {
            args.push("-y".into());
        }
        args.extend(self.args.iter().cloned());
        let mut command = match &self.shell_prefix {
            Some(prefix) => {
                let mut c = Command::new("sh");
                c.arg("-c")
                    .arg(format!("{prefix} && exec \"$0\" \"$@\""))
                    .arg(bin);
                c
            }
            None => Command::new(bin),
        };
        command.args(&args);
        for (name, _) in std::env::vars() {
            let backtrace = name == "RUST_BACKTRACE" || name == "RUST_LIB_BACKTRACE";
            if name.starts_with("INTERPRETER_") || name.starts_with("OI_") || backtrace {
                command.env_remove(&name);
            }
        }
        command
            .env("HOME", home)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(cwd) = self.cwd {
            command.current_dir(cwd);
        }
        command
    }

    /// Starts the server and waits until it listens.
    pub fn start(self) -> ServerProcess {
        match self.try_start() {
            Ok(server) => server,
            Err((status, stderr)) => panic!("oi-server exited ({status}): {stderr}"),
        }
    }

    /// Starts the server; `Err` with its exit status and stderr if it exits instead.
    pub fn try_start(self) -> Result<ServerProcess, (ExitStatus, String)> {
        let home = tempfile::tempdir().unwrap();
        let mut child = self.command(home.path()).spawn().expect("oi-server starts");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        let pipe = child.stderr.take().unwrap();
        let log = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("Server will run at http://").nth(1) {
                    let port = rest.rsplit(':').next().and_then(|p| p.trim().parse().ok());
                    let _ = port_tx.send(port);
                }
                let mut log = log.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(port)) = port_rx.recv_timeout(Duration::from_millis(20)) {
                return Ok(ServerProcess {
                    child,
                    port,
                    stderr,
                    _home: home,
                });
            }
            if let Ok(Some(status)) = child.try_wait() {
                std::thread::sleep(Duration::from_millis(100));
                let text = stderr.lock().unwrap().clone();
                return Err((status, text));
            }
            assert!(Instant::now() < deadline, "oi-server did not start in time");
        }
    }
}

impl ServerProcess {
    /// What the server printed to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// How many descriptors the server has open.
    pub fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .map(|dir| dir.count())
            .unwrap_or(0)
    }

    /// The server's resident memory, in KiB.
    pub fn rss_kib(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find(|l| l.starts_with("VmRSS:"))
                    .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
            })
            .unwrap_or(0)
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer read off a raw socket.
#[derive(Debug)]
pub struct RawResponse {
    /// The status code (0 when none could be read).
    pub status: u16,
    /// The head and body as text.
    pub text: String,
}

impl RawResponse {
    /// The body (after the blank line).
    pub fn body(&self) -> &str {
        self.text.split_once("\r\n\r\n").map_or("", |(_, b)| b)
    }
}

/// Sends `request` (raw bytes) to `addr` and reads the answer until the server closes or
/// 10 s pass.
pub async fn raw(addr: &str, request: &str) -> RawResponse {
    let mut stream = TcpStream::connect(addr).await.expect("connects");
    stream.write_all(request.as_bytes()).await.unwrap();
    read_response(&mut stream).await
}

/// Reads an answer until the server closes or 10 s pass.
pub async fn read_response(stream: &mut TcpStream) -> RawResponse {
    let mut bytes = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut bytes)).await;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    RawResponse { status, text }
}

/// A GET with these extra header lines (each `Name: value`), closing after the answer.
pub fn get(path: &str, headers: &[&str]) -> String {
    let mut request = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    request
}

/// A POST of a JSON `body` with these extra header lines, closing after the answer.
pub fn post(path: &str, headers: &[&str], body: &str) -> String {
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n",
        body.len()
    );
    for header in headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    request.push_str(body);
    request
}

/// Polls `check` every 20 ms until it holds or `within` passes.
pub async fn eventually(within: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    check()
}
