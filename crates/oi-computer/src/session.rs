//! One running session process: its output reader thread, its item channel, and the sync
//! handle used to interrupt it or kill its whole unit from anywhere (including `Drop`).

use base64::Engine as _;
use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use oi_core::computer::Output;
use oi_core::lmc::Kind;
use tokio::net::unix::pipe;
use tokio::sync::mpsc;

use crate::child::ExitWatch;
use crate::driver_events::{MarkerParser, Piece};
use crate::output_cap::OutputCap;
use crate::session_unit::Unit;
use crate::spawn::Spawned;

/// What the reader thread (or a watchdog) reports to the run that is reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Item {
    /// The driver started run `id`.
    Start(u64),
    /// The driver finished run `id`.
    Done(u64),
    /// Output text.
    Text(String),
    /// The line now running.
    Line(u64),
    /// Rich output (image, html).
    Rich(Output),
    /// The output pipe closed: every process of the session is gone.
    Eof,
    /// A watchdog killed the session because it did not stop after an interrupt.
    Killed,
}

/// Why a session's group was killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Still alive.
    Alive = 0,
    /// Killed because it ignored an interrupt; the next run says the state was lost.
    KilledAfterInterrupt = 1,
    /// Ended by `terminate()` or a timeout; restarted silently.
    Terminated = 2,
    /// Killed because it grew past the process limit.
    ProcessLimit = 3,
}

/// The sync, shareable part of a session: enough to signal it from anywhere.
#[derive(Debug)]
pub(crate) struct Handle {
    unit: Arc<Unit>,
    /// The run being executed (0 = none).
    running: AtomicU64,
    /// The last run the driver reported done.
    last_done: AtomicU64,
    /// The run a watchdog is already watching (0 = none).
    watched: AtomicU64,
    fate: AtomicU8,
    /// Whether the reader reached the end of the output.
    eof: AtomicBool,
    tx: mpsc::UnboundedSender<Item>,
    grace: Duration,
}

impl Handle {
    /// The session's processes.
    pub(crate) fn unit(&self) -> &Unit {
        &self.unit
    }

    /// The process group id.
    pub(crate) fn pgid(&self) -> u32 {
        self.unit.pgid()
    }

    /// Marks `run` as the one executing.
    pub(crate) fn begin(&self, run: u64) {
        self.running.store(run, Ordering::SeqCst);
    }

    /// Marks the current run as over (from the reading side).
    pub(crate) fn end(&self, run: u64) {
        let _ = self
            .running
            .compare_exchange(run, 0, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Whether `run` has been reported done by the driver.
    pub(crate) fn is_done(&self, run: u64) -> bool {
        self.last_done.load(Ordering::SeqCst) >= run
    }

    /// How the session ended, if it did.
    pub(crate) fn fate(&self) -> Fate {
        match self.fate.load(Ordering::SeqCst) {
            1 => Fate::KilledAfterInterrupt,
            2 => Fate::Terminated,
            3 => Fate::ProcessLimit,
            _ => Fate::Alive,
        }
    }

    /// Whether the session can take another run.
    pub(crate) fn usable(&self) -> bool {
        self.fate() == Fate::Alive && !self.eof.load(Ordering::SeqCst)
    }

    /// Interrupts whatever run is executing (SIGINT to the group); if it has not finished
    /// within the grace period, kills the whole unit. Never blocks.
    pub(crate) fn stop(self: &Arc<Self>) {
        let run = self.running.load(Ordering::SeqCst);
        if run != 0 {
            self.interrupt(run);
        }
    }

    /// Interrupts `run` unless it is already done; see [`Handle::stop`].
    pub(crate) fn interrupt(self: &Arc<Self>, run: u64) {
        if self.is_done(run) || self.fate() != Fate::Alive {
            return;
        }
        self.unit.interrupt();
        if self.watched.swap(run, Ordering::SeqCst) == run {
            return; // a watchdog is already on it
        }
        let handle = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("oi-stop-watchdog".to_owned())
            .spawn(move || {
                let deadline = Instant::now() + handle.grace;
                while Instant::now() < deadline {
                    if handle.is_done(run)
                        || handle.fate() != Fate::Alive
                        || handle.eof.load(Ordering::SeqCst)
                    {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                if !handle.is_done(run) {
                    handle.kill(Fate::KilledAfterInterrupt);
                }
            });
        if spawned.is_err() {
            self.kill(Fate::KilledAfterInterrupt);
        }
    }

    /// Kills the whole unit now and tells the reading run.
    pub(crate) fn kill(&self, fate: Fate) {
        let _ = self.fate.compare_exchange(
            Fate::Alive as u8,
            fate as u8,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        self.unit.kill();
        let _ = self.tx.send(Item::Killed);
    }

    /// Marks the session as ended by `terminate()` without signalling it.
    pub(crate) fn mark_terminated(&self) {
        let _ = self.fate.compare_exchange(
            Fate::Alive as u8,
            Fate::Terminated as u8,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        let _ = self.tx.send(Item::Killed);
    }
}

/// A live session process, owned by its language slot.
#[derive(Debug)]
pub(crate) struct Session {
    /// The sync handle.
    pub handle: Arc<Handle>,
    /// The interpreter's exit status, once it has exited.
    pub exit: ExitWatch,
    /// Where commands go.
    pub stdin: pipe::Sender,
    /// Items from the reader thread and watchdogs.
    pub rx: mpsc::UnboundedReceiver<Item>,
    /// Files the session uses (shell code blocks); removed on drop.
    pub workdir: Option<tempfile::TempDir>,
}

impl Drop for Session {
    fn drop(&mut self) {
        if self.handle.fate() == Fate::Alive {
            self.handle.kill(Fate::Terminated);
        }
    }
}

/// Limits the reader applies to each segment of output (a run, or the time between runs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Bytes of output forwarded per segment (head and tail) before the rest is dropped.
    pub output_cap: usize,
    /// How long a run may ignore an interrupt before its group is killed.
    pub grace: Duration,
}

impl Session {
    /// Wraps a spawned process: starts its reader thread.
    pub(crate) fn new(
        spawned: Spawned,
        nonce: &str,
        limits: Limits,
        workdir: Option<tempfile::TempDir>,
    ) -> std::io::Result<Session> {
        let Spawned {
            exit,
            stdin,
            output,
            unit,
        } = spawned;
        let pgid = unit.pgid();
        let (tx, rx) = mpsc::unbounded_channel();
        let handle = Arc::new(Handle {
            unit,
            running: AtomicU64::new(0),
            last_done: AtomicU64::new(0),
            watched: AtomicU64::new(0),
            fate: AtomicU8::new(Fate::Alive as u8),
            eof: AtomicBool::new(false),
            tx: tx.clone(),
            grace: limits.grace,
        });
        let reader = Reader {
            parser: MarkerParser::new(nonce),
            handle: Arc::clone(&handle),
            tx,
            cap: OutputCap::new(limits.output_cap),
            lines: 0,
            last_line: None,
            last_line_at: Instant::now(),
        };
        std::thread::Builder::new()
            .name(format!("oi-session-{pgid}"))
            .spawn(move || reader.run(output))?;
        Ok(Session {
            handle,
            exit,
            stdin,
            rx,
            workdir,
        })
    }
}

struct Reader {
    parser: MarkerParser,
    handle: Arc<Handle>,
    tx: mpsc::UnboundedSender<Item>,
    cap: OutputCap,
    lines: u64,
    last_line: Option<u64>,
    last_line_at: Instant,
}

impl Reader {
    fn run(mut self, mut output: std::fs::File) {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match output.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    for piece in self.parser.feed(&buf[..n]) {
                        self.piece(piece);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        if let Some(rest) = self.parser.finish() {
            self.piece(Piece::Text(rest));
        }
        self.flush_tail();
        self.handle.eof.store(true, Ordering::SeqCst);
        let _ = self.tx.send(Item::Eof);
    }

    fn new_segment(&mut self) {
        self.cap.reset();
        self.lines = 0;
        self.last_line = None;
    }

    /// Sends the held-back tail of an over-cap segment, with its marker line.
    fn flush_tail(&mut self) {
        if let Some(tail) = self.cap.finish() {
            let _ = self.tx.send(Item::Text(tail));
        }
    }

    fn piece(&mut self, piece: Piece) {
        match piece {
            Piece::Text(text) => {
                if let Some(text) = self.cap.text(text) {
                    let _ = self.tx.send(Item::Text(text));
                }
            }
            Piece::Event(event) => match event.ev.as_str() {
                "start" => {
                    self.new_segment();
                    let _ = self.tx.send(Item::Start(event.id));
                }
                "done" => {
                    self.flush_tail();
                    self.new_segment();
                    self.handle.last_done.fetch_max(event.id, Ordering::SeqCst);
                    let _ = self.tx.send(Item::Done(event.id));
                }
                "line" => {
                    if self.last_line == Some(event.n) || self.cap.is_over() {
                        return;
                    }
                    self.lines += 1;
                    if self.lines > 1000 {
                        // A tight loop: report at most ~20 line changes a second.
                        if self.last_line_at.elapsed() < Duration::from_millis(50) {
                            return;
                        }
                        self.last_line_at = Instant::now();
                    }
                    self.last_line = Some(event.n);
                    if event.n > 0 {
                        let _ = self.tx.send(Item::Line(event.n));
                    }
                }
                "file" => {
                    let Some(path) = event.path.as_deref() else {
                        return;
                    };
                    let Ok(bytes) = std::fs::read(path) else {
                        return;
                    };
                    let _ = std::fs::remove_file(path);
                    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
                    if self.cap.rich(data.len()) {
                        let format = event.format.as_deref().unwrap_or("base64.png");
                        let _ = self.tx.send(Item::Rich(Output::image(format, data)));
                    }
                }
                "rich" => {
                    let Some(data) = event.data else { return };
                    if !self.cap.rich(data.len()) {
                        return;
                    }
                    let format = event.format.unwrap_or_else(|| "html".to_owned());
                    let output = match event.kind.as_deref() {
                        Some("image") => Output::image(&format, data),
                        _ => Output {
                            kind: Kind::Code,
                            ..Output::code(&format, data)
                        },
                    };
                    let _ = self.tx.send(Item::Rich(output));
                }
                _ => {}
            },
        }
    }
}
