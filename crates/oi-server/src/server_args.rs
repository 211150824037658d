//! The server's own flags (what `oi-server` and `oi --server` take besides the settings
//! flags): where to listen, who may connect, and how much the server takes. They override the
//! `INTERPRETER_*` environment variables.

use std::time::Duration;

use clap::Args;

use crate::config::{InterruptMode, ServerConfig};

/// The server's flags.
#[derive(Debug, Clone, Default, Args)]
pub struct ServerArgs {
    /// Address to bind (default `INTERPRETER_HOST` or 127.0.0.1).
    #[arg(long = "host")]
    pub host: Option<String>,
    /// Port to bind (default `INTERPRETER_PORT` or 8000).
    #[arg(long = "port")]
    pub port: Option<u16>,
    /// Another name (NAME or NAME:PORT) clients may use in Host and Origin; repeatable
    /// (adds to INTERPRETER_ALLOWED_HOSTS).
    #[arg(long = "allowed_host", value_name = "NAME")]
    pub allowed_host: Vec<String>,
    /// Serve beyond loopback without INTERPRETER_API_KEY (anyone who can reach the port can
    /// run code).
    #[arg(long = "insecure_no_key")]
    pub insecure_no_key: bool,
    /// Let network clients turn `auto_run` on or loosen the approval rules (POST /settings,
    /// `{AUTO_RUN_ON}`).
    #[arg(long = "allow_network_auto_run")]
    pub allow_network_auto_run: bool,
    /// Let network clients change `llm.api_key` and `llm.api_base`.
    #[arg(long = "allow_network_credentials")]
    pub allow_network_credentials: bool,
    /// A new message waits for the running turn instead of interrupting it.
    #[arg(long = "queue")]
    pub queue: bool,
    /// The most sessions alive at once.
    #[arg(long = "max_sessions")]
    pub max_sessions: Option<usize>,
    /// Seconds after which an unconnected, idle session is reaped.
    #[arg(long = "session_idle_timeout")]
    pub session_idle_timeout: Option<u64>,
    /// The most connections open at once; more get HTTP 503 (default 4096).
    #[arg(long = "max_connections")]
    pub max_connections: Option<usize>,
    /// Seconds a client has to send a request's headers (default 10).
    #[arg(long = "header_timeout")]
    pub header_timeout: Option<u64>,
    /// Largest WebSocket message, and largest user message, in bytes (default 16 MiB).
    #[arg(long = "max_message_bytes")]
    pub max_message_bytes: Option<usize>,
    /// Most bytes of a session's input waiting for its `end` (default 32 MiB).
    #[arg(long = "max_pending_bytes")]
    pub max_pending_bytes: Option<usize>,
    /// Session store shared by replicas: redis://HOST:PORT/DB (default INTERPRETER_STORE, or
    /// none: sessions live in this process).
    #[arg(long = "store", value_name = "URL")]
    pub store: Option<String>,
    /// Milliseconds a replica's lease on a session lasts unless renewed (default 5000).
    #[arg(long = "lease_ttl_ms")]
    pub lease_ttl_ms: Option<u64>,
    /// On SIGTERM with a store: seconds running turns get to finish (default 10).
    #[arg(long = "drain_seconds")]
    pub drain_seconds: Option<u64>,
    /// Where sessions are kept across restarts when there is no store (default
    /// ~/.config/open-interpreter/sessions).
    #[arg(long = "sessions_dir", value_name = "DIR")]
    pub sessions_dir: Option<std::path::PathBuf>,
}

impl ServerArgs {
    /// Lays these flags over `config` (read from the environment).
    pub fn apply(&self, config: &mut ServerConfig) {
        if let Some(host) = &self.host {
            config.host.clone_from(host);
        }
        if let Some(port) = self.port {
            config.port = port;
        }
        config
            .allowed_hosts
            .extend(self.allowed_host.iter().cloned());
        config.insecure_no_key |= self.insecure_no_key;
        config.allow_network_auto_run |= self.allow_network_auto_run;
        config.allow_network_credentials |= self.allow_network_credentials;
        if self.queue {
            config.interrupt_mode = InterruptMode::Queue;
        }
        if let Some(n) = self.max_sessions {
            config.max_sessions = n;
        }
        if let Some(secs) = self.session_idle_timeout {
            config.session_idle_timeout = Duration::from_secs(secs);
        }
        if let Some(n) = self.max_connections {
            config.max_connections = n;
        }
        if let Some(secs) = self.header_timeout {
            config.header_read_timeout = Duration::from_secs(secs);
        }
        if let Some(n) = self.max_message_bytes {
            config.max_frame_bytes = n;
        }
        if let Some(n) = self.max_pending_bytes {
            config.max_pending_bytes = n;
        }
        if let Some(store) = &self.store {
            config.store = Some(store.clone());
        }
        if let Some(ms) = self.lease_ttl_ms {
            config.lease_ttl = Duration::from_millis(ms);
        }
        if let Some(secs) = self.drain_seconds {
            config.drain_timeout = Duration::from_secs(secs);
        }
        if let Some(dir) = &self.sessions_dir {
            config.sessions_dir = Some(dir.clone());
        }
    }
}
