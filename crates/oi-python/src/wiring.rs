//! How the Python API wires an interpreter: through oi-config's lazy door (the judge, the
//! computer API's link), with a model provider and a computer both built on first use from
//! the settings as they are then (oi-config's parts, as `oi` and `oi-server`).

use std::sync::Arc;

use oi_core::{Interpreter, Settings};

use crate::live_computer::LiveComputer;
use crate::live_model::LiveModel;

/// An interpreter with these settings; its provider and its computer are built on first use.
pub fn interpreter(settings: Settings) -> (Interpreter, Arc<LiveComputer>) {
    oi_config::lazy::interpreter(settings, Arc::new(LiveModel::default()), LiveComputer::new)
}
