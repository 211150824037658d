//! One door to build an interpreter from settings: the model provider the model name selects,
//! the local computer with the sandbox, limits and secrets the settings ask for, the computer
//! API's link bound to the interpreter, what a program offers beside the computer (MCP
//! servers' tools), the approval judge, and for a server the model key bound to its endpoint.
//! `oi`, `oi-server` (one per session), `oi --mcp` (the judge and the computers' parts) and the
//! Python API (lazily, [`crate::lazy`]) all build theirs here.

use std::sync::Arc;

use oi_computer::{LocalComputer, SandboxSupport, Secrets};
use oi_core::computer_api::ApiLink;
use oi_core::policy::Judge;
use oi_core::{Computer, Interpreter, LanguageModel, Settings};

/// What a program adds to every computer it builds, e.g. MCP servers' tools beside `execute`
/// (`oi_mcp::offer::offer` with the connected servers): the computer in, the computer with the
/// offer out.
pub type Offer = Arc<dyn Fn(Arc<dyn Computer>) -> Arc<dyn Computer> + Send + Sync>;

/// The approval judge every interpreter built here has (and oi's MCP server uses): oi-judge's
/// hard-deny list, `deny`/`allow` rules and the policy.
pub fn judge() -> Arc<dyn Judge> {
    oi_judge::judge()
}

/// An interpreter with `settings`, `model` and `computer`, the judge installed and `link`
/// (the one `computer`'s Python sessions reach the computer API through) bound to it, so the
/// computer API's calls are served by this interpreter (its model, its settings, its spend).
pub(crate) fn wire(
    settings: Settings,
    model: Arc<dyn LanguageModel>,
    computer: Arc<dyn Computer>,
    link: &ApiLink,
) -> Interpreter {
    let interpreter = Interpreter::new(settings, model, computer, judge());
    link.bind(&interpreter);
    interpreter
}

/// What every computer a program builds shares: the kernel's sandbox support (probed once,
/// only when a sandbox is asked for) and the secrets no code may see.
#[derive(Clone)]
pub struct ComputerParts {
    support: Option<SandboxSupport>,
    secrets: Secrets,
}

impl std::fmt::Debug for ComputerParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComputerParts")
            .field("support", &self.support)
            .finish_non_exhaustive()
    }
}

impl ComputerParts {
    /// The shared parts for `settings`; `server_key` is the server's own key, withheld from
    /// code like the model's.
    pub fn new(settings: &Settings, server_key: Option<&str>) -> ComputerParts {
        let sandbox = &settings.computer.sandbox;
        let support = sandbox.restricts().then(oi_computer::probe);
        let key_vars = oi_llm::env::KNOWN_VARS
            .into_iter()
            .filter(|name| name.ends_with("_API_KEY"));
        let mut secrets = Secrets::of_oi(settings.llm.api_key.as_deref(), key_vars, |name| {
            std::env::var(name).ok()
        });
        if let Some(key) = server_key {
            secrets = secrets.with_value(key);
        }
        ComputerParts { support, secrets }
    }

    /// The computer for `settings`: its limits and sandbox, oi's secrets withheld from code,
    /// and the conversations directory kept out of sandboxed code's reach.
    pub fn computer(&self, settings: &Settings) -> LocalComputer {
        let mut computer = LocalComputer::new()
            .with_limits(settings.computer.limits)
            .with_secrets(self.secrets.clone());
        if let Some(dir) = settings.conversations_dir() {
            computer = computer.with_protected_dir(dir);
        }
        match self.support {
            Some(support) => {
                computer.with_sandbox_support(settings.computer.sandbox.clone(), support)
            }
            None => computer.with_sandbox(settings.computer.sandbox.clone()),
        }
    }
}

/// What every interpreter a program builds shares: one model provider (so one HTTP
/// connection pool; it picks the wire from each request's settings), the computers' parts and
/// the program's [`Offer`], if any.
#[derive(Clone)]
pub struct Assembly {
    model: Arc<dyn LanguageModel>,
    parts: ComputerParts,
    offer: Option<Offer>,
}

impl std::fmt::Debug for Assembly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assembly")
            .field("parts", &self.parts)
            .finish_non_exhaustive()
    }
}

impl Assembly {
    /// The shared parts for `settings`; `server_key` is the server's own key, withheld from
    /// code like the model's.
    pub fn new(settings: &Settings, server_key: Option<&str>) -> Assembly {
        let model = oi_llm::provider_for(&settings.llm, oi_llm::Env::from_process())
            .unwrap_or_else(oi_llm::unavailable);
        Assembly {
            model,
            parts: ComputerParts::new(settings, server_key),
            offer: None,
        }
    }

    /// A server's shared parts: first the model's key in `settings` is bound to the endpoint
    /// these settings send requests to (`oi_llm::key_binding`: a client that points the model
    /// elsewhere over the network gets no key), then [`Assembly::new`] with the server's own
    /// key `server_key`, withheld from code like the model's.
    pub fn for_server(settings: &mut Settings, server_key: Option<&str>) -> Assembly {
        oi_llm::key_binding::bind_key(&mut settings.llm, &oi_llm::Env::from_process());
        Assembly::new(settings, server_key)
    }

    /// Every computer built from now on also gets `offer` (e.g. MCP servers' tools).
    pub fn with_offer(mut self, offer: Offer) -> Assembly {
        self.offer = Some(offer);
        self
    }

    /// What to tell the user once at start: what the sandbox enforces here, and a warning
    /// when its workspace is the home directory or `/`.
    pub fn notes(&self, settings: &Settings) -> Vec<String> {
        let sandbox = &settings.computer.sandbox;
        let mut notes = Vec::new();
        if let (true, Some(support)) = (sandbox.restricts(), self.parts.support) {
            let network = if sandbox.network {
                "network allowed"
            } else {
                "network denied"
            };
            notes.push(format!(
                "sandbox: {}, {network} ({support})",
                sandbox.mode.as_str()
            ));
        }
        if let Some(warning) = oi_computer::broad_workspace_warning(sandbox) {
            notes.push(format!("sandbox: {warning}"));
        }
        if let Some(note) = oi_computer::git_writable_note(sandbox) {
            notes.push(format!("sandbox: {note}"));
        }
        notes
    }

    /// The parts every computer shares (for other builders of computers, e.g. MCP's sessions).
    pub fn parts(&self) -> &ComputerParts {
        &self.parts
    }

    /// An interpreter with `settings`, the shared model provider, the judge, and a new
    /// computer (see [`ComputerParts::computer`]) with the program's offer, whose Python
    /// sessions reach the computer API's calls that need oi (`computer.ai.*`, saving a skill)
    /// through a link bound to this interpreter.
    pub fn interpreter(&self, settings: Settings) -> Interpreter {
        let link = ApiLink::new();
        let local = self
            .parts
            .computer(&settings)
            .with_api(Arc::new(link.clone()));
        let mut computer: Arc<dyn Computer> = Arc::new(local);
        if let Some(offer) = &self.offer {
            computer = offer(computer);
        }
        wire(settings, self.model.clone(), computer, &link)
    }
}

/// An interpreter built from `settings` alone (a program that builds one).
pub fn build_interpreter(settings: Settings) -> Interpreter {
    Assembly::new(&settings, None).interpreter(settings)
}
