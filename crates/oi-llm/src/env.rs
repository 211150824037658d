//! The environment variables a provider reads, injected so tests do not depend on the real
//! environment.

use std::collections::BTreeMap;

/// The variables a provider may read ([`KNOWN_VARS`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<String, String>,
}

/// The variables [`Env::from_process`] copies.
pub const KNOWN_VARS: [&str; 9] = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OLLAMA_HOST",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OI_MODEL_PATH",
    crate::reply_limits::REPLY_BYTES_VAR,
    crate::reply_limits::LINE_BYTES_VAR,
    crate::reply_limits::BODY_BYTES_VAR,
];

impl Env {
    /// No variables at all.
    pub fn empty() -> Self {
        Env::default()
    }

    /// The [`KNOWN_VARS`] of this process.
    pub fn from_process() -> Self {
        let mut env = Env::empty();
        for key in KNOWN_VARS {
            if let Ok(value) = std::env::var(key) {
                env.vars.insert(key.to_owned(), value);
            }
        }
        env
    }

    /// The same environment with `key` set to `value`.
    pub fn with(mut self, key: &str, value: &str) -> Self {
        self.vars.insert(key.to_owned(), value.to_owned());
        self
    }

    /// A variable's value, if set and not blank.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.vars
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }
}
