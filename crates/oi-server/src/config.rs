//! Server configuration: read once at start from the environment (spec c.2), then passed in.

use std::path::PathBuf;
use std::time::Duration;

pub use oi_session::InterruptMode;

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
    /// Serve oi's tools over MCP at `/mcp` (`--mcp`, `INTERPRETER_MCP=true`): off unless asked,
    /// as `/mcp` runs code and writes files with no model and no approval of the server's.
    pub mcp: bool,
    /// The most MCP sessions `/mcp` holds at once (`INTERPRETER_MCP_MAX_SESSIONS`, 32); a new
    /// one past it is refused with 503.
    pub mcp_max_sessions: usize,
    /// An MCP session with no request this long is closed, its code's processes ended
    /// (`INTERPRETER_MCP_IDLE_SECONDS`, 300).
    pub mcp_idle_timeout: Duration,
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
    /// Largest WebSocket message accepted, and largest user message built from several
    /// chunks, in bytes (`--max-message-bytes`, `INTERPRETER_MAX_MESSAGE_BYTES`).
    pub max_frame_bytes: usize,
    /// Largest HTTP body accepted, in bytes.
    pub max_body_bytes: usize,
    /// The directory uploads and downloads are confined to.
    pub working_dir: PathBuf,
    /// Host names (optionally `NAME:PORT`) accepted in `Host` and `Origin` besides the
    /// loopback names and the bound address (`--allowed-host`, `INTERPRETER_ALLOWED_HOSTS`).
    pub allowed_hosts: Vec<String>,
    /// Start on a non-loopback address without an API key (`--insecure-no-key`,
    /// `INTERPRETER_INSECURE_NO_KEY=true`).
    pub insecure_no_key: bool,
    /// The most connections open at once (`--max-connections`,
    /// `INTERPRETER_MAX_CONNECTIONS`); further ones get 503. Lowered at start to fit the
    /// process's descriptor limit.
    pub max_connections: usize,
    /// How long a client has to send a request's headers (`--header-timeout`,
    /// `INTERPRETER_HEADER_TIMEOUT`, seconds); also how long a kept-alive connection may idle.
    pub header_read_timeout: Duration,
    /// Largest input of a session not yet ended with `end`, in bytes (`--max-pending-bytes`,
    /// `INTERPRETER_MAX_PENDING_BYTES`); one message is at most `max_frame_bytes`.
    pub max_pending_bytes: usize,
    /// The session store shared by replicas (`--store`, `INTERPRETER_STORE`):
    /// `redis://HOST:PORT/DB`, or `memory`; none by default (sessions live in this process).
    pub store: Option<String>,
    /// How long a replica's lease on a session lasts unless renewed (`--lease_ttl_ms`,
    /// `INTERPRETER_LEASE_TTL_MS`; default 5 s); renewed every third of it.
    pub lease_ttl: Duration,
    /// On SIGTERM with a store, how long running turns may take to finish before the
    /// sessions are written to the store and their leases released (`--drain_seconds`,
    /// `INTERPRETER_DRAIN_SECONDS`; default 10).
    pub drain_timeout: Duration,
    /// Where sessions are kept across restarts when there is no store, one file per
    /// session (`--sessions_dir`; `oi-server` uses `~/.config/open-interpreter/sessions`
    /// when none is given); `None`: sessions live only in this process.
    pub sessions_dir: Option<PathBuf>,
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
            mcp: false,
            mcp_max_sessions: 32,
            mcp_idle_timeout: Duration::from_secs(5 * 60),
            allow_network_auto_run: false,
            allow_network_credentials: false,
            interrupt_mode: InterruptMode::Interrupt,
            max_sessions: 64,
            session_idle_timeout: Duration::from_secs(30 * 60),
            max_frame_bytes: 16 * 1024 * 1024,
            max_body_bytes: 64 * 1024 * 1024,
            working_dir: PathBuf::from("."),
            allowed_hosts: Vec::new(),
            insecure_no_key: false,
            max_connections: 4096,
            header_read_timeout: Duration::from_secs(10),
            max_pending_bytes: 32 * 1024 * 1024,
            store: None,
            lease_ttl: Duration::from_secs(5),
            drain_timeout: Duration::from_secs(10),
            sessions_dir: None,
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

/// Parses the number in variable `name`, if set and not blank.
fn number<T: std::str::FromStr>(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
) -> Result<Option<T>, ConfigError>
where
    T::Err: std::fmt::Display,
{
    let Some(value) = get(name).filter(|v| !v.trim().is_empty()) else {
        return Ok(None);
    };
    value
        .trim()
        .parse()
        .map(Some)
        .map_err(|e: T::Err| ConfigError::Invalid {
            name,
            value: value.clone(),
            reason: format!("{e} (expected a whole number)"),
        })
}

/// Splits a comma-separated list of host names, dropping blanks.
pub fn host_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .map(str::to_owned)
        .collect()
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
        config.mcp = is_true(get("INTERPRETER_MCP").as_deref());
        if let Some(n) = number(&get, "INTERPRETER_MCP_MAX_SESSIONS")? {
            config.mcp_max_sessions = n;
        }
        if let Some(secs) = number(&get, "INTERPRETER_MCP_IDLE_SECONDS")? {
            config.mcp_idle_timeout = Duration::from_secs(secs);
        }
        config.insecure_no_key = is_true(get("INTERPRETER_INSECURE_NO_KEY").as_deref());
        if let Some(hosts) = get("INTERPRETER_ALLOWED_HOSTS") {
            config.allowed_hosts = host_list(&hosts);
        }
        if let Some(n) = number(&get, "INTERPRETER_MAX_CONNECTIONS")? {
            config.max_connections = n;
        }
        if let Some(secs) = number(&get, "INTERPRETER_HEADER_TIMEOUT")? {
            config.header_read_timeout = Duration::from_secs(secs);
        }
        if let Some(n) = number(&get, "INTERPRETER_MAX_MESSAGE_BYTES")? {
            config.max_frame_bytes = n;
        }
        if let Some(n) = number(&get, "INTERPRETER_MAX_PENDING_BYTES")? {
            config.max_pending_bytes = n;
        }
        config.store = get("INTERPRETER_STORE").filter(|s| !s.trim().is_empty());
        if let Some(ms) = number(&get, "INTERPRETER_LEASE_TTL_MS")? {
            config.lease_ttl = Duration::from_millis(ms);
        }
        if let Some(secs) = number(&get, "INTERPRETER_DRAIN_SECONDS")? {
            config.drain_timeout = Duration::from_secs(secs);
        }
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
    fn hardening_variables() {
        let config = ServerConfig::from_env(env(&[
            ("INTERPRETER_ALLOWED_HOSTS", " oi.lan, ,box:9000 "),
            ("INTERPRETER_INSECURE_NO_KEY", "true"),
            ("INTERPRETER_MAX_CONNECTIONS", "10"),
            ("INTERPRETER_HEADER_TIMEOUT", "3"),
            ("INTERPRETER_MAX_MESSAGE_BYTES", "1000"),
            ("INTERPRETER_MAX_PENDING_BYTES", "2000"),
        ]))
        .unwrap();
        assert_eq!(config.allowed_hosts, ["oi.lan", "box:9000"]);
        assert!(config.insecure_no_key);
        assert_eq!(config.max_connections, 10);
        assert_eq!(config.header_read_timeout, Duration::from_secs(3));
        assert_eq!(
            (config.max_frame_bytes, config.max_pending_bytes),
            (1000, 2000)
        );
        let err =
            ServerConfig::from_env(env(&[("INTERPRETER_MAX_CONNECTIONS", "lots")])).unwrap_err();
        assert!(
            err.to_string().contains("INTERPRETER_MAX_CONNECTIONS=lots"),
            "{err}"
        );
    }

    #[test]
    fn bad_port() {
        let err = ServerConfig::from_env(env(&[("INTERPRETER_PORT", "eighty")])).unwrap_err();
        assert!(err.to_string().contains("INTERPRETER_PORT=eighty"));
    }
}
