//! A failed turn's error chunk says why it failed: a rate-limited turn's error chunk, as the
//! session gives it out, carries its `Failure` (kind and upstream status), which each edge
//! writes its own way (oi-server's sessions/wire.rs, the OpenAI endpoint, Python).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use oi_core::{
    Failure, FailureKind, Interpreter, Judge, Kind, Message, ModelError, Role, Rules, Settings,
    Verdict,
};
use oi_session::{AsyncInterpreter, InterruptMode, TurnStart};
use oi_testkit::{ModelReply, RecordingComputer, ScriptedModel};

/// No code runs in these tests; anything would be asked about.
struct AskAlways;

impl Judge for AskAlways {
    fn judge(&self, _rules: &Rules, _language: &str, _code: &str) -> Verdict {
        Verdict::Ask
    }
}

fn session(reply: ModelReply) -> AsyncInterpreter {
    let settings = Settings {
        system_message: "You are oi under test.".to_owned(),
        conversation_history: false,
        ..Settings::default()
    };
    let oi = Interpreter::new(
        settings,
        Arc::new(ScriptedModel::new([reply])),
        Arc::new(RecordingComputer::new()),
        Arc::new(AskAlways),
    );
    AsyncInterpreter::new(oi, InterruptMode::Interrupt)
}

#[tokio::test]
async fn a_rate_limited_turns_error_chunk_says_rate_limit_and_429() {
    let limited = ModelError::RateLimited {
        status: 429,
        body: "quota".into(),
    };
    let oi = session(ModelReply::error(limited.clone()));
    let mut output = oi
        .run_separately(TurnStart::Chat(vec![Message::user("hi")]))
        .await;
    let mut error = None;
    while let Some(out) = output.recv_out().await {
        if out.chunk.role == Role::Server && out.chunk.kind == Some(Kind::Error) {
            error = Some(out);
        }
    }
    let error = error.expect("the turn sent an error chunk");
    let failure = error
        .failure
        .clone()
        .expect("the error chunk carries its failure");
    assert_eq!(
        failure,
        Failure {
            kind: FailureKind::RateLimit,
            status: Some(429),
            message: limited.to_string(),
        }
    );
    assert_eq!(
        error.chunk,
        oi_core::Chunk::server_error(limited.to_string())
    );
}
