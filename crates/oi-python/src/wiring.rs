//! How the Python API wires an interpreter: a model provider and a computer, both built on
//! first use from the settings as they are then (oi-config's parts, as `oi` and `oi-server`).

use std::sync::Arc;

use oi_core::{Interpreter, Settings};

use crate::live_computer::LiveComputer;
use crate::live_model::LiveModel;

/// An interpreter with these settings; its provider and its computer are built on first use.
pub fn interpreter(settings: Settings) -> (Interpreter, Arc<LiveComputer>) {
    let computer = Arc::new(LiveComputer::default());
    let interpreter = Interpreter::new(
        settings,
        Arc::new(LiveModel::default()),
        computer.clone(),
        oi_judge::judge(),
    );
    computer.link.bind(&interpreter);
    (interpreter, computer)
}
