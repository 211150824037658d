//! # oi-session
//!
//! The session engine below any transport: [`AsyncInterpreter`] takes LMC chunks in
//! ([`input`], assembled by [`accumulate`] from the client's [`frames`]) and gives chunks out
//! ([`outgoing`]), one task per turn, with one way to stop a turn. oi-server puts it behind a
//! WebSocket and HTTP; oi-python behind Python's `input()`/`output()`. Nothing here knows
//! HTTP, sockets or a store.

pub mod accumulate;
mod actor;
pub mod async_interpreter;
pub mod frames;
pub mod input;
pub mod interrupt;
pub mod outgoing;
mod turns;

pub use accumulate::{AccumulateError, Accumulator};
pub use async_interpreter::{AsyncInterpreter, InputError, InputLimits};
pub use frames::{ClientFrame, FrameError, UserChunk};
pub use input::{Input, InputBuilder, Step};
pub use interrupt::InterruptMode;
pub use outgoing::{InputRef, Outgoing, TurnOutput};
pub use turns::TurnStart;
