//! The respond loop's decisions, in process: a scripted model and a recording computer
//! (oi-testkit), no HTTP, no processes. Each test runs in microseconds.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures::StreamExt;
use oi_core::{
    ApprovalRequest, Chunk, Content, Kind, Message, ModelError, Output, Role, TurnError, TurnEvent,
    Usage, prompts,
};
use oi_testkit::{ModelReply, RecordingComputer, RunOutput};

mod loop_support;
use loop_support::*;

#[tokio::test]
async fn a_text_reply_completes_with_one_request() {
    let (oi, model, computer) = setup(
        [ModelReply::text("Hello!")],
        RecordingComputer::new(),
        |_| {},
    );
    let seen = drive(oi.chat("hi"), |_| panic!("no approval")).await;
    assert!(seen.complete);
    assert_eq!(flags(&seen.chunks), ["start Message", "end Message"]);
    assert_eq!(
        oi.messages(),
        vec![Message::user("hi"), Message::assistant("Hello!")]
    );
    assert_eq!(model.request_count(), 1);
    assert!(computer.runs().is_empty());
    let request = &model.requests()[0];
    assert_eq!(request.messages[0].role, Role::System);
    assert_eq!(request.messages[0].text(), "You are oi under test.");
}

fn costing(cost: f64) -> Usage {
    Usage {
        prompt_tokens: 1000,
        reply_tokens: 100,
        cost: Some(cost),
    }
}

#[tokio::test]
async fn max_budget_stops_before_the_request_that_would_exceed_it() {
    let (oi, model, computer) = setup(
        [
            ModelReply::code("python", "print(1)").then_usage(costing(0.75)),
            ModelReply::text("It printed 1.").then_usage(costing(0.5)),
            ModelReply::text("never asked"),
        ],
        RecordingComputer::new().with_outputs([RunOutput::text("1\n")]),
        |s| s.llm.max_budget = Some(1.0),
    );
    // The first turn: 0.75 spent after the first request, 1.25 after the second (the code's
    // output went back under budget); the turn completes.
    let seen = drive(oi.chat("run it"), |_| panic!("auto_run")).await;
    assert!(seen.complete, "{:?}", seen.error);
    assert!((oi.spent() - 1.25).abs() < 1e-9);
    // The next turn is refused before anything is sent, the message kept; usage is no chunk.
    let seen = drive(oi.chat("again"), |_| panic!("auto_run")).await;
    let Some(TurnError::Budget { spent, budget }) = seen.error else {
        panic!("expected the budget error, got {:?}", seen.error);
    };
    assert!((spent - 1.25).abs() < 1e-9 && (budget - 1.0).abs() < 1e-9);
    assert_eq!(model.request_count(), 2);
    assert_eq!(computer.runs(), vec![run("python", "print(1)")]);
    assert_eq!(oi.messages().last(), Some(&Message::user("again")));
    assert!(
        !seen.chunks.iter().any(|c| !c.is_flag()),
        "nothing streamed: {:?}",
        seen.chunks
    );
    // Raising the budget lets the session go on; reset keeps what was spent.
    oi.settings_mut().llm.max_budget = Some(10.0);
    oi.reset().await;
    assert!((oi.spent() - 1.25).abs() < 1e-9);
}

#[tokio::test]
async fn auto_run_runs_code_and_asks_the_model_again() {
    let (oi, model, computer) = setup(
        [
            ModelReply::text("Let me run it.").then_code("python", "print(1)"),
            ModelReply::text("It printed 1."),
        ],
        RecordingComputer::new().with_outputs([RunOutput::text("1\n")]),
        |_| {},
    );
    let seen = drive(oi.chat("run it"), |_| panic!("auto_run asks nothing")).await;
    assert!(seen.complete);
    assert_eq!(computer.runs(), vec![run("python", "print(1)")]);
    assert_eq!(
        flags(&seen.chunks),
        [
            "start Message",
            "end Message",
            "start Code",
            "end Code",
            "start Console",
            "end Console",
            "start Message",
            "end Message"
        ]
    );
    assert_eq!(
        oi.messages(),
        vec![
            Message::user("run it"),
            Message::assistant("Let me run it."),
            Message::code("python", "print(1)"),
            Message::console_output("1\n"),
            Message::assistant("It printed 1."),
        ]
    );
    assert_eq!(model.request_count(), 2);
}

#[tokio::test]
async fn the_turn_waits_for_the_decision_and_approval_runs_the_code() {
    let (oi, _model, computer) = setup(
        [
            ModelReply::code("python", "print(2)"),
            ModelReply::text("Done."),
        ],
        RecordingComputer::new(),
        |s| s.auto_run = false,
    );
    let mut turn = oi.chat("go");
    let mut chunks = Vec::new();
    let request = loop {
        match turn.next().await.expect("an event") {
            TurnEvent::Chunk(chunk) => chunks.push(chunk),
            TurnEvent::Approval(request) => break request,
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(
        flags(&chunks),
        ["start Code", "end Code"],
        "the code block is closed first"
    );
    assert_eq!((request.language(), request.code()), ("python", "print(2)"));
    assert_eq!(
        request.confirmation(),
        Chunk::confirmation("python", "print(2)")
    );
    // Parked: nothing more comes, and nothing runs, until the request is answered.
    assert!(
        tokio::time::timeout(Duration::from_millis(50), turn.next())
            .await
            .is_err()
    );
    assert!(computer.runs().is_empty());
    request.approve();
    let seen = drive(turn, |_| panic!("one approval")).await;
    assert!(seen.complete);
    assert_eq!(computer.runs(), vec![run("python", "print(2)")]);
}

#[tokio::test]
async fn the_session_is_prepared_while_the_code_streams_before_approval() {
    let (oi, _model, computer) = setup(
        [
            ModelReply::text("Two blocks.")
                .then_code("python", "print(")
                .then_code("python", "1)"),
            ModelReply::code("shell", "ls"),
            ModelReply::text("done"),
        ],
        RecordingComputer::new(),
        |s| s.auto_run = false,
    );
    let seen_at_approval = std::sync::Mutex::new(Vec::new());
    let seen = drive(oi.chat("run it"), |request| {
        seen_at_approval.lock().unwrap().push(computer.prepared());
        request.approve();
    })
    .await;
    assert!(seen.complete);
    // Each block's language once, and before its approval was asked.
    assert_eq!(
        seen_at_approval.into_inner().unwrap(),
        vec![
            vec!["python".to_owned()],
            vec!["python".to_owned(), "shell".to_owned()]
        ]
    );
}

#[tokio::test]
async fn decline_runs_nothing_and_tells_the_model() {
    let (oi, model, computer) = setup(
        [ModelReply::code("shell", "rm x")],
        RecordingComputer::new(),
        |s| s.auto_run = false,
    );
    let seen = drive(oi.chat("delete x"), ApprovalRequest::decline).await;
    assert!(seen.complete);
    assert_eq!(seen.approvals, [("shell".to_owned(), "rm x".to_owned())]);
    assert!(computer.runs().is_empty());
    assert_eq!(model.request_count(), 1);
    assert_eq!(
        oi.messages().last(),
        Some(&Message::user(prompts::DECLINED_MESSAGE))
    );
}

#[tokio::test]
async fn dropping_the_request_declines() {
    let (oi, _model, computer) = setup(
        [ModelReply::code("shell", "rm x")],
        RecordingComputer::new(),
        |s| s.auto_run = false,
    );
    let seen = drive(oi.chat("delete x"), drop).await;
    assert!(seen.complete);
    assert!(computer.runs().is_empty());
    assert_eq!(
        oi.messages().last(),
        Some(&Message::user(prompts::DECLINED_MESSAGE))
    );
}

#[tokio::test]
async fn edit_runs_the_new_code_and_stores_it() {
    let (oi, _model, computer) = setup(
        [
            ModelReply::code("python", "print(3)"),
            ModelReply::text("ok"),
        ],
        RecordingComputer::new(),
        |s| s.auto_run = false,
    );
    let seen = drive(oi.chat("x"), |r| r.edit("print(4)")).await;
    assert!(seen.complete);
    assert_eq!(computer.runs(), vec![run("python", "print(4)")]);
    assert!(oi.messages().contains(&Message::code("python", "print(4)")));
}

#[tokio::test]
async fn approval_ids_are_unique() {
    let (oi, _model, _computer) = setup(
        [
            ModelReply::code("python", "a"),
            ModelReply::code("python", "b"),
            ModelReply::text("done"),
        ],
        RecordingComputer::new(),
        |s| s.auto_run = false,
    );
    let mut ids = Vec::new();
    let seen = drive(oi.chat("x"), |r| {
        ids.push(r.id());
        r.approve();
    })
    .await;
    assert!(seen.complete);
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
}

#[tokio::test]
async fn loop_mode_goes_on_with_a_hidden_message_until_a_breaker() {
    let (oi, model, _computer) = setup(
        [
            ModelReply::text("Step one."),
            ModelReply::text("The task is done."),
        ],
        RecordingComputer::new(),
        |s| s.loop_mode = true,
    );
    let seen = drive(oi.chat("do it"), |_| {}).await;
    assert!(seen.complete);
    assert_eq!(model.request_count(), 2);
    let second = &model.requests()[1];
    assert_eq!(
        second.messages.last().map(Message::text),
        Some(prompts::LOOP_MESSAGE)
    );
    assert!(
        seen.chunks
            .iter()
            .any(|c| c.text() == Some("\n\n") && c.role == Role::Assistant)
    );
    // The loop message is never stored; the assistant's texts are merged.
    assert!(
        oi.messages()
            .iter()
            .all(|m| m.text() != prompts::LOOP_MESSAGE)
    );
}

#[tokio::test]
async fn garbled_code_is_repaired_and_text_blocks_become_notes() {
    let (oi, model, computer) = setup(
        [
            ModelReply::code(
                "python",
                "functions.execute({\"language\": \"shell\", \"code\": \"ls\"})",
            ),
            ModelReply::code("markdown", "# just notes"),
            ModelReply::text("ok"),
        ],
        RecordingComputer::new(),
        |_| {},
    );
    let seen = drive(oi.chat("x"), |_| {}).await;
    assert!(seen.complete);
    assert_eq!(computer.runs(), vec![run("shell", "ls")]);
    assert!(oi.messages().contains(&Message::code("shell", "ls")));
    assert!(
        oi.messages()
            .contains(&Message::assistant("```\n# just notes\n```"))
    );
    assert_eq!(model.request_count(), 3);
}

#[tokio::test]
async fn unsupported_language_is_reported_and_a_repeat_ends_the_turn() {
    let (oi, model, computer) = setup(
        [
            ModelReply::code("cobol", "DISPLAY 'HI'"),
            ModelReply::code("cobol", "DISPLAY 'HI'"),
        ],
        RecordingComputer::new(),
        |_| {},
    );
    let seen = drive(oi.chat("x"), |_| {}).await;
    assert!(seen.complete);
    assert!(computer.runs().is_empty());
    assert_eq!(model.request_count(), 2);
    let outputs: Vec<_> = oi
        .messages()
        .into_iter()
        .filter(|m| m.kind == Kind::Console)
        .collect();
    assert_eq!(outputs.len(), 2);
    assert_eq!(
        outputs[0].text(),
        prompts::unsupported_language_message("cobol")
    );
}

#[tokio::test]
async fn empty_code_is_reported_and_the_model_asked_again() {
    let (oi, model, computer) = setup(
        [ModelReply::code("python", "   "), ModelReply::text("sorry")],
        RecordingComputer::new(),
        |_| {},
    );
    let seen = drive(oi.chat("x"), |_| {}).await;
    assert!(seen.complete);
    assert!(computer.runs().is_empty());
    assert_eq!(model.request_count(), 2);
    assert!(
        oi.messages()
            .contains(&Message::console_output(prompts::EMPTY_CODE_MESSAGE))
    );
}

#[tokio::test]
async fn stored_output_is_truncated_and_streamed_whole() {
    let long = "x".repeat(5000);
    let (oi, _model, _computer) = setup(
        [
            ModelReply::code("python", "print('x'*5000)"),
            ModelReply::text("ok"),
        ],
        RecordingComputer::new().with_outputs([RunOutput::text(&long)]),
        |s| s.max_output = 100,
    );
    let seen = drive(oi.chat("x"), |_| {}).await;
    let streamed: String = seen
        .chunks
        .iter()
        .filter(|c| c.has_format("output"))
        .filter_map(Chunk::text)
        .collect();
    assert_eq!(streamed, long);
    let stored = oi
        .messages()
        .into_iter()
        .find(|m| m.kind == Kind::Console)
        .unwrap();
    assert!(stored.text().len() < 1000, "{}", stored.text().len());
}

#[tokio::test]
async fn hard_deny_blocks_even_with_auto_run() {
    let (oi, _model, computer) = setup(
        [
            ModelReply::code("shell", "rm -rf /"),
            ModelReply::code("shell", "rm -rf /"),
        ],
        RecordingComputer::new(),
        |_| {},
    );
    let seen = drive(oi.chat("x"), |_| panic!("blocked, not asked")).await;
    assert!(seen.complete);
    assert!(computer.runs().is_empty());
}

#[tokio::test]
async fn a_model_error_closes_the_open_block_and_is_the_last_event() {
    let (oi, _model, _computer) = setup(
        [ModelReply::text("Half a sent")
            .then_error(ModelError::Stream("connection reset".to_owned()))],
        RecordingComputer::new(),
        |_| {},
    );
    let seen = drive(oi.chat("x"), |_| {}).await;
    assert!(!seen.complete);
    assert!(matches!(
        seen.error,
        Some(TurnError::Model(ModelError::Stream(_)))
    ));
    assert_eq!(flags(&seen.chunks), ["start Message", "end Message"]);
}

#[tokio::test]
async fn no_message_is_an_error() {
    let (oi, model, _computer) = setup([], RecordingComputer::new(), |_| {});
    let seen = drive(oi.respond(), |_| {}).await;
    assert!(matches!(seen.error, Some(TurnError::NoMessage)));
    assert_eq!(model.request_count(), 0);
}

#[tokio::test]
async fn images_from_the_computer_are_stored_and_streamed() {
    let (oi, _model, _computer) = setup(
        [
            ModelReply::code("python", "plot()"),
            ModelReply::text("A plot."),
        ],
        RecordingComputer::new()
            .with_outputs([RunOutput::outputs([Output::image("base64.png", "iVBOR")])]),
        |_| {},
    );
    let seen = drive(oi.chat("x"), |_| {}).await;
    assert!(seen.complete);
    let image = Message::new(Role::Computer, Kind::Image, "iVBOR").with_format("base64.png");
    assert!(oi.messages().contains(&image));
    assert!(
        seen.chunks
            .iter()
            .any(|c| c.content == Some(Content::Text("iVBOR".into())))
    );
}

/// The spec's concrete stream (a.4), chunk for chunk, with the approval request shown as its
/// confirmation chunk exactly where the original puts it; with `auto_run` there is none.
#[tokio::test]
async fn the_spec_stream_chunk_for_chunk() {
    let replies = || {
        [
            ModelReply::text("Let me")
                .then_text(" compute that.")
                .then_code("python", "print(34")
                .then_code("python", " / 24)"),
            ModelReply::text("The result is about 1.42."),
        ]
    };
    let outputs = || {
        RecordingComputer::new().with_outputs([RunOutput::outputs([
            Output::active_line(1),
            Output::console("1.4166666666666667\n"),
        ])])
    };
    let (oi, _model, _computer) = setup(replies(), outputs(), |s| s.auto_run = false);
    let mut wire = Vec::new();
    let mut turn = oi.chat("What's 34/24?");
    while let Some(event) = turn.next().await {
        match event {
            TurnEvent::Chunk(chunk) => wire.push(serde_json::to_value(&chunk).unwrap()),
            TurnEvent::Approval(request) => {
                wire.push(serde_json::to_value(request.confirmation()).unwrap());
                request.approve();
            }
            TurnEvent::Error(error) => panic!("{error}"),
            TurnEvent::Complete => {}
        }
    }
    let expected: Vec<serde_json::Value> = serde_json::from_str(
        r#"[
{"role": "assistant", "type": "message", "start": true},
{"role": "assistant", "type": "message", "content": "Let me"},
{"role": "assistant", "type": "message", "content": " compute that."},
{"role": "assistant", "type": "message", "end": true},
{"role": "assistant", "type": "code", "format": "python", "start": true},
{"role": "assistant", "type": "code", "format": "python", "content": "print(34"},
{"role": "assistant", "type": "code", "format": "python", "content": " / 24)"},
{"role": "assistant", "type": "code", "format": "python", "end": true},
{"role": "computer", "type": "confirmation", "format": "execution", "content": {"type": "code", "format": "python", "content": "print(34 / 24)"}},
{"role": "computer", "type": "console", "start": true},
{"role": "computer", "type": "console", "format": "active_line", "content": 1},
{"role": "computer", "type": "console", "format": "output", "content": "1.4166666666666667\n"},
{"role": "computer", "type": "console", "format": "active_line", "content": null},
{"role": "computer", "type": "console", "end": true},
{"role": "assistant", "type": "message", "start": true},
{"role": "assistant", "type": "message", "content": "The result is about 1.42."},
{"role": "assistant", "type": "message", "end": true}
]"#,
    )
    .unwrap();
    assert_eq!(wire, expected);

    let (oi, _model, _computer) = setup(replies(), outputs(), |_| {});
    let seen = drive(oi.chat("What's 34/24?"), |_| {
        panic!("auto_run asks nothing")
    })
    .await;
    assert!(seen.complete);
    let without_confirmation: Vec<serde_json::Value> = expected
        .into_iter()
        .filter(|c| c["type"] != "confirmation")
        .collect();
    let chunks: Vec<serde_json::Value> = seen
        .chunks
        .iter()
        .map(|c| serde_json::to_value(c).unwrap())
        .collect();
    assert_eq!(chunks, without_confirmation);
}
