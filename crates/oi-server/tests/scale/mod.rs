//! Many replicas for real: a `redis-server` (AOF on, fsync on every write) and nginx (the
//! configuration of deploy/nginx.conf, on loopback ports) started by the test in a temporary
//! directory, and real `oi-server` replicas over them.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::Ws;
pub use crate::process::{Launch, ServerProcess};

/// A port free now on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether `program` can be run; prints why the test skips when not.
pub fn have(program: &str) -> bool {
    let found = Command::new(program)
        .arg("-v")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !found {
        oi_testkit::skipped!(
            "skipped: {program} is not installed (Debian: apt-get install redis-server nginx)"
        );
    }
    found
}

/// A redis-server of the test's own.
pub struct Redis {
    child: Option<Child>,
    /// Its port.
    pub port: u16,
    dir: PathBuf,
}

impl Redis {
    /// Starts redis-server in `dir` with AOF on, and waits until it answers.
    pub fn start(dir: &Path) -> Redis {
        let mut redis = Redis {
            child: None,
            port: free_port(),
            dir: dir.to_owned(),
        };
        redis.spawn();
        redis
    }

    fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--dir", self.dir.to_str().unwrap()])
            .args([
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
            ])
            .args(["--daemonize", "no", "--logfile", ""])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.command("PING") != "+PONG" {
            assert!(Instant::now() < deadline, "redis-server did not answer");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `redis://127.0.0.1:PORT/0`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Sends one inline command; the answer's first line, or a bulk string's text (empty
    /// when unreachable).
    pub fn command(&self, command: &str) -> String {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return String::new();
        };
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        if stream
            .write_all(format!("{command}\r\n").as_bytes())
            .is_err()
        {
            return String::new();
        }
        let mut answer = Vec::new();
        let mut byte = [0u8; 1];
        while stream.read(&mut byte).is_ok_and(|n| n == 1) {
            if byte[0] == b'\n' {
                break;
            }
            answer.push(byte[0]);
        }
        let line = String::from_utf8_lossy(&answer).trim_end().to_owned();
        // A bulk string: `$N` then N bytes.
        let Some(len) = line.strip_prefix('$').and_then(|n| n.parse::<usize>().ok()) else {
            return line;
        };
        let mut bulk = vec![0u8; len + 2];
        if stream.read_exact(&mut bulk).is_err() {
            return String::new();
        }
        bulk.truncate(len);
        String::from_utf8_lossy(&bulk).into_owned()
    }

    /// Waits until `check` holds for the answer to `command` (up to 10 s).
    pub async fn wait_for(&self, command: &str, check: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let answer = self.command(command);
            if check(&answer) {
                return;
            }
            assert!(Instant::now() < deadline, "{command}: still {answer:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Kills redis-server (SIGKILL: nothing is flushed at exit) and starts it again on the
    /// same port and directory.
    pub fn restart(&mut self) {
        self.stop();
        self.spawn();
    }

    /// Kills redis-server (SIGKILL).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// nginx in front of the replicas: consistent hash on the session id, WebSocket upgrade,
/// fail-over to the next replica.
pub struct Nginx {
    child: Child,
    /// Its port.
    pub port: u16,
}

/// The test's nginx.conf: deploy/nginx.conf itself, with loopback addresses for the replicas
/// and the front, and every file nginx writes in `dir`.
pub fn nginx_conf(dir: &Path, port: u16, replicas: &[u16]) -> String {
    let deployed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/nginx.conf");
    let deployed = std::fs::read_to_string(deployed).expect("deploy/nginx.conf");
    let dir = dir.to_str().unwrap();
    let servers: String = replicas
        .iter()
        .map(|p| format!("        server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;\n"))
        .collect();
    let mut conf = String::new();
    let mut servers = Some(servers);
    for line in deployed.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("server oi-") {
            conf.push_str(&servers.take().unwrap_or_default());
            continue;
        }
        match trimmed {
            "worker_processes auto;" => conf.push_str(&format!(
                "worker_processes 1;\npid {dir}/nginx.pid;\nerror_log {dir}/error.log warn;\n"
            )),
            "listen 8080;" => conf.push_str(&format!("        listen 127.0.0.1:{port};\n")),
            "http {" => conf.push_str(&format!(
                "http {{\n    client_body_temp_path {dir}/body;\n    proxy_temp_path {dir}/proxy;\n    \
                 fastcgi_temp_path {dir}/fastcgi;\n    uwsgi_temp_path {dir}/uwsgi;\n    \
                 scgi_temp_path {dir}/scgi;\n"
            )),
            _ => {
                conf.push_str(line);
                conf.push('\n');
            }
        }
    }
    assert!(
        servers.is_none(),
        "deploy/nginx.conf lists its replicas as `server oi-N`"
    );
    conf
}

impl Nginx {
    /// Starts nginx on `port` in front of `replicas`, and waits until it listens.
    pub fn start(dir: &Path, port: u16, replicas: &[u16]) -> Nginx {
        let conf = dir.join("nginx.conf");
        std::fs::write(&conf, nginx_conf(dir, port, replicas)).unwrap();
        let child = Command::new("nginx")
            .arg("-p")
            .arg(dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(&conf)
            // One process, no workers: killing it (also when the test dies) leaves nothing
            // behind; the proxying is the same.
            .args(["-g", "daemon off; master_process off;"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("nginx starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nginx did not listen: {}",
                std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Nginx { child, port }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts one replica over `store`, in acknowledge mode, with leases of `lease_ms`, answering
/// to `front` (the load balancer's host:port) too.
pub fn replica(model: &str, store: &str, front: &str, lease_ms: u64) -> ServerProcess {
    let lease = lease_ms.to_string();
    Launch::new(model)
        .args(&["--store", store, "--lease_ttl_ms", &lease])
        .args(&["--allowed_host", front])
        .env("INTERPRETER_REQUIRE_ACKNOWLEDGE", "true")
        .start()
}

/// Sends `signal` (e.g. "KILL", "TERM") to `pid`.
pub fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Opens a WebSocket at `ws://ADDR/sessions/ID`.
pub async fn open(addr: &str, id: &str) -> Result<Ws, String> {
    tokio_tungstenite::connect_async(format!("ws://{addr}/sessions/{id}"))
        .await
        .map(|(ws, _)| ws)
        .map_err(|e| e.to_string())
}

/// Opens a WebSocket through the load balancer, retrying refusals (409 while the lease of a
/// dead owner runs out, 502/503 while nginx finds a live replica) for up to `within`; also
/// returns the refusals seen.
pub async fn open_retrying(addr: &str, id: &str, within: Duration) -> (Ws, Vec<String>) {
    let deadline = Instant::now() + within;
    let mut refusals = Vec::new();
    loop {
        match open(addr, id).await {
            Ok(ws) => return (ws, refusals),
            Err(e) => {
                assert!(
                    Instant::now() < deadline,
                    "no replica served {id} in time: {refusals:?} {e}"
                );
                refusals.push(e);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// Which of `replicas` serves session `id` now (`GET /sessions/{id}` answers 200 only there).
pub async fn owner(replicas: &[ServerProcess], id: &str) -> Option<usize> {
    let client = reqwest::Client::new();
    for (i, replica) in replicas.iter().enumerate() {
        let url = format!("http://{}/sessions/{id}", replica.addr());
        if let Ok(response) = client.get(url).send().await {
            if response.status().is_success() {
                return Some(i);
            }
        }
    }
    None
}
