//! One run of code in a language's session ([`run_stream`]), step by step: drop a session
//! that died, pass the sandbox gate and start a new one, say once that a killed session's state
//! was lost, send the code, read the run's output until it ends (`run_reader.rs`), and say how
//! it ended. A run whose session died under it before it began is tried once more.

use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use oi_core::computer::Output;
use tokio::io::AsyncWriteExt;

use crate::api_door::{Door, RunDoor};
use crate::languages::Language;
use crate::languages::engine;
use crate::languages::start_error::StartError;
use crate::process::session::Session;
use crate::process::session_handle::{Fate, Handle};
use crate::run_reader::{End, Progress, RunReader};
use crate::sandbox::confine::{Confine, Gate};
use crate::slot::{Slot, SlotState};

/// A run is tried at most this often: once more in a new session when its session died
/// before the run began.
const MAX_ATTEMPTS: u32 = 2;

/// How long writing a computer API answer to the session may take.
const ANSWER_WRITE: Duration = Duration::from_secs(5);

/// How long to wait for the exit status of a session whose output ended.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(200);

/// Settings shared by every run.
#[derive(Debug, Clone)]
pub(crate) struct RunConfig {
    /// The cap on one run's output, in bytes.
    pub output_cap: usize,
    /// How long an interrupted run may take to stop before its session is killed.
    pub grace: Duration,
    /// The longest a run may take.
    pub timeout: Option<Duration>,
    /// The longest a run may print nothing.
    pub idle_timeout: Option<Duration>,
    /// Sandbox policy and resource limits of every session.
    pub confine: Arc<Confine>,
    /// What answers the computer API's door, when the computer has one.
    pub door: Option<Door>,
    /// Whether this run imports the computer API (set per run).
    pub api: bool,
}

/// Runs `code` in `slot`'s session (started when there is none), as a stream of its outputs;
/// `ids` hands out run ids. Dropping the stream interrupts the run.
pub(crate) fn run_stream(
    slot: Arc<Slot>,
    code: String,
    config: RunConfig,
    ids: Arc<AtomicU64>,
) -> impl futures::Stream<Item = Output> + Send + 'static {
    async_stream::stream! {
        let language = slot.language;
        let mut state = Arc::clone(&slot.state).lock_owned().await;
        let mut attempt = 1;
        loop {
            let may_retry = attempt < MAX_ATTEMPTS;
            discard_dead_session(&slot, &mut state);
            if let Some(note) = end_session_of_other_policy(&slot, &mut state, &config.confine) {
                yield note;
            }
            if state.session.is_none() {
                match config.confine.gate() {
                    Gate::Refuse(message) => {
                        yield Output::console(message);
                        return;
                    }
                    Gate::Run(Some(note)) => yield Output::console(note),
                    Gate::Run(None) => {}
                }
                if let Err(error) = start_session(&slot, &mut state, &config).await {
                    yield Output::console(error.to_string());
                    return;
                }
            }
            if let Some(note) = take_lost_state_note(&mut state, language) {
                yield note;
            }

            let nonce = state.nonce.clone();
            let run = ids.fetch_add(1, Ordering::SeqCst);
            state.used = true;
            let Some(session) = state.session.as_mut() else { return };
            let mut guard = match send_code(session, language, &nonce, run, &code, config.api).await {
                Ok(guard) => guard,
                Err(SendError::Encode(e)) => {
                    yield Output::console(format!(
                        "Could not pass the code to the {} session: {e}\n",
                        language.name()
                    ));
                    return;
                }
                Err(SendError::SessionGone) => {
                    slot.clear(&mut state);
                    if may_retry {
                        attempt += 1;
                        continue;
                    }
                    yield Output::console(format!(
                        "The {} session stopped unexpectedly and could not be restarted.\n",
                        language.name()
                    ));
                    return;
                }
            };

            let mut reader = RunReader::new(run, config.timeout, config.idle_timeout);
            // Only Python's driver reads the door's answers: other sessions would take an
            // answer line on their input as code (bash ran it as a command in the stop-32
            // review), so their forged requests are dropped unanswered.
            let reads_answers = language == Language::Python;
            let mut door = RunDoor::new(config.door.as_ref(), config.api);
            let end = loop {
                match reader.next(session).await {
                    Progress::Outputs(outputs) => {
                        for output in outputs {
                            yield output;
                        }
                    }
                    Progress::TimedOut(note) => {
                        yield note;
                        session.handle.interrupt(run);
                    }
                    Progress::Api(_) if !reads_answers => {}
                    Progress::Api(request) => {
                        let answer = door.answer(&request).await;
                        // Code that forged a request and never reads the answer must not hold
                        // the run here for long (its time limits are checked only while
                        // output is read).
                        let _ = tokio::time::timeout(ANSWER_WRITE, async {
                            session.stdin.write_all(&answer).await?;
                            session.stdin.flush().await
                        })
                        .await;
                    }
                    Progress::End(end) => break end,
                }
            };
            for held in reader.finish() {
                yield held;
            }
            guard.finish();

            let ending = conclude(end, reader.started(), may_retry, guard.handle(), &slot, &mut state, &config).await;
            match ending {
                Ending::Over(note) => {
                    if let Some(note) = note {
                        yield note;
                    }
                    return;
                }
                Ending::Retry => {
                    attempt += 1;
                    continue;
                }
            }
        }
    }
}

/// Drops a session that can take no more runs; one killed because it ignored an interrupt
/// makes the next run say that its state was lost.
fn discard_dead_session(slot: &Slot, state: &mut SlotState) {
    let Some(session) = &state.session else {
        return;
    };
    if session.handle.usable() {
        return;
    }
    if session.handle.fate() == Fate::KilledAfterInterrupt {
        state.lost_state = true;
    }
    slot.clear(state);
}

/// Ends a live session that was started under another sandbox policy or other resource limits
/// than the run asks for (a running interpreter's confinement cannot be changed in place), so
/// that the run starts a new one under the policy asked for; for a language that keeps state,
/// the note that says so and that its state was lost.
fn end_session_of_other_policy(
    slot: &Slot,
    state: &mut SlotState,
    confine: &Confine,
) -> Option<Output> {
    state.session.as_ref()?;
    let started = state.confine.as_ref()?;
    if started.policy == confine.policy && started.limits == confine.limits {
        return None;
    }
    slot.clear(state);
    state.lost_state = false;
    let language = slot.language;
    (std::mem::take(&mut state.used) && language.keeps_state()).then(|| {
        Output::console(format!(
            "[oi: the sandbox or resource limits changed, so the {} session was restarted under the new ones; its state (variables, imports, working directory) was lost.]\n",
            language.name()
        ))
    })
}

/// Starts `slot`'s session ahead of its first run, when none is running, no run holds the
/// slot, and the sandbox has nothing to refuse or warn about (those are said by the run).
/// Runs no code; a failure is left for the run to meet and report.
pub(crate) async fn prepare_session(slot: Arc<Slot>, config: RunConfig) {
    let Ok(mut state) = Arc::clone(&slot.state).try_lock_owned() else {
        return;
    };
    discard_dead_session(&slot, &mut state);
    if state.session.is_some() || !config.confine.starts_quietly() {
        return;
    }
    let _ = start_session(&slot, &mut state, &config).await;
}

/// Starts the slot's session and writes its setup commands; the error is said to the model
/// as console output by the caller.
async fn start_session(
    slot: &Slot,
    state: &mut SlotState,
    config: &RunConfig,
) -> Result<(), StartError> {
    let started = engine::start(
        slot.language,
        config.output_cap,
        config.grace,
        &config.confine,
    )?;
    let mut session = started.session;
    if !started.setup.is_empty() {
        let _ = session.stdin.write_all(&started.setup).await;
    }
    slot.set_handle(Some(Arc::clone(&session.handle)));
    state.nonce = started.nonce;
    state.session = Some(session);
    state.confine = Some(Arc::clone(&config.confine));
    state.used = false;
    Ok(())
}

/// Once after a session was killed, for a language that keeps state: the note that its state
/// was lost.
fn take_lost_state_note(state: &mut SlotState, language: Language) -> Option<Output> {
    let lost = std::mem::take(&mut state.lost_state);
    (lost && language.keeps_state()).then(|| Output::console(state_lost_note(language)))
}

/// Why the code could not be sent to the session.
enum SendError {
    /// It could not be made into a command for the session (e.g. its file not written).
    Encode(std::io::Error),
    /// The session's stdin is closed: the session died, and is now killed for good.
    SessionGone,
}

/// Sends `code` to `session` as run `run` and marks the run as executing.
async fn send_code(
    session: &mut Session,
    language: Language,
    nonce: &str,
    run: u64,
    code: &str,
    api: bool,
) -> Result<RunGuard, SendError> {
    let command =
        engine::command(language, session, nonce, run, code, api).map_err(SendError::Encode)?;
    let mut guard = RunGuard::begin(Arc::clone(&session.handle), run);
    let written = async {
        session.stdin.write_all(&command).await?;
        session.stdin.flush().await
    }
    .await;
    if written.is_err() {
        guard.finish();
        guard.handle.kill(Fate::Terminated);
        return Err(SendError::SessionGone);
    }
    Ok(guard)
}

/// Marks a run as executing, and interrupts it if the run's stream is dropped before it ends.
struct RunGuard {
    handle: Arc<Handle>,
    run: u64,
    finished: bool,
}

impl RunGuard {
    /// Marks `run` as the one executing in the session of `handle`.
    fn begin(handle: Arc<Handle>, run: u64) -> RunGuard {
        handle.begin(run);
        RunGuard {
            handle,
            run,
            finished: false,
        }
    }

    /// The run's session's handle.
    fn handle(&self) -> &Handle {
        &self.handle
    }

    /// The run is over: nothing to interrupt.
    fn finish(&mut self) {
        self.finished = true;
        self.handle.end(self.run);
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.handle.interrupt(self.run);
        }
    }
}

/// How a run goes on once its output ended.
enum Ending {
    /// The run is over; pass this note on first, if any.
    Over(Option<Output>),
    /// Run the code again in a new session: the session was killed before the run began
    /// (an earlier, abandoned run ignored its interrupt).
    Retry,
}

/// Settles a run that ended with `end` (`started`: whether the driver had begun it).
async fn conclude(
    end: End,
    started: bool,
    may_retry: bool,
    handle: &Handle,
    slot: &Slot,
    state: &mut SlotState,
    config: &RunConfig,
) -> Ending {
    match end {
        End::Done => Ending::Over(None),
        End::Killed => after_kill(started, may_retry, handle, slot, state, config),
        End::Exited(status) => {
            Ending::Over(Some(after_exit(status, handle, slot, state, config).await))
        }
    }
}

/// The session was killed during the run (its grace after an interrupt ran out, the process
/// limit, terminate): it is dropped, and the note says why.
fn after_kill(
    started: bool,
    may_retry: bool,
    handle: &Handle,
    slot: &Slot,
    state: &mut SlotState,
    config: &RunConfig,
) -> Ending {
    let language = slot.language;
    let fate = handle.fate();
    slot.clear(state);
    match fate {
        Fate::KilledAfterInterrupt => {
            state.lost_state = true;
            if !started && may_retry {
                return Ending::Retry;
            }
            Ending::Over(Some(Output::console(format!(
                "\n[oi: the code did not stop when interrupted, so the {} session was killed.]\n",
                language.name()
            ))))
        }
        Fate::ProcessLimit => {
            Ending::Over(Some(Output::console(process_limit_note(language, config))))
        }
        Fate::Alive | Fate::Terminated => Ending::Over(None),
    }
}

/// The session's processes went away during the run: what is left of it is killed and it is
/// dropped; the note says which limit it hit, or how it exited.
async fn after_exit(
    status: Option<ExitStatus>,
    handle: &Handle,
    slot: &Slot,
    state: &mut SlotState,
    config: &RunConfig,
) -> Output {
    let status = match (status, state.session.as_mut()) {
        (Some(status), _) => Some(status),
        (None, Some(session)) => tokio::time::timeout(EXIT_STATUS_WAIT, session.exit.wait())
            .await
            .ok()
            .flatten(),
        (None, None) => None,
    };
    let fate = handle.fate();
    handle.kill(Fate::Terminated);
    slot.clear(state);
    let language = slot.language;
    if fate == Fate::ProcessLimit {
        return Output::console(process_limit_note(language, config));
    }
    if let Some(which) = crate::policy::limits::hit_by(&config.confine.limits, status) {
        return Output::console(crate::policy::limits::hit_message(
            &format!("{} session", language.name()),
            which,
        ));
    }
    let how = match status.and_then(|s| s.code()) {
        Some(code) => format!(" with exit code {code}"),
        None => String::new(),
    };
    let lost = if language.keeps_state() {
        "; its state was lost and a new session will start with the next run"
    } else {
        "; a new one will start with the next run"
    };
    Output::console(format!(
        "\n[oi: the {} session exited{how}{lost}.]\n",
        language.name()
    ))
}

/// The note that a killed session's state was lost.
fn state_lost_note(language: Language) -> String {
    format!(
        "[oi: the previous {} session did not stop when interrupted and was killed; a new session was started and its state (variables, imports, working directory) was lost.]\n",
        language.name()
    )
}

/// The note that a session was killed past the process limit.
fn process_limit_note(language: Language, config: &RunConfig) -> String {
    let max = config.confine.limits.max_processes.unwrap_or(0);
    crate::policy::limits::hit_message(
        &format!(
            "{} session (more than {max} processes at once)",
            language.name()
        ),
        "process",
    )
}
