//! One reply the provider asks of the worker thread, and how it is to be generated: what
//! the provider sends and the worker and its session read (so neither names the other).

use std::time::Instant;

use oi_core::ModelError;
use tokio::sync::mpsc::Sender;

use super::prompt::ChatTurn;

/// How a reply is generated.
#[derive(Debug, Clone, PartialEq)]
pub struct GenerateParams {
    /// 0 = greedy.
    pub temperature: f64,
    /// Longest reply in tokens.
    pub max_tokens: u32,
}

/// One reply to generate.
pub struct Job {
    /// The conversation.
    pub turns: Vec<ChatTurn>,
    /// Sampling and length.
    pub params: GenerateParams,
    /// Where text pieces go; closed by the receiver = cancelled.
    pub out: Sender<Result<String, ModelError>>,
    /// When the request was made (time to first token counts from here).
    pub created: Instant,
}
