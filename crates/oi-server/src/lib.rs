//! # oi-server
//!
//! The axum server that puts oi-session's [`AsyncInterpreter`] (chunks in, chunks out, one
//! task per turn; re-exported here) behind the network: it speaks Open Interpreter's WebSocket and HTTP protocol (spec c), with its bugs fixed: nothing
//! blocks the runtime, confirmations reach the client, errors have real status codes,
//! settings that must not change over the network are refused, and each session has its own
//! interpreter.
//!
//! ```no_run
//! # async fn demo(factory: oi_server::InterpreterFactory) -> std::io::Result<()> {
//! let config = oi_server::ServerConfig::from_env(|k| std::env::var(k).ok())
//!     .map_err(std::io::Error::other)?;
//! let listener = tokio::net::TcpListener::bind((config.host.as_str(), config.port)).await?;
//! let state = oi_server::AppState::new(config, factory);
//! oi_server::serve(listener, state, async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```

pub mod config;
pub mod error;
pub mod http;
pub mod limits;
pub mod run;
pub mod server_args;
pub mod sessions;
pub mod state;
pub mod store;

pub use config::{ConfigError, InterruptMode, ServerConfig};
/// The modules under the names they had before the folders (stable public paths).
pub use http::{auth, insecure, openai, routes, server, web, ws};
pub use limits::{allowed_hosts, beneath, connections, exposure, fd_limit, origin};
pub use oi_session::{
    AccumulateError, Accumulator, AsyncInterpreter, ClientFrame, FrameError, InputError,
    InputLimits, InputRef, Outgoing, Step, TurnOutput, TurnStart, UserChunk,
};
pub use oi_session::{Input, InputBuilder};
/// The session engine's modules, under the names oi-server has always given them.
pub use oi_session::{accumulate, async_interpreter, frames, input, outgoing};
pub use routes::router;
pub use run::{run, run_with_mcp, shutdown_signal};
pub use server::serve;
pub use server_args::ServerArgs;
pub use sessions::{DEFAULT_SESSION, InterpreterFactory, Session, Sessions};
pub use sessions::{cluster, outbox, settings_adopt, settings_patch, store_link};
pub use state::AppState;
pub use store::{redis_store, replica, store_open};
