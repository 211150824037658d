//! `LocalComputer`: runs code in persistent sessions on this machine.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use oi_core::computer::{Computer, LanguageSpec, Output, OutputStream};
use oi_core::settings::computer::ComputerSettings;
use tokio::time::Instant;

use crate::languages::screenshot::Shooters;
use crate::languages::{ALL, Language};
use crate::merge_outputs::merge_outputs;
use crate::policy::environment::Secrets;
use crate::policy::limits::ResourceLimits;
use crate::policy::sandbox_policy::{SandboxMode, SandboxPolicy};
use crate::policy::sandbox_support::SandboxSupport;
use crate::process::session_handle::{Fate, Handle};
use crate::run::{RunConfig, run_stream};
use crate::sandbox::confine::Confine;
use crate::slot::Slot;

/// The default cap on the output of one run, in bytes.
pub const DEFAULT_OUTPUT_CAP: usize = 1024 * 1024;

/// Runs code on this machine, one persistent session per language, each in its own unit
/// (process group, and cgroup or PID namespace where available). Sessions start on the first
/// run; dropping the computer kills every one of them.
#[derive(Debug)]
pub struct LocalComputer {
    slots: Vec<Arc<Slot>>,
    next_run: Arc<AtomicU64>,
    config: RunConfig,
    /// The confinement of the policy the last run asked for (`None`: the configured one),
    /// kept while runs ask for the same.
    current: std::sync::Mutex<Option<Arc<Confine>>>,
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
                .map(|language| Arc::new(Slot::new(language)))
                .collect(),
            next_run: Arc::new(AtomicU64::new(1)),
            shooters: Arc::new(Shooters::default()),
            current: std::sync::Mutex::new(None),
            config: RunConfig {
                output_cap: DEFAULT_OUTPUT_CAP,
                grace: Duration::from_secs(1),
                timeout: None,
                idle_timeout: None,
                confine: Arc::new(Confine::default()),
                door: None,
                api: false,
            },
        }
    }

    /// Runs every session under `policy` (off by default). Probes the machine now when the
    /// policy restricts anything: where it cannot enforce the policy, each run is refused with
    /// one console line, unless the policy allows the unsandboxed fallback, in which case code
    /// runs with what can be enforced and the first run says so once. Takes effect for
    /// sessions started afterwards.
    pub fn with_sandbox(self, policy: SandboxPolicy) -> Self {
        let support = policy.restricts().then(crate::sandbox::probe::probe);
        self.with_confine(policy, support)
    }

    /// [`LocalComputer::with_sandbox`] with a given `support` instead of a probe (tests, or a
    /// caller that probed once already; also decides whether sessions use namespaces and
    /// cgroups).
    pub fn with_sandbox_support(self, policy: SandboxPolicy, support: SandboxSupport) -> Self {
        self.with_confine(policy, Some(support))
    }

    fn with_confine(mut self, mut policy: SandboxPolicy, support: Option<SandboxSupport>) -> Self {
        // Set by the user now: the workspace is resolved here, once (sessions open the
        // canonical path without following links; policies taken from a run's settings are
        // canonical since they were set, see oi-core).
        policy.workspace = oi_core::settings::computer::normalized(&policy.workspace);
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

    /// Serves the computer API's calls that need oi (`computer.ai.*`, `computer.skills.save`)
    /// to the code's Python session, for runs that import the API (see `api_door.rs`).
    pub fn with_api(mut self, api: Arc<dyn oi_core::computer_api::ComputerApi>) -> Self {
        self.config.door = Some(crate::api_door::Door(api));
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

    /// Runs `code` under the sandbox and limits this computer was configured with (see
    /// [`Computer::run`], which takes them from the caller at each run).
    pub fn run(&self, language: &str, code: &str) -> OutputStream {
        Computer::run(self, language, code, &self.configured())
    }

    /// The sandbox and limits this computer was configured with.
    fn configured(&self) -> ComputerSettings {
        ComputerSettings {
            sandbox: self.config.confine.policy.clone(),
            limits: self.config.confine.limits,
            api: false,
        }
    }

    /// The confinement for `wanted`: the one last used while it asks for the same, else a new
    /// one with this computer's secrets and protected directories (the machine probed once
    /// more when it now asks for a sandbox).
    fn confine_for(&self, wanted: &ComputerSettings) -> Arc<Confine> {
        let same = |c: &Confine| c.policy == wanted.sandbox && c.limits == wanted.limits;
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        let last = current
            .clone()
            .unwrap_or_else(|| Arc::clone(&self.config.confine));
        if same(&last) {
            return last;
        }
        let base = &self.config.confine;
        let support = (base.policy.mode != SandboxMode::Off).then(|| base.support());
        let mut confine = Confine::new(wanted.sandbox.clone(), support, wanted.limits);
        confine.secrets = base.secrets.clone();
        confine.protected = base.protected.clone();
        let confine = Arc::new(confine);
        *current = Some(Arc::clone(&confine));
        confine
    }

    /// The confinement runs use now (the last asked for, else the configured one).
    fn confine_now(&self) -> Arc<Confine> {
        let current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        current
            .clone()
            .unwrap_or_else(|| Arc::clone(&self.config.confine))
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

    fn run(&self, language: &str, code: &str, policy: &ComputerSettings) -> OutputStream {
        let Some(language) = Language::find(language) else {
            let message = format!("`{}` disabled or not supported.", language.trim());
            return futures::stream::once(async move { Output::console(message) }).boxed();
        };
        let confine = self.confine_for(policy);
        if language.is_shown() {
            let env = confine.inherit().environment(std::env::vars_os(), &[]);
            return crate::languages::html::show(
                language,
                code.to_owned(),
                Arc::clone(&self.shooters),
                env,
                confine.network_denied(),
            )
            .boxed();
        }
        let slot = Arc::clone(&self.slots[language.index()]);
        let config = RunConfig {
            confine,
            api: policy.api,
            ..self.config.clone()
        };
        run_stream(slot, code.to_owned(), config, Arc::clone(&self.next_run)).boxed()
    }

    fn prepare(&self, language: &str) {
        let Some(language) = Language::find(language) else {
            return;
        };
        if language.is_shown() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let slot = Arc::clone(&self.slots[language.index()]);
        let config = RunConfig {
            confine: self.confine_now(),
            ..self.config.clone()
        };
        runtime.spawn(crate::run::prepare_session(slot, config));
    }

    fn session_dir(&self, language: &str) -> oi_core::computer::SessionDir {
        match Language::find(language) {
            Some(language) if !language.is_shown() => self.slots[language.index()].session_dir(),
            _ => oi_core::computer::SessionDir::NotStarted,
        }
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
            .filter_map(|slot| slot.take_handle())
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
            if let Some(handle) = slot.take_handle() {
                handle.kill(Fate::Terminated);
                handle.unit().finish();
            }
        }
    }
}
