//! Server configuration: read once at start from the environment (spec c.2), then passed in.

use std::path::PathBuf;
use std::time::Duration;

/// What a new `start` chunk does while a turn is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InterruptMode {
    /// Stop the running turn at once (Open Interpreter's behaviour).
    #[default]
    Interrupt,
    /// Let the running turn finish, then answer the new input.
    Queue,
}

/// Everything the server needs to know that is not a model setting.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// Bind host (`INTERPRETER_HOST`, default `127.0.0.1`).
    pub host: String,
    /// Bind port (`INTERPRETER_PORT`, default 8000).
    pub port: u16,
    /// The key clients must present (`INTERPRETER_API_KEY`); `None` accepts everyone.
    pub api_key: Option<String>,
    /// Whether WebSocket clients must authenticate when a key is set
    /// (`INTERPRETER_REQUIRE_AUTH=False` turns it off, for compatibility).
    pub require_auth: bool,
    /// Acknowledge mode (`INTERPRETER_REQUIRE_ACKNOWLEDGE=true`, spec c.6).
    pub require_acknowledge: bool,
    /// How long an outgoing chunk waits for its ack before it is sent again.
    pub ack_timeout: Duration,
    /// Register `/run`, `/upload`, `/download` (`INTERPRETER_INSECURE_ROUTES=true`).
    pub insecure_routes: bool,
    /// Let network clients turn `auto_run` on (`--allow-network-auto-run`).
    pub allow_network_auto_run: bool,
    /// Let network clients change `llm.api_key` and `llm.api_base`
    /// (`--allow-network-credentials`).
    pub allow_network_credentials: bool,
    /// What a new input does while a turn runs.
    pub interrupt_mode: InterruptMode,
    /// The most sessions alive at once.
    pub max_sessions: usize,
    /// Sessions idle (no connection, no turn) this long are reaped.
    pub session_idle_timeout: Duration,
    /// Largest WebSocket frame accepted, in bytes.
    pub max_frame_bytes: usize,
    /// Largest HTTP body accepted, in bytes.
    pub max_body_bytes: usize,
    /// The directory uploads and downloads are confined to.
    pub working_dir: PathBuf,
    /// What code may touch, for every session (set by the server's own flags only; clients
    /// cannot change it).
    pub sandbox: oi_computer::SandboxPolicy,
    /// Resource limits for every session's language processes.
    pub limits: oi_computer::ResourceLimits,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            host: "127.0.0.1".to_owned(),
            port: 8000,
            api_key: None,
            require_auth: true,
            require_acknowledge: false,
            ack_timeout: Duration::from_secs(2),
            insecure_routes: false,
            allow_network_auto_run: false,
            allow_network_credentials: false,
            interrupt_mode: InterruptMode::Interrupt,
            max_sessions: 64,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_frame_bytes: 16 * 1024 * 1024,
            max_body_bytes: 64 * 1024 * 1024,
            working_dir: PathBuf::from("."),
            sandbox: oi_computer::SandboxPolicy::default(),
            limits: oi_computer::ResourceLimits::default(),
        }
    }
}

/// Why the environment could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A variable has a value that cannot be used.
    #[error("{name}={value} is not valid: {reason}")]
    Invalid {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What is wrong.
        reason: String,
    },
}

fn is_true(value: Option<&str>) -> bool {
    value.is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

impl ServerConfig {
    /// The configuration from environment variables, looked up through `get` (use
    /// `|k| std::env::var(k).ok()` for the process environment).
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let mut config = ServerConfig::default();
        if let Some(host) = get("INTERPRETER_HOST").filter(|h| !h.trim().is_empty()) {
            config.host = host.trim().to_owned();
        }
        if let Some(port) = get("INTERPRETER_PORT").filter(|p| !p.trim().is_empty()) {
            config.port =
                port.trim()
                    .parse()
                    .map_err(|e: std::num::ParseIntError| ConfigError::Invalid {
                        name: "INTERPRETER_PORT",
                        value: port.clone(),
                        reason: e.to_string(),
                    })?;
        }
        config.api_key = get("INTERPRETER_API_KEY").filter(|k| !k.is_empty());
        config.require_auth = get("INTERPRETER_REQUIRE_AUTH").as_deref() != Some("False");
        config.require_acknowledge = is_true(get("INTERPRETER_REQUIRE_ACKNOWLEDGE").as_deref());
        config.insecure_routes = is_true(get("INTERPRETER_INSECURE_ROUTES").as_deref());
        if let Ok(dir) = std::env::current_dir() {
            config.working_dir = dir;
        }
        Ok(config)
    }

    /// Whether `key` is accepted (every key is when none is configured).
    pub fn key_ok(&self, key: Option<&str>) -> bool {
        match &self.api_key {
            None => true,
            Some(expected) => {
                key.is_some_and(|k| constant_time_eq(k.as_bytes(), expected.as_bytes()))
            }
        }
    }

    /// Whether WebSocket clients must authenticate before anything else.
    pub fn ws_auth_required(&self) -> bool {
        self.api_key.is_some() && self.require_auth
    }
}

/// Compares without leaking where the first difference is.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn defaults() {
        let config = ServerConfig::from_env(env(&[])).unwrap();
        assert_eq!((config.host.as_str(), config.port), ("127.0.0.1", 8000));
        assert!(config.api_key.is_none() && !config.insecure_routes && !config.require_acknowledge);
        assert!(config.key_ok(None));
        assert!(!config.ws_auth_required());
    }

    #[test]
    fn reads_every_variable() {
        let config = ServerConfig::from_env(env(&[
            ("INTERPRETER_HOST", "0.0.0.0"),
            ("INTERPRETER_PORT", "9000"),
            ("INTERPRETER_API_KEY", "k"),
            ("INTERPRETER_REQUIRE_ACKNOWLEDGE", "TRUE"),
            ("INTERPRETER_INSECURE_ROUTES", "true"),
        ]))
        .unwrap();
        assert_eq!((config.host.as_str(), config.port), ("0.0.0.0", 9000));
        assert!(config.require_acknowledge && config.insecure_routes);
        assert!(config.key_ok(Some("k")) && !config.key_ok(Some("x")) && !config.key_ok(None));
        assert!(config.ws_auth_required());
        let relaxed = ServerConfig::from_env(env(&[
            ("INTERPRETER_API_KEY", "k"),
            ("INTERPRETER_REQUIRE_AUTH", "False"),
        ]))
        .unwrap();
        assert!(!relaxed.ws_auth_required());
    }

    #[test]
    fn bad_port() {
        let err = ServerConfig::from_env(env(&[("INTERPRETER_PORT", "eighty")])).unwrap_err();
        assert!(err.to_string().contains("INTERPRETER_PORT=eighty"));
    }
}
