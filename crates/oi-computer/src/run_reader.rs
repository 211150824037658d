//! Reading one run: the items its session sends become outputs (only once the driver said
//! the run started; console text through the `@@@` output markers), until the driver says it
//! is done, the session is killed, or its processes are gone; the run's time limits
//! interrupt it on the way.

use std::process::ExitStatus;
use std::time::Duration;

use oi_core::computer::Output;
use tokio::time::Instant;

use crate::output_markers::MarkerFilter;
use crate::process::session::Session;
use crate::process::session_handle::Item;

/// How long output is still read after the interpreter exited (its last words, then EOF).
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(300);

/// How much longer than its time limit a run may take before the driver says it started (an
/// interpreter that never comes up is still stopped).
const START_UP_ALLOWANCE: Duration = Duration::from_secs(10);

/// Why a run's read loop ended.
pub(crate) enum End {
    /// The driver reported the run done.
    Done,
    /// The session was killed (stop grace ran out, or terminate).
    Killed,
    /// The session's processes went away.
    Exited(Option<ExitStatus>),
}

/// What reading a run produced next.
pub(crate) enum Progress {
    /// Outputs to pass on (possibly none).
    Outputs(Vec<Output>),
    /// A time limit ran out: pass the note on, then interrupt the run.
    TimedOut(Output),
    /// The code asks the computer API (the request's JSON): answer it, then read on.
    Api(String),
    /// The run ended.
    End(End),
}

/// The state of reading one run.
pub(crate) struct RunReader {
    /// The run's id.
    run: u64,
    /// Whether the driver has said the run started (what comes before belongs to no run).
    started: bool,
    /// The `@@@` output markers of the run's console text.
    markers: MarkerFilter,
    /// The interpreter's exit, once seen.
    exited: Option<Option<ExitStatus>>,
    /// After the exit: when to stop waiting for the rest of the output.
    drain_until: Option<Instant>,
    /// When the run's time is up.
    run_deadline: Option<Instant>,
    /// When the run's silence is too long.
    idle_deadline: Option<Instant>,
    /// Whether a time limit has interrupted the run.
    timed_out: bool,
    /// The run's time limit.
    timeout: Option<Duration>,
    /// The run's silence limit.
    idle_timeout: Option<Duration>,
    /// A time no deadline reaches (when none is set).
    far: Instant,
}

/// What woke the read loop.
enum Wake {
    /// An item from the session (`None`: every sender is gone).
    Item(Option<Item>),
    /// The interpreter exited.
    Exit(Option<ExitStatus>),
    /// A deadline.
    Timer,
}

impl RunReader {
    /// Starts reading run `run`. Its time limits count from when the driver says the run
    /// started, so a session's start-up (a fresh interpreter, a busy machine) is not the
    /// code's time, and an interrupt never lands in the interpreter's own start-up.
    pub(crate) fn new(
        run: u64,
        timeout: Option<Duration>,
        idle_timeout: Option<Duration>,
    ) -> RunReader {
        let now = Instant::now();
        RunReader {
            run,
            started: false,
            markers: MarkerFilter::default(),
            exited: None,
            drain_until: None,
            run_deadline: timeout.map(|t| now + t + START_UP_ALLOWANCE),
            idle_deadline: None,
            timed_out: false,
            timeout,
            idle_timeout,
            far: now + Duration::from_secs(365 * 24 * 3600),
        }
    }

    /// Whether the driver said the run started.
    pub(crate) fn started(&self) -> bool {
        self.started
    }

    /// Waits for what comes next from `session`.
    pub(crate) async fn next(&mut self, session: &mut Session) -> Progress {
        loop {
            let progress = match self.wait(session).await {
                Wake::Item(item) => self.on_item(item),
                Wake::Exit(status) => {
                    self.on_exit(status);
                    None
                }
                Wake::Timer => self.on_timer(),
            };
            if let Some(progress) = progress {
                return progress;
            }
        }
    }

    /// Ends the run: the console text the output markers still hold back.
    pub(crate) fn finish(&mut self) -> Vec<Output> {
        self.markers.finish()
    }

    /// Waits for an item, the interpreter's exit (once), or the next deadline.
    async fn wait(&self, session: &mut Session) -> Wake {
        let wake = [self.run_deadline, self.idle_deadline, self.drain_until]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(self.far);
        tokio::select! {
            item = session.rx.recv() => Wake::Item(item),
            status = session.exit.wait(), if self.exited.is_none() => Wake::Exit(status),
            () = tokio::time::sleep_until(wake) => Wake::Timer,
        }
    }

    /// The interpreter exited: read what it still printed for a moment.
    fn on_exit(&mut self, status: Option<ExitStatus>) {
        self.exited = Some(status);
        self.drain_until = Some(Instant::now() + DRAIN_AFTER_EXIT);
    }

    /// A deadline passed: the end of the drain after an exit, or a time limit (once).
    fn on_timer(&mut self) -> Option<Progress> {
        if self.drain_until.is_some_and(|d| Instant::now() >= d) {
            return Some(Progress::End(End::Exited(self.exited.flatten())));
        }
        let mut progress = None;
        if !self.timed_out {
            self.timed_out = true;
            progress = Some(Progress::TimedOut(Output::console(self.timeout_note())));
        }
        // Both limits are spent: a deadline left in the past would wake the loop at once,
        // again and again, until the run ends (a core spun for the whole stop grace).
        self.run_deadline = None;
        self.idle_deadline = None;
        progress
    }

    /// The note for the time limit that ran out.
    fn timeout_note(&self) -> String {
        match (self.run_deadline, self.timeout, self.idle_timeout) {
            (Some(d), Some(t), _) if Instant::now() >= d => format!(
                "\n[oi: the code ran for more than {} s and was stopped.]\n",
                t.as_secs_f64()
            ),
            (_, _, Some(t)) => format!(
                "\n[oi: the code printed nothing for {} s and was stopped; it may be waiting for input, which it cannot get.]\n",
                t.as_secs_f64()
            ),
            _ => "\n[oi: the code was stopped.]\n".to_owned(),
        }
    }

    /// An item from the session: outputs of this run, or its end.
    fn on_item(&mut self, item: Option<Item>) -> Option<Progress> {
        if let (Some(t), false, true) = (self.idle_timeout, self.timed_out, self.started) {
            self.idle_deadline = Some(Instant::now() + t);
        }
        let outputs = match item {
            None | Some(Item::Eof) => {
                return Some(Progress::End(End::Exited(self.exited.flatten())));
            }
            Some(Item::Killed) => return Some(Progress::End(End::Killed)),
            Some(Item::Start(id)) => {
                if id == self.run && !self.started {
                    self.started = true;
                    let now = Instant::now();
                    self.run_deadline = self.timeout.map(|t| now + t);
                    self.idle_deadline = self.idle_timeout.map(|t| now + t);
                }
                return None;
            }
            Some(Item::Done(id)) => {
                return (id == self.run).then_some(Progress::End(End::Done));
            }
            _ if !self.started => return None,
            Some(Item::Text(text)) => self.markers.push(&text),
            Some(Item::Line(line)) => vec![Output::active_line(line)],
            Some(Item::Api(request)) => return Some(Progress::Api(request)),
            Some(Item::Rich(output)) => {
                let mut outputs = self.markers.finish();
                outputs.push(output);
                outputs
            }
        };
        Some(Progress::Outputs(outputs))
    }
}
