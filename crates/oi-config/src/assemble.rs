//! One way to build an interpreter from settings: the model provider the model name selects,
//! and the local computer with the sandbox, limits and secrets the settings ask for. `oi`,
//! `oi-server` (one per session) and the Python API all build theirs here.

use std::sync::Arc;

use oi_computer::{LocalComputer, SandboxSupport, Secrets};
use oi_core::computer_api::ApiLink;
use oi_core::{Interpreter, LanguageModel, Settings};

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
/// connection pool; it picks the wire from each request's settings) and the computers' parts.
#[derive(Clone)]
pub struct Assembly {
    model: Arc<dyn LanguageModel>,
    parts: ComputerParts,
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
        }
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

    /// The computer for `settings` (see [`ComputerParts::computer`]), whose Python sessions
    /// reach the computer API's calls that need oi (`computer.ai.*`, saving a skill) through
    /// `link`, once [`Assembly::interpreter_on`] binds it to the interpreter.
    pub fn computer(&self, settings: &Settings, link: &ApiLink) -> LocalComputer {
        self.parts
            .computer(settings)
            .with_api(Arc::new(link.clone()))
    }

    /// An interpreter with `settings`, the shared model provider and `computer` (one built by
    /// [`Assembly::computer`] with `link`, possibly wrapped, e.g. to add MCP servers' tools);
    /// `link` is bound to it, so the computer API's calls are served by this interpreter
    /// (its model, its settings, its spend and budget).
    pub fn interpreter_on(
        &self,
        settings: Settings,
        computer: Arc<dyn oi_core::Computer>,
        link: &ApiLink,
    ) -> Interpreter {
        let interpreter =
            Interpreter::new(settings, self.model.clone(), computer, oi_judge::judge());
        link.bind(&interpreter);
        interpreter
    }

    /// An interpreter with `settings`, the shared model provider and a new computer.
    pub fn interpreter(&self, settings: Settings) -> Interpreter {
        let link = ApiLink::new();
        let computer = self.computer(&settings, &link);
        self.interpreter_on(settings, Arc::new(computer), &link)
    }
}

/// An interpreter built from `settings` alone (a program that builds one).
pub fn build_interpreter(settings: Settings) -> Interpreter {
    Assembly::new(&settings, None).interpreter(settings)
}
