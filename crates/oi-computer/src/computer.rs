//! `LocalComputer`: runs code in persistent sessions on this machine.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use oi_core::computer::{Computer, LanguageSpec, Output, OutputStream};
use tokio::io::AsyncWriteExt;
use tokio::time::Instant;

use crate::confine::{Confine, Gate};
use crate::engine;
use crate::environment::Secrets;
use crate::languages::{ALL, Language};
use crate::limits::ResourceLimits;
use crate::merge_outputs::merge_outputs;
use crate::output_markers::MarkerFilter;
use crate::sandbox_policy::SandboxPolicy;
use crate::sandbox_support::SandboxSupport;
use crate::screenshot::Shooters;
use crate::session::Session;
use crate::session_handle::{Fate, Handle, Item};

/// The default cap on the output of one run, in bytes.
pub const DEFAULT_OUTPUT_CAP: usize = 1024 * 1024;

/// Settings shared by every run.
#[derive(Debug, Clone)]
struct Config {
    output_cap: usize,
    grace: Duration,
    timeout: Option<Duration>,
    idle_timeout: Option<Duration>,
    /// Sandbox policy and resource limits of every session.
    confine: Arc<Confine>,
}

/// The session of one language (all its aliases share it).
#[derive(Debug)]
struct Slot {
    language: Language,
    state: Arc<tokio::sync::Mutex<SlotState>>,
    /// The live session's handle, reachable without async (stop, terminate, drop).
    handle: std::sync::Mutex<Option<Arc<Handle>>>,
}

#[derive(Debug, Default)]
struct SlotState {
    session: Option<Session>,
    nonce: String,
    /// The last session was killed; the next run says that its state was lost.
    lost_state: bool,
}

impl Slot {
    fn handle(&self) -> Option<Arc<Handle>> {
        self.handle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn set_handle(&self, handle: Option<Arc<Handle>>) {
        *self.handle.lock().unwrap_or_else(|e| e.into_inner()) = handle;
    }
}

/// Runs code on this machine, one persistent session per language, each in its own unit
/// (process group, and cgroup or PID namespace where available). Sessions start on the first
/// run; dropping the computer kills every one of them.
#[derive(Debug)]
pub struct LocalComputer {
    slots: Vec<Arc<Slot>>,
    next_run: Arc<AtomicU64>,
    config: Config,
    /// Screenshots of HTML/React pages being taken.
    shooters: Arc<Shooters>,
}

impl Default for LocalComputer {
    fn default() -> Self {
        Self::new()
    }
}

impl LocalComputer {
    /// A computer with no session started yet (works outside a tokio runtime).
    pub fn new() -> Self {
        LocalComputer {
            slots: ALL
                .into_iter()
                .map(|language| {
                    Arc::new(Slot {
                        language,
                        state: Arc::new(tokio::sync::Mutex::new(SlotState::default())),
                        handle: std::sync::Mutex::new(None),
                    })
                })
                .collect(),
            next_run: Arc::new(AtomicU64::new(1)),
            shooters: Arc::new(Shooters::default()),
            config: Config {
                output_cap: DEFAULT_OUTPUT_CAP,
                grace: Duration::from_secs(1),
                timeout: None,
                idle_timeout: None,
                confine: Arc::new(Confine::default()),
            },
        }
    }

    /// Runs every session under `policy` (off by default). Probes the machine now when the
    /// policy restricts anything: where it cannot enforce the policy, each run is refused with
    /// one console line, unless the policy allows the unsandboxed fallback, in which case code
    /// runs with what can be enforced and the first run says so once. Takes effect for
    /// sessions started afterwards.
    pub fn with_sandbox(self, policy: SandboxPolicy) -> Self {
        let support = policy.restricts().then(crate::probe::probe);
        self.with_confine(policy, support)
    }

    /// [`LocalComputer::with_sandbox`] with a given `support` instead of a probe (tests, or a
    /// caller that probed once already; also decides whether sessions use namespaces and
    /// cgroups).
    pub fn with_sandbox_support(self, policy: SandboxPolicy, support: SandboxSupport) -> Self {
        self.with_confine(policy, Some(support))
    }

    fn with_confine(mut self, policy: SandboxPolicy, support: Option<SandboxSupport>) -> Self {
        let old = &self.config.confine;
        let mut confine = Confine::new(policy, support, old.limits);
        confine.secrets = old.secrets.clone();
        confine.protected = old.protected.clone();
        self.config.confine = Arc::new(confine);
        self
    }

    /// Withholds `secrets` (variables by name and by value) from every session's environment,
    /// in every mode, unless the policy passes one through by name.
    pub fn with_secrets(mut self, secrets: Secrets) -> Self {
        let mut confine = (*self.config.confine).clone();
        confine.secrets = secrets;
        self.config.confine = Arc::new(confine);
        self
    }

    /// Also keeps sandboxed code from writing beneath `dir` (oi's config directory always
    /// is), e.g. a conversations directory kept elsewhere.
    pub fn with_protected_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        let mut confine = (*self.config.confine).clone();
        confine.protected.push(dir.into());
        self.config.confine = Arc::new(confine);
        self
    }

    /// Applies `limits` to every session started afterwards (none by default). A session that
    /// hits one is killed and the run says which limit it hit; the next run starts a new one.
    pub fn with_limits(mut self, limits: ResourceLimits) -> Self {
        let mut confine = (*self.config.confine).clone();
        confine.limits = limits;
        self.config.confine = Arc::new(confine);
        self
    }

    /// The sandbox policy sessions run under.
    pub fn sandbox(&self) -> &SandboxPolicy {
        &self.config.confine.policy
    }

    /// What the machine can enforce, as probed by [`LocalComputer::with_sandbox`] (or given;
    /// without either, found now without the namespace probe).
    pub fn sandbox_support(&self) -> SandboxSupport {
        self.config.confine.support()
    }

    /// The resource limits sessions run under.
    pub fn limits(&self) -> ResourceLimits {
        self.config.confine.limits
    }

    /// Stops any run that takes longer than `timeout` (off by default).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.config.timeout = Some(timeout);
        self
    }

    /// Stops any run that prints nothing for `idle` (off by default).
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.config.idle_timeout = Some(idle);
        self
    }

    /// Caps the output one run forwards, in bytes (default [`DEFAULT_OUTPUT_CAP`]). The first
    /// three quarters stream live; after that only the last quarter is kept, and shown when the
    /// run ends after a marker line with the number of bytes omitted and the total size.
    pub fn with_output_cap(mut self, bytes: usize) -> Self {
        self.config.output_cap = bytes.max(1);
        self
    }

    /// How long an interrupted run may take to stop before its session is killed (default 1 s).
    pub fn with_stop_grace(mut self, grace: Duration) -> Self {
        self.config.grace = grace;
        self
    }

    /// Runs `code` and returns all its output at once: `active_line` outputs dropped and
    /// consecutive outputs of the same kind, format and recipient concatenated.
    pub async fn run_collect(&self, language: &str, code: &str) -> Vec<Output> {
        let outputs: Vec<Output> = self.run(language, code).collect().await;
        merge_outputs(outputs)
    }

    /// The process group ids of the sessions now running (for diagnostics and tests).
    pub fn process_groups(&self) -> Vec<u32> {
        self.slots
            .iter()
            .filter_map(|slot| slot.handle())
            .filter(|h| h.usable())
            .map(|h| h.pgid())
            .collect()
    }
}

impl Computer for LocalComputer {
    fn languages(&self) -> Vec<LanguageSpec> {
        ALL.into_iter().map(Language::spec).collect()
    }

    fn run(&self, language: &str, code: &str) -> OutputStream {
        let Some(language) = Language::find(language) else {
            let message = format!("`{}` disabled or not supported.", language.trim());
            return futures::stream::once(async move { Output::console(message) }).boxed();
        };
        if language.is_shown() {
            let env = self
                .config
                .confine
                .inherit()
                .environment(std::env::vars_os(), &[]);
            return crate::html::show(language, code.to_owned(), Arc::clone(&self.shooters), env)
                .boxed();
        }
        let slot = Arc::clone(&self.slots[language.index()]);
        run_stream(
            slot,
            code.to_owned(),
            self.config.clone(),
            Arc::clone(&self.next_run),
        )
        .boxed()
    }

    fn stop(&self) {
        self.shooters.kill_all();
        for slot in &self.slots {
            if let Some(handle) = slot.handle() {
                handle.stop();
            }
        }
    }

    fn terminate(&self) -> BoxFuture<'static, ()> {
        self.shooters.kill_all();
        let handles: Vec<Arc<Handle>> = self
            .slots
            .iter()
            .filter_map(|slot| slot.handle.lock().unwrap_or_else(|e| e.into_inner()).take())
            .collect();
        for handle in &handles {
            handle.mark_terminated();
            handle.unit().terminate();
        }
        let slots: Vec<Arc<Slot>> = self.slots.clone();
        Box::pin(async move {
            let deadline = Instant::now() + Duration::from_millis(300);
            while Instant::now() < deadline && handles.iter().any(|h| h.unit().alive()) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            for handle in &handles {
                handle.unit().finish();
            }
            for slot in slots {
                if let Ok(mut state) = slot.state.try_lock() {
                    state.session = None;
                }
            }
        })
    }
}

impl Drop for LocalComputer {
    fn drop(&mut self) {
        self.shooters.kill_all();
        for slot in &self.slots {
            if let Some(handle) = slot.handle.lock().unwrap_or_else(|e| e.into_inner()).take() {
                handle.kill(Fate::Terminated);
                handle.unit().finish();
            }
        }
    }
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

fn process_limit_note(language: Language, config: &Config) -> String {
    let max = config.confine.limits.max_processes.unwrap_or(0);
    crate::limits::hit_message(
        &format!(
            "{} session (more than {max} processes at once)",
            language.name()
        ),
        "process",
    )
}

fn run_stream(
    slot: Arc<Slot>,
    code: String,
    config: Config,
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
