//! What every handler shares: the configuration, the sessions and the shutdown switch.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::config::ServerConfig;
use crate::limits::allowed_hosts::AllowedHosts;
use crate::limits::beneath::FileRoot;
use crate::sessions::settings_patch::NetworkPolicy;
use crate::sessions::{InterpreterFactory, Sessions};

/// The state of a running server.
#[derive(Clone)]
pub struct AppState {
    /// The configuration, read once at start.
    pub config: Arc<ServerConfig>,
    /// The live sessions.
    pub sessions: Arc<Sessions>,
    /// Cancelled when the server shuts down.
    pub shutdown: CancellationToken,
    /// The `Host` and `Origin` values the server answers to.
    pub hosts: Arc<AllowedHosts>,
    /// The working directory, opened once: uploads and downloads stay beneath it.
    pub files: Arc<FileRoot>,
    /// oi's tools over MCP (Streamable HTTP) at `/mcp`, when the server offers them.
    pub mcp: Option<Arc<McpService>>,
}

/// The `/mcp` service: one set of oi-mcp sessions per MCP session.
pub type McpService = oi_mcp::McpHttp;

impl AppState {
    /// A state whose sessions get interpreters from `factory`.
    pub fn new(config: ServerConfig, factory: InterpreterFactory) -> Self {
        let config = Arc::new(config);
        AppState {
            sessions: Arc::new(Sessions::new(config.clone(), factory)),
            hosts: Arc::new(AllowedHosts::new(
                &config.host,
                config.port,
                &config.allowed_hosts,
            )),
            files: Arc::new(FileRoot::open(&config.working_dir)),
            config,
            shutdown: CancellationToken::new(),
            mcp: None,
        }
    }

    /// The same state, serving MCP at `/mcp` with `service`.
    pub fn with_mcp(mut self, service: McpService) -> Self {
        self.mcp = Some(Arc::new(service));
        self
    }

    /// The same state, answering to the address it is actually bound to (the port may have
    /// been 0 in the configuration).
    pub fn bound_to(mut self, addr: SocketAddr) -> Self {
        self.hosts = Arc::new(AllowedHosts::new(
            &self.config.host,
            addr.port(),
            &self.config.allowed_hosts,
        ));
        self
    }

    /// What network clients may change.
    pub fn policy(&self) -> NetworkPolicy {
        NetworkPolicy {
            allow_auto_run: self.config.allow_network_auto_run,
            allow_credentials: self.config.allow_network_credentials,
        }
    }
}
