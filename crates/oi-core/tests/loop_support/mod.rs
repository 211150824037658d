//! What the respond-loop tests share: settings, an interpreter over a scripted model and a
//! recording computer, and a driver that collects a turn's events.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use futures::StreamExt;
use oi_core::{ApprovalRequest, Chunk, Interpreter, Settings, Turn, TurnError, TurnEvent};
use oi_testkit::{ModelReply, RecordedRun, RecordingComputer, ScriptedModel};

pub fn settings(auto_run: bool) -> Settings {
    Settings {
        auto_run,
        system_message: "You are oi under test.".to_owned(),
        conversation_history: false,
        ..Settings::default()
    }
}

pub fn setup(
    replies: impl IntoIterator<Item = ModelReply>,
    computer: RecordingComputer,
    adjust: impl FnOnce(&mut Settings),
) -> (Interpreter, ScriptedModel, RecordingComputer) {
    let model = ScriptedModel::new(replies);
    let mut s = settings(true);
    adjust(&mut s);
    let oi = Interpreter::new(
        s,
        Arc::new(model.clone()),
        Arc::new(computer.clone()),
        oi_judge::judge(),
    );
    (oi, model, computer)
}

/// What a turn emitted, with approvals answered by `decide`.
#[derive(Debug, Default)]
pub struct Seen {
    pub chunks: Vec<Chunk>,
    pub approvals: Vec<(String, String)>,
    pub error: Option<TurnError>,
    pub complete: bool,
}

pub async fn drive(mut turn: Turn, mut decide: impl FnMut(ApprovalRequest)) -> Seen {
    let mut seen = Seen::default();
    while let Some(event) = turn.next().await {
        match event {
            TurnEvent::Chunk(chunk) => seen.chunks.push(chunk),
            TurnEvent::Approval(request) => {
                seen.approvals
                    .push((request.language().to_owned(), request.code().to_owned()));
                decide(request);
            }
            TurnEvent::Error(error) => {
                assert!(seen.error.is_none() && !seen.complete, "one terminal event");
                seen.error = Some(error);
            }
            TurnEvent::Complete => {
                assert!(seen.error.is_none() && !seen.complete, "one terminal event");
                seen.complete = true;
            }
        }
    }
    seen
}

pub fn run(language: &str, code: &str) -> RecordedRun {
    RecordedRun {
        language: language.to_owned(),
        code: code.to_owned(),
    }
}

pub fn flags(chunks: &[Chunk]) -> Vec<String> {
    chunks
        .iter()
        .filter(|c| c.is_flag())
        .map(|c| {
            format!(
                "{}{:?}",
                if c.start { "start " } else { "end " },
                c.kind.unwrap()
            )
        })
        .collect()
}
