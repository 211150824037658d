//! The `oi-server` processes under soak: started with a temporary HOME, watched, stopped
//! with SIGTERM as an operator would.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// A running server.
pub struct Server {
    /// `auto` or `approve`.
    pub name: &'static str,
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Starts `bin` with `args` (after the model's), HOME and the working directory in `dir`,
    /// and the extra environment `env`; waits until it listens.
    pub fn start(
        name: &'static str,
        bin: &Path,
        model: &str,
        args: &[&str],
        env: &[(&str, &str)],
        dir: &Path,
    ) -> anyhow::Result<Server> {
        let home = dir.join(format!("home-{name}"));
        std::fs::create_dir_all(&home)?;
        let mut command = Command::new(bin);
        command
            .args(["--port", "0", "--api_base", model, "--api_key", "soak"])
            .args(args)
            .env("HOME", &home)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (name, _) in std::env::vars() {
            if name.starts_with("INTERPRETER_") || name.starts_with("OI_") {
                command.env_remove(&name);
            }
        }
        command.envs(env.iter().copied());
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        let pipe = child.stderr.take().context("the server's stderr")?;
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (port_tx, port_rx) = std::sync::mpsc::channel();
        let lines = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("Server will run at http://").nth(1) {
                    let port = rest
                        .rsplit(':')
                        .next()
                        .and_then(|p| p.trim().parse::<u16>().ok());
                    let _ = port_tx.send(port);
                }
                if let Ok(mut lines) = lines.lock() {
                    lines.push(line);
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(port)) = port_rx.recv_timeout(Duration::from_millis(50)) {
                return Ok(Server {
                    name,
                    child,
                    addr: format!("127.0.0.1:{port}"),
                    stderr,
                });
            }
            if let Ok(Some(status)) = child.try_wait() {
                std::thread::sleep(Duration::from_millis(100));
                let said = stderr.lock().map(|l| l.join("\n")).unwrap_or_default();
                bail!("oi-server ({name}) exited at start ({status}): {said}");
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                bail!("oi-server ({name}) did not start listening within 30 s");
            }
        }
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGTERM and waits up to `grace` for the exit; true when it exited by itself.
    pub fn stop(&mut self, grace: Duration) -> bool {
        // SAFETY: signalling our own child, which has not been reaped (`try_wait` below
        // reaps it only after it exits).
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        false
    }

    /// The last lines it printed.
    pub fn last_words(&self, lines: usize) -> String {
        let all = self.stderr.lock().map(|l| l.clone()).unwrap_or_default();
        let skip = all.len().saturating_sub(lines);
        all[skip..].join("\n")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
