//! # oi-testkit
//!
//! A scripted model server for tests and demos. It speaks the real OpenAI chat-completions
//! wire (`/v1/chat/completions`) and the Anthropic Messages wire (`/v1/messages`, named SSE
//! events) over HTTP/1.1 on `127.0.0.1`, answers each request with the next scripted
//! [`Reply`], and records every request it receives.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use oi_testkit::{Reply, Script, ScriptedServer};
//! let server = ScriptedServer::start(Script::new([Reply::text("Hello!")])).await?;
//! let base_url = server.base_url(); // "http://127.0.0.1:PORT/v1"
//! # let _ = base_url; Ok(()) }
//! ```
//!
//! For tests of the core without HTTP or processes, [`ScriptedModel`] is an in-process
//! `LanguageModel` answering from a script, and [`RecordingComputer`] an in-process `Computer`
//! that records what it is asked to run.
//!
//! [`Script::calculator`] is a reply-free mode that computes arithmetic with Python code, used
//! by the README demo and end-to-end tests.

mod anthropic;
mod calculator;
mod fake_computer;
mod fake_model;
pub mod mcp;
mod reply;
mod screenshots;
mod script;
mod server;
mod skip;
mod sse;

pub use fake_computer::{RecordedRun, RecordingComputer, RunOutput};
pub use fake_model::{ModelReply, ScriptedModel};
pub use reply::{Cut, Ending, Reply, ToolCall};
pub use screenshots::{png_brightness, png_data_urls};
pub use script::Script;
pub use server::{OLLAMA_CONTEXT_LENGTH, RecordedRequest, ScriptedServer, serve};
pub use skip::{REQUIRE_ALL, all_required, skip_or_fail};
