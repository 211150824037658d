//! Binds the configured address and serves until `shutdown` resolves: what `oi-server` and
//! `oi --server` both run.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use oi_core::Settings;

use crate::{AppState, InterpreterFactory, ServerConfig};

/// Serves sessions built from `settings` (real model provider and computer) on
/// `config.host:config.port`, printing where, until `shutdown` resolves.
pub async fn run(
    config: ServerConfig,
    settings: Settings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    run_with_mcp(config, settings, &BTreeMap::new(), shutdown).await
}

/// [`run`], every session's model also offered the tools of the MCP servers of `mcp_servers`
/// (a profile's `mcp_servers:`), started once and shared; one that fails is one line.
pub async fn run_with_mcp(
    config: ServerConfig,
    settings: Settings,
    mcp_servers: &BTreeMap<String, oi_mcp::client::ServerSpec>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let mut settings = settings;
    let mut config = config;
    // Without a store, sessions are kept in files and reopened at the next start
    // (sessions/session_files.rs), unless the operator turned conversation saving off.
    if config.store.is_none() && config.sessions_dir.is_none() && settings.conversation_history {
        config.sessions_dir = oi_core::settings::config_dir().map(|dir| dir.join("sessions"));
    }
    // One provider, one sandbox probe and one set of secrets for every session; the model's
    // key bound to where these settings send requests (a client that points the model
    // elsewhere over the network gets no key).
    let assembly = oi_config::Assembly::for_server(&mut settings, config.api_key.as_deref());
    for note in assembly.notes(&settings) {
        eprintln!("{note}");
    }
    let parts = assembly.parts().clone();
    let clients = Arc::new(oi_mcp::client::McpClients::connect(mcp_servers).await);
    for failure in clients.failures() {
        eprintln!("oi-server: {failure}");
    }
    let assembly = assembly.with_offer(Arc::new(move |computer| {
        oi_mcp::offer::offer(computer, &clients)
    }));
    let factory: InterpreterFactory = Arc::new(move || assembly.interpreter(settings.clone()));
    let (host, port) = (config.host.clone(), config.port);
    let listener = tokio::net::TcpListener::bind((host.as_str(), port))
        .await
        .map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot listen on {host}:{port}: {e}"))
        })?;
    let bound = listener.local_addr()?;
    let exposed =
        crate::limits::exposure::check(bound, config.api_key.is_some(), config.insecure_no_key)
            .map_err(|e| {
                std::io::Error::new(std::io::ErrorKind::PermissionDenied, e.to_string())
            })?;
    if let Some(warning) = exposed {
        eprintln!("{warning}");
    } else if !bound.ip().is_loopback() {
        eprintln!("Note: oi is exposed beyond this machine on {bound}; clients need the key.");
    }
    // The session store (`--store`): reached now, or the server does not start.
    let store = match config.store.as_deref() {
        Some(url) => Some(
            crate::store::store_open::open(url)
                .await
                .map_err(|e| std::io::Error::other(e.to_string()))?,
        ),
        None => None,
    };
    let lease_ttl = config.lease_ttl;
    let mcp_enabled = config.mcp;
    let mcp_limits = oi_mcp::HttpLimits {
        max_sessions: config.mcp_max_sessions,
        idle: config.mcp_idle_timeout,
    };
    // Built (the working directory opened) before clients can know the server is up.
    let state = AppState::new(config, factory);
    // MCP at `/mcp`: its own sessions per MCP session, with the same computers' parts, each
    // call under the server's settings as they are then (the default session's, which
    // `POST /settings` changes). Only when the operator asked for it (`--mcp`): it runs code
    // with no model in between.
    let state = if mcp_enabled {
        let sessions = Arc::clone(&state.sessions);
        let live: oi_mcp::LiveSettings = Arc::new(move || {
            sessions
                .default_session()
                .interpreter()
                .interpreter()
                .settings()
        });
        let mcp = oi_mcp::http_service(live, parts, state.shutdown.child_token(), mcp_limits);
        state.with_mcp(mcp)
    } else {
        state
    };
    if let Some(store) = store {
        let cluster = crate::sessions::cluster::Cluster::new(store, lease_ttl);
        state.sessions.use_cluster(std::sync::Arc::new(cluster));
    }
    eprintln!("Server will run at http://{host}:{}", bound.port());
    crate::serve(listener, state, shutdown).await
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => futures::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
    eprintln!("Shutting down.");
}
