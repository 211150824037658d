//! Binds the configured address and serves until `shutdown` resolves: what `oi-server` and
//! `oi --server` both run.

use std::future::Future;
use std::sync::Arc;

use oi_core::{Interpreter, Settings};

use crate::{AppState, InterpreterFactory, ServerConfig};

/// Serves sessions built from `settings` (real model provider and computer) on
/// `config.host:config.port`, printing where, until `shutdown` resolves.
pub async fn run(
    config: ServerConfig,
    settings: Settings,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (sandbox, limits) = (config.sandbox.clone(), config.limits);
    // Probed once for all sessions.
    let support = oi_computer::probe();
    if sandbox.restricts() {
        let network = if sandbox.network {
            "network allowed"
        } else {
            "network denied"
        };
        eprintln!(
            "sandbox for every session: {}, {network} ({support})",
            sandbox.mode.as_str()
        );
    }
    // One provider for every session: it picks the wire from each request's settings, and its
    // HTTP client's connection pool is shared.
    let model = oi_llm::provider_for(&settings.llm, oi_llm::Env::from_process())
        .unwrap_or_else(oi_llm::unavailable);
    if let Some(warning) = sandbox.broad_workspace_warning() {
        eprintln!("sandbox: {warning}");
    }
    // What no session's code may see or write: the server's and the model's keys, oi's
    // conversations.
    let key_vars = oi_llm::env::KNOWN_VARS
        .into_iter()
        .filter(|name| name.ends_with("_API_KEY"));
    let mut secrets =
        oi_computer::Secrets::of_oi(settings.llm.api_key.as_deref(), key_vars, |name| {
            std::env::var(name).ok()
        });
    if let Some(key) = &config.api_key {
        secrets = secrets.with_value(key.clone());
    }
    let conversations = settings.conversations_dir();
    let factory: InterpreterFactory = Arc::new(move || {
        let mut computer = oi_computer::LocalComputer::new()
            .with_limits(limits)
            .with_secrets(secrets.clone());
        if let Some(dir) = &conversations {
            computer = computer.with_protected_dir(dir.clone());
        }
        let computer = computer.with_sandbox_support(sandbox.clone(), support);
        Interpreter::new(settings.clone(), model.clone(), Arc::new(computer))
    });
    let (host, port) = (config.host.clone(), config.port);
    let listener = tokio::net::TcpListener::bind((host.as_str(), port))
        .await
        .map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot listen on {host}:{port}: {e}"))
        })?;
    let bound = listener.local_addr()?;
    let exposed = crate::exposure::check(bound, config.api_key.is_some(), config.insecure_no_key)
        .map_err(|e| {
        std::io::Error::new(std::io::ErrorKind::PermissionDenied, e.to_string())
    })?;
    if let Some(warning) = exposed {
        eprintln!("{warning}");
    } else if !bound.ip().is_loopback() {
        eprintln!("Note: oi is exposed beyond this machine on {bound}; clients need the key.");
    }
    // Built (the working directory opened) before clients can know the server is up.
    let state = AppState::new(config, factory);
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
