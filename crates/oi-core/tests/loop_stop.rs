//! Stopping a turn, in process: while the model streams, while a block waits for approval,
//! while code runs, and by dropping the turn (a scripted model and a recording computer).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use futures::{FutureExt, StreamExt};
use oi_core::{Chunk, Message, Turn, TurnEvent};
use oi_testkit::{ModelReply, RecordingComputer, RunOutput};

mod loop_support;
use loop_support::*;

/// Reads events until `stop_here` says so, then stops the turn; the stream ends at once with
/// no terminal event, and the conversation is usable again.
async fn stop_when(turn: &mut Turn, mut stop_here: impl FnMut(&TurnEvent) -> bool) -> bool {
    while let Some(event) = turn.next().await {
        if stop_here(&event) {
            turn.stop();
            assert!(turn.next().now_or_never().flatten().is_none());
            return true;
        }
    }
    false
}

#[tokio::test]
async fn stop_while_the_model_streams() {
    let (oi, model, computer) = setup(
        [
            ModelReply::text("thinking").then_hang(),
            ModelReply::text("Hi again."),
        ],
        RecordingComputer::new(),
        |_| {},
    );
    let mut turn = oi.chat("x");
    assert!(
        stop_when(&mut turn, |e| e.chunk().and_then(Chunk::text)
            == Some("thinking"))
        .await
    );
    drop(turn);
    assert!(computer.runs().is_empty());
    let seen = drive(oi.chat("again"), |_| {}).await;
    assert!(seen.complete);
    assert_eq!(model.request_count(), 2);
}

#[tokio::test]
async fn stop_while_waiting_for_approval_runs_nothing() {
    let (oi, _model, computer) = setup(
        [ModelReply::code("shell", "ls")],
        RecordingComputer::new(),
        |s| s.auto_run = false,
    );
    let mut turn = oi.chat("x");
    let mut parked = None;
    let stopped = stop_when(&mut turn, |e| {
        if let TurnEvent::Approval(_) = e {
            parked = Some(());
            true
        } else {
            false
        }
    })
    .await;
    assert!(stopped && parked.is_some());
    assert!(computer.runs().is_empty());
    // The code stays the last message, pending; no decline note was added.
    assert_eq!(oi.messages().last(), Some(&Message::code("shell", "ls")));
}

#[tokio::test]
async fn stop_while_code_runs_drops_the_run() {
    let (oi, _model, computer) = setup(
        [ModelReply::code("python", "import time; time.sleep(600)")],
        RecordingComputer::new().with_outputs([RunOutput::hang()]),
        |_| {},
    );
    let mut turn = oi.chat("x");
    assert!(
        stop_when(&mut turn, |e| e
            .chunk()
            .is_some_and(|c| c.has_format("active_line")))
        .await
    );
    drop(turn);
    assert_eq!(computer.runs().len(), 1);
    assert_eq!(computer.interrupted_runs(), 1);
}

#[tokio::test]
async fn dropping_the_turn_is_stopping_it() {
    let (oi, _model, computer) = setup(
        [ModelReply::code("python", "x")],
        RecordingComputer::new().with_outputs([RunOutput::hang()]),
        |_| {},
    );
    let mut turn = oi.chat("x");
    while let Some(event) = turn.next().await {
        if event.chunk().is_some_and(|c| c.has_format("active_line")) {
            break;
        }
    }
    drop(turn);
    assert_eq!(computer.interrupted_runs(), 1);
}
