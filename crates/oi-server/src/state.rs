//! What every handler shares: the configuration, the sessions and the shutdown switch.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::config::ServerConfig;
use crate::sessions::{InterpreterFactory, Sessions};
use crate::settings_patch::NetworkPolicy;

/// The state of a running server.
#[derive(Clone)]
pub struct AppState {
    /// The configuration, read once at start.
    pub config: Arc<ServerConfig>,
    /// The live sessions.
    pub sessions: Arc<Sessions>,
    /// Cancelled when the server shuts down.
    pub shutdown: CancellationToken,
}

impl AppState {
    /// A state whose sessions get interpreters from `factory`.
    pub fn new(config: ServerConfig, factory: InterpreterFactory) -> Self {
        let config = Arc::new(config);
        AppState {
            sessions: Arc::new(Sessions::new(config.clone(), factory)),
            config,
            shutdown: CancellationToken::new(),
        }
    }

    /// What network clients may change.
    pub fn policy(&self) -> NetworkPolicy {
        NetworkPolicy {
            allow_auto_run: self.config.allow_network_auto_run,
            allow_credentials: self.config.allow_network_credentials,
        }
    }
}
