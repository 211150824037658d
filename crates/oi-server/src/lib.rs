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

pub mod allowed_hosts;
pub mod auth;
pub mod beneath;
pub mod cluster;
pub mod config;
pub mod connections;
pub mod error;
pub mod exposure;
pub mod fd_limit;
pub mod insecure;
pub mod openai;
pub mod origin;
pub mod outbox;
pub mod redis_store;
pub mod replica;
pub mod routes;
pub mod run;
pub mod server;
pub mod server_args;
pub mod sessions;
pub mod settings_adopt;
pub mod settings_patch;
pub mod state;
pub mod store;
pub mod store_link;
pub mod store_open;
pub mod web;
pub mod ws;

pub use config::{ConfigError, InterruptMode, ServerConfig};
pub use oi_session::{
    AccumulateError, Accumulator, AsyncInterpreter, ClientFrame, FrameError, InputError,
    InputLimits, InputRef, Outgoing, Step, TurnOutput, TurnStart, UserChunk,
};
pub use oi_session::{Input, InputBuilder};
/// The session engine's modules, under the names oi-server has always given them.
pub use oi_session::{accumulate, async_interpreter, frames, input, outgoing};
pub use routes::router;
pub use run::{run, shutdown_signal};
pub use server::serve;
pub use server_args::ServerArgs;
pub use sessions::{DEFAULT_SESSION, InterpreterFactory, Session, Sessions};
pub use state::AppState;
