//! One run of code in a language's session: [`run_stream`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use oi_core::computer::Output;
use tokio::io::AsyncWriteExt;
use tokio::time::Instant;

use crate::confine::{Confine, Gate};
use crate::engine;
use crate::languages::Language;
use crate::output_markers::MarkerFilter;
use crate::session_handle::{Fate, Handle, Item};
use crate::slot::Slot;

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
}

/// Stops a run whose stream is dropped before it ends.
struct RunGuard {
    handle: Arc<Handle>,
    run: u64,
    finished: bool,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.handle.interrupt(self.run);
        }
    }
}

/// Why a run's read loop ended.
enum End {
    /// The driver reported the run done.
    Done,
    /// The session was killed (stop grace ran out, or terminate).
    Killed,
    /// The session's processes went away.
    Exited(Option<std::process::ExitStatus>),
}

fn state_lost_note(language: Language) -> String {
    format!(
        "[oi: the previous {} session did not stop when interrupted and was killed; a new session was started and its state (variables, imports, working directory) was lost.]\n",
        language.name()
    )
}

fn process_limit_note(language: Language, config: &RunConfig) -> String {
    let max = config.confine.limits.max_processes.unwrap_or(0);
    crate::limits::hit_message(
        &format!(
            "{} session (more than {max} processes at once)",
            language.name()
        ),
        "process",
    )
}

pub(crate) fn run_stream(
    slot: Arc<Slot>,
    code: String,
    config: RunConfig,
    ids: Arc<AtomicU64>,
) -> impl futures::Stream<Item = Output> + Send + 'static {
    async_stream::stream! {
        let language = slot.language;
        let mut state = Arc::clone(&slot.state).lock_owned().await;
        let mut attempt = 0;
        'attempts: loop {
            attempt += 1;
            // Replace a dead session.
            if let Some(session) = &state.session {
                if !session.handle.usable() {
                    if session.handle.fate() == Fate::KilledAfterInterrupt {
                        state.lost_state = true;
                    }
                    state.session = None;
                    slot.set_handle(None);
                }
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
                match engine::start(language, config.output_cap, config.grace, &config.confine) {
                    Ok(started) => {
                        let mut session = started.session;
                        if !started.setup.is_empty() {
                            let _ = session.stdin.write_all(&started.setup).await;
                        }
                        slot.set_handle(Some(Arc::clone(&session.handle)));
                        state.nonce = started.nonce;
                        state.session = Some(session);
                    }
                    Err(message) => {
                        yield Output::console(message);
                        return;
                    }
                }
            }
            if std::mem::take(&mut state.lost_state) && language.keeps_state() {
                yield Output::console(state_lost_note(language));
            }
            let nonce = state.nonce.clone();
            let Some(session) = state.session.as_mut() else { return };
            let run = ids.fetch_add(1, Ordering::SeqCst);
            let command = match engine::command(language, session, &nonce, run, &code) {
                Ok(command) => command,
                Err(e) => {
                    yield Output::console(format!("Could not pass the code to the {} session: {e}\n", language.name()));
                    return;
                }
            };
            let handle = Arc::clone(&session.handle);
            handle.begin(run);
            let mut guard = RunGuard { handle: Arc::clone(&handle), run, finished: false };
            let written = async {
                session.stdin.write_all(&command).await?;
                session.stdin.flush().await
            }.await;
            if written.is_err() {
                guard.finished = true;
                handle.end(run);
                handle.kill(Fate::Terminated);
                state.session = None;
                slot.set_handle(None);
                if attempt < 2 {
                    continue 'attempts;
                }
                yield Output::console(format!("The {} session stopped unexpectedly and could not be restarted.\n", language.name()));
                return;
            }

            let mut started = false;
            let mut markers = MarkerFilter::default();
            let mut exited: Option<Option<std::process::ExitStatus>> = None;
            let mut drain_until: Option<Instant> = None;
            let run_deadline = config.timeout.map(|t| Instant::now() + t);
            let mut idle_deadline = config.idle_timeout.map(|t| Instant::now() + t);
            let mut timed_out = false;
            let far = Instant::now() + Duration::from_secs(365 * 24 * 3600);
            let end = loop {
                let wake = [run_deadline, idle_deadline, drain_until].into_iter().flatten().min().unwrap_or(far);
                let item = tokio::select! {
                    item = session.rx.recv() => item,
                    status = session.exit.wait(), if exited.is_none() => {
                        exited = Some(status);
                        drain_until = Some(Instant::now() + Duration::from_millis(300));
                        continue;
                    }
                    () = tokio::time::sleep_until(wake) => {
                        if drain_until.is_some_and(|d| Instant::now() >= d) {
                            break End::Exited(exited.flatten());
                        }
                        if !timed_out {
                            timed_out = true;
                            let message = match (run_deadline, config.timeout, config.idle_timeout) {
                                (Some(d), Some(t), _) if Instant::now() >= d => format!("\n[oi: the code ran for more than {} s and was stopped.]\n", t.as_secs_f64()),
                                (_, _, Some(t)) => format!("\n[oi: the code printed nothing for {} s and was stopped; it may be waiting for input, which it cannot get.]\n", t.as_secs_f64()),
                                _ => "\n[oi: the code was stopped.]\n".to_owned(),
                            };
                            yield Output::console(message);
                            handle.interrupt(run);
                        }
                        idle_deadline = None;
                        continue;
                    }
                };
                if let (Some(t), false) = (config.idle_timeout, timed_out) {
                    idle_deadline = Some(Instant::now() + t);
                }
                match item {
                    None | Some(Item::Eof) => break End::Exited(exited.flatten()),
                    Some(Item::Killed) => break End::Killed,
                    Some(Item::Start(id)) => {
                        if id == run {
                            started = true;
                        }
                    }
                    Some(Item::Done(id)) => {
                        if id == run {
                            break End::Done;
                        }
                    }
                    Some(Item::Text(text)) => {
                        if started {
                            for output in markers.push(&text) {
                                yield output;
                            }
                        }
                    }
                    Some(Item::Line(line)) => {
                        if started {
                            yield Output::active_line(line);
                        }
                    }
                    Some(Item::Rich(output)) => {
                        if started {
                            for held in markers.finish() {
                                yield held;
                            }
                            yield output;
                        }
                    }
                }
            };
            for held in markers.finish() {
                yield held;
            }
            guard.finished = true;
            handle.end(run);
            match end {
                End::Done => {}
                End::Killed => {
                    let fate = handle.fate();
                    state.session = None;
                    slot.set_handle(None);
                    if !started && attempt < 2 && fate == Fate::KilledAfterInterrupt {
                        // An earlier, abandoned run was killed before ours began.
                        state.lost_state = true;
                        continue 'attempts;
                    }
                    if fate == Fate::KilledAfterInterrupt {
                        state.lost_state = true;
                        yield Output::console(format!("\n[oi: the code did not stop when interrupted, so the {} session was killed.]\n", language.name()));
                    }
                    if fate == Fate::ProcessLimit {
                        yield Output::console(process_limit_note(language, &config));
                    }
                }
                End::Exited(status) => {
                    let status = match status {
                        Some(status) => Some(status),
                        None => tokio::time::timeout(Duration::from_millis(200), session.exit.wait()).await.ok().flatten(),
                    };
                    let fate = handle.fate();
                    handle.kill(Fate::Terminated);
                    state.session = None;
                    slot.set_handle(None);
                    if fate == Fate::ProcessLimit {
                        yield Output::console(process_limit_note(language, &config));
                        break 'attempts;
                    }
                    let how = match status.and_then(|s| s.code()) {
                        Some(code) => format!(" with exit code {code}"),
                        None => String::new(),
                    };
                    if let Some(which) = crate::limits::hit_by(&config.confine.limits, status) {
                        yield Output::console(crate::limits::hit_message(&format!("{} session", language.name()), which));
                        break 'attempts;
                    }
                    let lost = if language.keeps_state() { "; its state was lost and a new session will start with the next run" } else { "; a new one will start with the next run" };
                    yield Output::console(format!(
                        "\n[oi: the {} session exited{how}{lost}.]\n",
                        language.name()
                    ));
                }
            }
            break 'attempts;
        }
    }
}
