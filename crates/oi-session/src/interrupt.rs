//! What a new input does while a turn is running.

/// What a new `start` chunk does while a turn is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InterruptMode {
    /// Stop the running turn at once (Open Interpreter's behaviour).
    #[default]
    Interrupt,
    /// Let the running turn finish, then answer the new input.
    Queue,
}
