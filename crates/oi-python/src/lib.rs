//! # oi-python
//!
//! The compiled half of oi's Python package: the module `interpreter._oi`, under the pure-Python
//! `interpreter` package (`crates/oi-python/python/interpreter`), which gives existing Open
//! Interpreter code its API — `from interpreter import interpreter`, `chat()`, `messages`,
//! `AsyncInterpreter` and its server — with oi's core underneath.
//!
//! ```text
//!   interpreter (Python)              interpreter._oi (this crate)          oi crates
//!   OpenInterpreter ── attributes ──▶ Core.get/set ─────────────────────▶  Settings
//!                   ── chat() ──────▶ Core.chat → TurnHandle.next() ─────▶  Interpreter / Turn
//!                   ── display ─────▶ Renderer (sanitised text)
//!   AsyncInterpreter ── input/output ▶ AsyncCore (callbacks) ──────────────▶ oi-session AsyncInterpreter
//!   Server.run() ──────────────────▶ Core.serve → ServerHandle ──────────▶  oi-server run()
//! ```
//!
//! Serving is the cargo feature `server` (the wheel turns it on; see server.rs): without it
//! the crate has no oi-server, axum or redis in its tree.
//!
//! Every wait releases the GIL and wakes every few milliseconds for Python's signal handlers,
//! so CTRL-C stops a turn (the model request and the code's process group) and raises
//! `KeyboardInterrupt`. Nothing starts at import: the runtime, the model provider and the
//! computer are made on first use.

mod async_core;
mod callback;
mod convert;
mod core;
mod custom_language;
mod display;
mod errors;
mod live_computer;
mod live_model;
mod run_stream;
mod runtime;
mod sanitize;
mod server;
mod server_options;
mod settings;
mod tokens;
mod turn;
mod wiring;

use pyo3::prelude::*;

/// The skills folder (`<config dir>/open-interpreter/skills`), as oi's core finds it.
#[pyfunction]
fn skills_dir() -> Option<String> {
    oi_core::computer_api::skills_dir().map(|dir| dir.display().to_string())
}

/// The module `interpreter._oi`.
#[pymodule(name = "_oi")]
fn oi_module(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<core::Core>()?;
    module.add_class::<turn::TurnHandle>()?;
    module.add_class::<async_core::AsyncCore>()?;
    module.add_class::<server::ServerHandle>()?;
    module.add_class::<callback::Pending>()?;
    module.add_class::<run_stream::RunStream>()?;
    module.add_class::<display::Renderer>()?;
    module.add("TurnError", module.py().get_type::<errors::TurnError>())?;
    module.add("SERVER_OPTIONS", server_options::OPTIONS.to_vec())?;
    module.add("SETTING_NAMES", oi_core::Settings::names().to_vec())?;
    module.add_function(wrap_pyfunction!(tokens::count_tokens, module)?)?;
    module.add_function(wrap_pyfunction!(tokens::token_cost, module)?)?;
    module.add_function(wrap_pyfunction!(skills_dir, module)?)?;
    module.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
