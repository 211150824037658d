//! How the Python API wires an interpreter: the model provider and the computer for a set of
//! settings, as `oi` does (crates/oi-cli/src/app.rs). Kept in this one file so it can call
//! the shared builder once there is one.

use std::sync::Arc;

use oi_core::{Interpreter, LanguageModel, Settings};

use crate::live_computer::LiveComputer;
use crate::live_model::LiveModel;

/// An interpreter with these settings; its provider and its computer are built on first use.
pub fn interpreter(settings: Settings) -> (Interpreter, Arc<LiveComputer>) {
    let computer = Arc::new(LiveComputer::default());
    let interpreter = Interpreter::new(settings, Arc::new(LiveModel::default()), computer.clone());
    (interpreter, computer)
}

/// The provider the model name selects; settings that cannot work give a model whose first
/// request says why.
pub fn model(llm: &oi_core::LlmSettings, env: oi_llm::Env) -> Arc<dyn LanguageModel> {
    oi_llm::provider_for(llm, env).unwrap_or_else(oi_llm::unavailable)
}

/// The local computer: no sandbox (as the original's Python API), the model's keys withheld
/// from the code by name and by value, oi's conversations directory kept out of its reach.
pub fn computer(settings: &Settings) -> oi_computer::LocalComputer {
    let key_vars = oi_llm::env::KNOWN_VARS
        .into_iter()
        .filter(|name| name.ends_with("_API_KEY"));
    let secrets = oi_computer::Secrets::of_oi(settings.llm.api_key.as_deref(), key_vars, |name| {
        std::env::var(name).ok()
    });
    let mut computer = oi_computer::LocalComputer::new().with_secrets(secrets);
    if let Some(dir) = settings.conversations_dir() {
        computer = computer.with_protected_dir(dir);
    }
    computer
}
