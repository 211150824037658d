//! The sync, shareable side of a session: what a run is told ([`Item`]), how the session
//! ended ([`Fate`]), and the [`Handle`] that interrupts it or kills its whole unit from
//! anywhere (a run, the stop watchdog, the process-limit watchdog, `Drop`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use oi_core::computer::Output;
use tokio::sync::mpsc;

use crate::process::session_unit::Unit;

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
    /// A computer API request (its JSON), to answer on the session's commands.
    Api(String),
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
    /// The handle of a session whose processes are `unit`; `tx` reaches the run reading it,
    /// `grace` is how long a run may ignore an interrupt.
    pub(crate) fn new(unit: Arc<Unit>, tx: mpsc::UnboundedSender<Item>, grace: Duration) -> Handle {
        Handle {
            unit,
            running: AtomicU64::new(0),
            last_done: AtomicU64::new(0),
            watched: AtomicU64::new(0),
            fate: AtomicU8::new(Fate::Alive as u8),
            eof: AtomicBool::new(false),
            tx,
            grace,
        }
    }

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

    /// Records that the driver reported run `id` done (from the reader thread).
    pub(crate) fn mark_done(&self, id: u64) {
        self.last_done.fetch_max(id, Ordering::SeqCst);
    }

    /// Records that the reader reached the end of the output: every process is gone.
    pub(crate) fn mark_eof(&self) {
        self.eof.store(true, Ordering::SeqCst);
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

    /// Kills the whole unit now and tells the reading run — first, so that the run learns
    /// it was killed before the end of output the kill causes can reach it.
    pub(crate) fn kill(&self, fate: Fate) {
        let _ = self.fate.compare_exchange(
            Fate::Alive as u8,
            fate as u8,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        let _ = self.tx.send(Item::Killed);
        self.unit.kill();
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
