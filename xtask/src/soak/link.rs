//! A soak client's WebSocket, written either with tokio-tungstenite or with Python's
//! `websockets` library (a driver process running `client.py`, one per client, reused across
//! that client's connections).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// How long a close handshake may take before the client gives up (as `websockets`).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// Which library a client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Library {
    /// tokio-tungstenite, in the soak's process.
    Rust,
    /// Python's `websockets`, in a driver process.
    Python,
}

impl Library {
    /// Its name in the summary.
    pub fn name(self) -> &'static str {
        match self {
            Library::Rust => "tungstenite",
            Library::Python => "py websockets",
        }
    }
}

/// What the connection delivered.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A text frame.
    Frame(String),
    /// The answer to a ping.
    Pong,
    /// The connection ended (the close code, when the server sent one).
    Closed(Option<u16>),
}

/// The Python driver of one client.
struct Driver {
    child: Child,
    stdin: ChildStdin,
    events: mpsc::UnboundedReceiver<Value>,
}

impl Driver {
    fn start(python: &Path, script: &Path) -> anyhow::Result<Driver> {
        let mut child = Command::new(python)
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {}", python.display()))?;
        let stdin = child.stdin.take().context("the driver's stdin")?;
        let stdout = child.stdout.take().context("the driver's stdout")?;
        let (tx, events) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Ok(event) = serde_json::from_str::<Value>(&line)
                    && tx.send(event).is_err()
                {
                    return;
                }
            }
        });
        Ok(Driver {
            child,
            stdin,
            events,
        })
    }

    async fn command(&mut self, command: Value) -> anyhow::Result<()> {
        let mut line = command.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .await
            .context("the Python driver is gone")
    }

    /// Waits for an event named `name` (or `or_else`), keeping the others in `skipped`.
    async fn wait_for(
        &mut self,
        name: &str,
        within: Duration,
        skipped: &mut Vec<Value>,
    ) -> anyhow::Result<Value> {
        self.wait_either(name, name, within, skipped).await
    }

    async fn wait_either(
        &mut self,
        name: &str,
        or_else: &str,
        within: Duration,
        skipped: &mut Vec<Value>,
    ) -> anyhow::Result<Value> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(event) = tokio::time::timeout(left, self.events.recv()).await else {
                bail!("the Python client did not report `{name}` within {within:?}");
            };
            let Some(event) = event else {
                bail!("the Python driver exited");
            };
            if event["ev"] == name || event["ev"] == or_else {
                return Ok(event);
            }
            skipped.push(event);
        }
    }
}

/// One client's connection, whichever library writes it.
pub struct Link {
    library: Library,
    rust: Option<Ws>,
    python: Option<Driver>,
}

impl Link {
    /// A link written with `library`; Python needs its interpreter and the driver script.
    pub fn new(library: Library, python: Option<(&Path, &Path)>) -> anyhow::Result<Link> {
        let python = match (library, python) {
            (Library::Python, Some((interpreter, script))) => {
                Some(Driver::start(interpreter, script)?)
            }
            (Library::Python, None) => bail!("no Python with `websockets` for a Python client"),
            (Library::Rust, _) => None,
        };
        Ok(Link {
            library,
            rust: None,
            python,
        })
    }

    /// The library.
    pub fn library(&self) -> Library {
        self.library
    }

    /// Opens a connection to `url` (the previous one must be closed or aborted).
    pub async fn connect(&mut self, url: &str) -> anyhow::Result<()> {
        if let Some(driver) = self.python.as_mut() {
            driver.command(json!({"op": "connect", "url": url})).await?;
            let mut skipped = Vec::new();
            let event = driver
                .wait_either("open", "open_failed", Duration::from_secs(30), &mut skipped)
                .await?;
            if event["ev"] == "open_failed" {
                bail!("connecting to {url}: {}", event["error"]);
            }
            return Ok(());
        }
        let address = url
            .strip_prefix("ws://")
            .and_then(|rest| rest.split('/').next())
            .context("a ws:// URL")?;
        let stream = TcpStream::connect(address).await?;
        // Three small frames per message: without TCP_NODELAY, Nagle's algorithm holds the
        // second and third back for the server's delayed ACK.
        stream.set_nodelay(true)?;
        let (ws, _) = tokio_tungstenite::client_async(url, MaybeTlsStream::Plain(stream))
            .await
            .with_context(|| format!("connecting to {url}"))?;
        self.rust = Some(ws);
        Ok(())
    }

    /// Sends one text frame (a connection that has ended swallows it: its end shows as an
    /// event).
    pub async fn send(&mut self, text: String) -> anyhow::Result<()> {
        if let Some(driver) = self.python.as_mut() {
            return driver.command(json!({"op": "send", "text": text})).await;
        }
        if let Some(ws) = self.rust.as_mut() {
            let _ = ws.send(Message::text(text)).await;
        }
        Ok(())
    }

    /// Sends a ping (the Python library pings on its own, every second).
    pub async fn ping(&mut self) {
        if let Some(ws) = self.rust.as_mut() {
            let _ = ws.send(Message::Ping(b"soak".to_vec().into())).await;
        }
    }

    /// The next event, or `None` when nothing came within `within`.
    pub async fn next(&mut self, within: Duration) -> Option<Event> {
        if let Some(driver) = self.python.as_mut() {
            let deadline = Instant::now() + within;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let event = tokio::time::timeout(left, driver.events.recv())
                    .await
                    .ok()?;
                let Some(event) = event else {
                    return Some(Event::Closed(None));
                };
                if let Some(event) = python_event(&event) {
                    return Some(event);
                }
            }
        }
        let ws = self.rust.as_mut()?;
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = tokio::time::timeout(left, ws.next()).await.ok()?;
            match frame {
                Some(Ok(Message::Text(text))) => return Some(Event::Frame(text.to_string())),
                Some(Ok(Message::Pong(_))) => return Some(Event::Pong),
                Some(Ok(Message::Close(frame))) => {
                    return Some(Event::Closed(frame.map(|f| u16::from(f.code))));
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return Some(Event::Closed(None)),
            }
        }
    }

    /// Closes the connection as the library does: a close frame, then wait for the
    /// server's. Returns how long the handshake took (`None`: it timed out).
    pub async fn close(&mut self) -> anyhow::Result<Option<Duration>> {
        if let Some(driver) = self.python.as_mut() {
            driver.command(json!({"op": "close"})).await?;
            let mut skipped = Vec::new();
            let done = driver
                .wait_for("close_done", CLOSE_TIMEOUT * 2, &mut skipped)
                .await?;
            let ms = done["ms"].as_f64().unwrap_or(f64::MAX);
            let took = Duration::from_secs_f64(ms / 1000.0);
            return Ok((took < CLOSE_TIMEOUT).then_some(took));
        }
        let Some(mut ws) = self.rust.take() else {
            return Ok(Some(Duration::ZERO));
        };
        let started = Instant::now();
        let frame = CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        };
        let _ = ws.send(Message::Close(Some(frame))).await;
        let answered = tokio::time::timeout(CLOSE_TIMEOUT, async {
            while let Some(Ok(message)) = ws.next().await {
                if let Message::Close(_) = message {
                    return true;
                }
            }
            false
        })
        .await;
        Ok(matches!(answered, Ok(true)).then(|| started.elapsed()))
    }

    /// Drops the connection without a close handshake (a killed client, a lost network).
    pub async fn abort(&mut self) -> anyhow::Result<()> {
        if let Some(driver) = self.python.as_mut() {
            driver.command(json!({"op": "abort"})).await?;
            let mut skipped = Vec::new();
            driver
                .wait_for("abort_done", CLOSE_TIMEOUT, &mut skipped)
                .await?;
            return Ok(());
        }
        self.rust = None;
        Ok(())
    }

    /// Forgets a connection that the server ended (after [`Event::Closed`]).
    pub async fn forget(&mut self) {
        if let Some(driver) = self.python.as_mut() {
            let _ = driver.command(json!({"op": "abort"})).await;
            let mut skipped = Vec::new();
            let _ = driver
                .wait_for("abort_done", CLOSE_TIMEOUT, &mut skipped)
                .await;
        }
        self.rust = None;
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Some(driver) = self.python.as_mut() {
            let _ = driver.child.start_kill();
        }
    }
}

fn python_event(event: &Value) -> Option<Event> {
    match event["ev"].as_str()? {
        "frame" => Some(Event::Frame(event["text"].as_str()?.to_owned())),
        "closed" => Some(Event::Closed(
            event["code"].as_u64().and_then(|c| u16::try_from(c).ok()),
        )),
        _ => None,
    }
}
