//! Why a turn failed, as data every front end reads the same way: a kind, the upstream HTTP
//! status when the model server gave one, and the text for the person who reads it. The
//! WebSocket's error chunk carries the kind, the OpenAI-compatible endpoint answers with the
//! status and OpenAI's error object, Python raises `TurnError` with the same kind.

use serde::Serialize;

use crate::model::ModelError;
use crate::turn::TurnError;

/// What kind of failure ended a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The model server limited requests or the quota ran out (HTTP 429).
    RateLimit,
    /// The model server refused the credentials (HTTP 401 or 403).
    Authentication,
    /// The conversation does not fit the model's context window.
    ContextWindow,
    /// The session's spending cap (`max_budget`) was reached.
    Budget,
    /// The model server answered another HTTP error.
    Upstream,
    /// The model server could not be reached.
    Unreachable,
    /// The model's reply broke off or could not be read.
    Stream,
    /// The settings cannot work (no key, a bad model name); nothing was sent.
    Config,
    /// There was nothing to answer.
    NoMessage,
    /// The conversation could not be saved.
    History,
    /// Anything else inside oi.
    Internal,
}

impl FailureKind {
    /// The kind's name on the wire (`rate_limit`, `authentication`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::RateLimit => "rate_limit",
            FailureKind::Authentication => "authentication",
            FailureKind::ContextWindow => "context_window",
            FailureKind::Budget => "budget",
            FailureKind::Upstream => "upstream",
            FailureKind::Unreachable => "unreachable",
            FailureKind::Stream => "stream",
            FailureKind::Config => "config",
            FailureKind::NoMessage => "no_message",
            FailureKind::History => "history",
            FailureKind::Internal => "internal",
        }
    }
}

/// A turn's failure: its kind, the upstream status, the message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// What kind of failure.
    pub kind: FailureKind,
    /// The HTTP status the model server answered, when it answered one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The text for the person who reads it.
    pub message: String,
}

impl Failure {
    /// A failure of `kind` with no upstream status.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        Failure {
            kind,
            status: None,
            message: message.into(),
        }
    }
}

impl From<&ModelError> for Failure {
    fn from(error: &ModelError) -> Self {
        let kind = match error {
            ModelError::Config(_) => FailureKind::Config,
            ModelError::Unreachable { .. } => FailureKind::Unreachable,
            ModelError::Status { .. } => FailureKind::Upstream,
            ModelError::Unauthorized { .. } => FailureKind::Authentication,
            ModelError::RateLimited { .. } => FailureKind::RateLimit,
            ModelError::ContextWindowExceeded { .. } => FailureKind::ContextWindow,
            ModelError::Stream(_) => FailureKind::Stream,
        };
        Failure {
            kind,
            status: error.http_status(),
            message: error.to_string(),
        }
    }
}

impl From<&TurnError> for Failure {
    fn from(error: &TurnError) -> Self {
        let kind = match error {
            TurnError::Model(model) => return Failure::from(model),
            TurnError::NoMessage => FailureKind::NoMessage,
            TurnError::History(_) => FailureKind::History,
            TurnError::Budget { .. } => FailureKind::Budget,
            TurnError::Runtime(_) => FailureKind::Internal,
        };
        Failure::new(kind, error.to_string())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn model_errors_keep_their_status() {
        let limited = ModelError::RateLimited {
            status: 429,
            body: "quota".into(),
        };
        let failure = Failure::from(&TurnError::Model(limited.clone()));
        assert_eq!(
            failure,
            Failure {
                kind: FailureKind::RateLimit,
                status: Some(429),
                message: limited.to_string(),
            }
        );
        assert_eq!(
            serde_json::to_value(&failure).unwrap()["kind"],
            serde_json::json!("rate_limit")
        );
        let budget = Failure::from(&TurnError::Budget {
            spent: 1.0,
            budget: 0.5,
        });
        assert_eq!((budget.kind, budget.status), (FailureKind::Budget, None));
        assert_eq!(budget.kind.as_str(), "budget");
    }
}
