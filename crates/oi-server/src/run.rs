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
    let factory: InterpreterFactory = Arc::new(move || {
        let model = Arc::new(oi_llm::OpenAiCompatible::new());
        let computer = Arc::new(oi_computer::LocalComputer::new());
        Interpreter::new(settings.clone(), model, computer)
    });
    let (host, port) = (config.host.clone(), config.port);
    let listener = tokio::net::TcpListener::bind((host.as_str(), port))
        .await
        .map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot listen on {host}:{port}: {e}"))
        })?;
    if host == "0.0.0.0" {
        eprintln!("Warning: Using host `0.0.0.0` will expose oi over your local network.");
    }
    if config.api_key.is_none() && host != "127.0.0.1" && host != "localhost" {
        eprintln!(
            "Warning: INTERPRETER_API_KEY is not set: anyone who can reach this port can run code."
        );
    }
    eprintln!(
        "Server will run at http://{host}:{}",
        listener.local_addr()?.port()
    );
    crate::serve(listener, AppState::new(config, factory), shutdown).await
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
