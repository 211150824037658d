//! # oi-core
//!
//! The heart of oi, a Rust re-implementation of Open Interpreter: LMC messages and chunks,
//! start/end flag framing, the respond loop, settings and conversation history, and the two
//! traits the other crates implement: [`LanguageModel`] (in `oi-llm`), [`Computer`]
//! (in `oi-computer`) and [`Judge`] (in `oi-judge`). This crate speaks no HTTP and spawns no process.
//!
//! Two faces share one core: the async [`Interpreter`] (a [`Turn`] is a stoppable stream of
//! [`TurnEvent`]s: framed chunks, approval requests the turn waits on, and one last `Complete`
//! or `Error`) and the blocking [`OpenInterpreter`] (`chat(message) -> Vec<Message>`).
//!
//! ```no_run
//! # fn demo(model: std::sync::Arc<dyn oi_core::LanguageModel>, computer: std::sync::Arc<dyn oi_core::Computer>, judge: std::sync::Arc<dyn oi_core::Judge>) -> Result<(), oi_core::TurnError> {
//! use oi_core::{OpenInterpreter, Settings};
//! let mut settings = Settings::default();
//! settings.auto_run = true;
//! let oi = OpenInterpreter::new(settings, model, computer, judge)?;
//! for message in oi.chat("compute 239023*79043")? {
//!     println!("{}", serde_json::to_string(&message).unwrap_or_default());
//! }
//! # Ok(()) }
//! ```

pub mod approval;
pub mod blocking;
pub mod computer;
pub mod computer_api;
pub mod failure;
pub mod framing;
pub mod history;
pub mod interpreter;
pub mod languages;
pub mod lmc;
mod loop_mode;
pub mod model;
pub mod policy;
pub mod prompts;
pub mod repair;
mod repair_hints;
mod repair_step;
mod respond;
pub mod runtime;
mod save;
pub mod settings;
mod state;
mod system_message;
pub mod tools;
pub mod truncate;
pub mod turn;
mod turn_state;
pub mod visible;

pub use approval::{ApprovalId, ApprovalRequest, Decision};
pub use blocking::OpenInterpreter;
pub use computer::{Computer, LanguageSpec, Output, OutputStream};
pub use failure::{Failure, FailureKind};
pub use interpreter::{ChatInput, Interpreter};
pub use lmc::{Chunk, CodeContent, Content, Kind, LmcError, Message, Recipient, Role};
pub use model::{
    LanguageModel, ModelDelta, ModelError, ModelRequest, ModelStream, UnreachableKind, Usage,
};
pub use policy::{ApprovalPolicy, Judge, Rules, Verdict};
pub use repair_step::named_files;
pub use runtime::{RuntimeState, Tally, UsageReport};
pub use settings::{LlmSettings, OutputSender, SafeMode, Settings, Templates};
pub use tools::OfferedTool;
pub use turn::{StopHandle, Turn, TurnError, TurnEvent};
