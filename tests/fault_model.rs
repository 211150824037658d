//! Fault injection on the model side: the real core and the real OpenAI-compatible provider
//! against a scripted model server that drops the connection mid-stream, answers garbage,
//! stalls, streams forever or sends one enormous line. Each time the turn ends with a clear
//! error, no half-received code runs, the stored conversation stays valid LMC, and the next
//! turn succeeds.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use oi_core::{Chunk, Interpreter, Message, Settings, TurnEvent};
use oi_llm::RetryPolicy;
use oi_testkit::{Ending, Reply, Script, ScriptedServer};

/// An interpreter over the real provider (no retries, the given idle timeout) and computer.
fn interpreter(settings: Settings, idle: Option<Duration>) -> Interpreter {
    interpreter_with(settings, idle, oi_llm::Env::empty())
}

/// The same, with the provider reading `env` (e.g. the reply limits).
fn interpreter_with(settings: Settings, idle: Option<Duration>, env: oi_llm::Env) -> Interpreter {
    let model = Arc::new(
        oi_llm::OpenAiCompatible::new()
            .with_env(env)
            .with_retry(RetryPolicy::none())
            .with_idle_timeout(idle),
    );
    let computer = Arc::new(oi_computer::LocalComputer::new());
    Interpreter::new(settings, model, computer, oi_judge::judge())
}

async fn setup(
    script: Script,
    tool_mode: bool,
    idle: Option<Duration>,
) -> (ScriptedServer, Interpreter) {
    let server = ScriptedServer::start(script)
        .await
        .expect("scripted server starts");
    let settings = common::settings(&server, tool_mode);
    (server, interpreter(settings, idle))
}

/// Runs a turn to its end: the chunks and the errors.
async fn run_turn(oi: &Interpreter, input: &str) -> (Vec<Chunk>, Vec<String>) {
    let mut turn = oi.chat(input);
    let (mut chunks, mut errors) = (Vec::new(), Vec::new());
    let outcome = tokio::time::timeout(Duration::from_secs(15), async {
        while let Some(event) = turn.next().await {
            match event {
                TurnEvent::Chunk(chunk) => chunks.push(chunk),
                TurnEvent::Error(e) => errors.push(e.to_string()),
                TurnEvent::Approval(request) => request.approve(),
                TurnEvent::Complete => {}
            }
        }
    })
    .await;
    assert!(outcome.is_ok(), "the turn did not end in time");
    (chunks, errors)
}

/// The stored conversation survives a round trip through the LMC parser.
fn assert_stored_valid(oi: &Interpreter) {
    let messages = oi.messages();
    let json = serde_json::to_string(&messages).unwrap();
    let again = Message::list_from_json(&json).expect("stored messages are valid LMC");
    assert_eq!(again, messages);
}

fn ran_code(chunks: &[Chunk]) -> bool {
    chunks.iter().any(|c| c.has_format("output"))
}

/// A second turn after the fault works and answers from the next scripted reply.
async fn assert_next_turn_works(oi: &Interpreter) {
    let (chunks, errors) = run_turn(oi, "are you still there?").await;
    assert!(errors.is_empty(), "next turn failed: {errors:?}");
    let text: String = chunks.iter().filter_map(Chunk::text).collect();
    assert!(text.contains("still here"), "{text:?}");
    assert_stored_valid(oi);
    // After a reply too long for the model's window, the answer starts with oi's note that
    // older messages were left out (shown once, never sent back to the model).
    let last = oi.messages().last().map(|m| m.text().to_owned());
    let answer = last.as_deref().map(|t| match t.split_once("\n\n") {
        Some((note, rest)) if note.starts_with(oi_llm::context_note::NOTE_PREFIX) => rest,
        _ => t,
    });
    assert_eq!(answer, Some("still here"), "{last:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_closing_mid_text_is_an_error_and_the_next_turn_works() {
    let script = Script::new([
        Reply::text("Hello there, this reply is cut")
            .chunked(3)
            .ending(Ending::DropAfter(3)),
        Reply::text("still here"),
    ]);
    let (_server, oi) = setup(script, true, None).await;
    let (chunks, errors) = run_turn(&oi, "hi").await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(!ran_code(&chunks));
    assert_stored_valid(&oi);
    assert_next_turn_works(&oi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_closing_mid_tool_call_never_runs_the_partial_code() {
    // Cut after a few argument pieces: `print('ran')` must not run half-received (a cut
    // `rm -rf /tmp/x/build` is `rm -rf /tmp/x`).
    let marker = "oi_fault_partial_code_ran";
    let code = format!("print('{marker}')\nprint('second line')");
    let script = Script::new([
        Reply::tool_call("python", &code)
            .chunked(4)
            .ending(Ending::DropAfter(22)),
        Reply::text("still here"),
    ]);
    let (server, oi) = setup(script, true, None).await;
    let (chunks, errors) = run_turn(&oi, "run it").await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        chunks
            .iter()
            .filter(|c| c.kind == Some(oi_core::Kind::Code))
            .filter_map(Chunk::text)
            .collect::<String>()
            .starts_with("print("),
        "the cut is inside the code: {chunks:?}"
    );
    assert!(!ran_code(&chunks), "partial code ran: {chunks:?}");
    assert_eq!(server.requests().len(), 1);
    assert_stored_valid(&oi);
    assert_next_turn_works(&oi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_closing_mid_text_mode_block_never_runs_the_partial_code() {
    let script = Script::new([
        Reply::text("Running:\n```python\nprint('oi_fault_partial')\nprint(2)\n```\n")
            .chunked(5)
            .ending(Ending::DropAfter(8)),
        Reply::text("still here"),
    ]);
    let (_server, oi) = setup(script, false, None).await;
    let (chunks, errors) = run_turn(&oi, "run it").await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        chunks.iter().any(|c| c.kind == Some(oi_core::Kind::Code)),
        "the cut is inside the code: {chunks:?}"
    );
    assert!(!ran_code(&chunks), "partial code ran: {chunks:?}");
    assert_stored_valid(&oi);
    assert_next_turn_works(&oi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_answering_garbage_is_an_error_and_the_next_turn_works() {
    let script = Script::new([
        Reply::text("Hello there").chunked(2).malformed_after(2),
        Reply::tool_call("python", "print('never')")
            .chunked(3)
            .malformed_after(3),
        Reply::text("still here"),
    ]);
    let (_server, oi) = setup(script, true, None).await;
    let (chunks, errors) = run_turn(&oi, "hi").await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("not JSON"), "{errors:?}");
    assert!(!ran_code(&chunks));
    assert_stored_valid(&oi);
    let (chunks, errors) = run_turn(&oi, "run").await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(!ran_code(&chunks), "code from a garbled reply ran");
    assert_stored_valid(&oi);
    assert_next_turn_works(&oi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_stalling_hits_the_idle_timeout_and_the_next_turn_works() {
    let script = Script::new([
        Reply::text("Hello there")
            .chunked(2)
            .ending(Ending::StallAfter(2, Duration::from_secs(60))),
        Reply::text("still here"),
    ]);
    let (_server, oi) = setup(script, true, Some(Duration::from_millis(300))).await;
    let started = Instant::now();
    let (chunks, errors) = run_turn(&oi, "hi").await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("sent nothing"), "{errors:?}");
    assert!(!ran_code(&chunks));
    assert_stored_valid(&oi);
    assert_next_turn_works(&oi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_streaming_forever_hits_the_reply_limit_and_the_next_turn_works() {
    let script = Script::new([
        Reply::text("x".repeat(1000)).ending(Ending::Endless),
        Reply::text("still here"),
    ]);
    let (_server, oi) = setup(script, true, None).await;
    let started = Instant::now();
    let (chunks, errors) = run_turn(&oi, "hi").await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("more than 4 MiB of text and code")
            && errors[0].contains("OI_MAX_REPLY_BYTES"),
        "{errors:?}"
    );
    let shown: usize = chunks.iter().filter_map(Chunk::text).map(str::len).sum();
    assert!(shown > 1 << 20 && shown <= 4 << 20, "{shown}");
    // Like any reply cut by an error, the part already shown stays in the conversation.
    let kept = oi.messages();
    assert!(
        kept.iter()
            .any(|m| m.role == oi_core::Role::Assistant && m.text().len() == shown),
        "the partial reply is kept"
    );
    assert_stored_valid(&oi);
    assert_next_turn_works(&oi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_streaming_code_forever_in_tiny_pieces_is_stopped_in_linear_time() {
    let pieces = [
        "{\"language\": \"python\", \"code\": \"".to_owned(),
        "y".repeat(8),
    ];
    let script = Script::new([
        Reply::tool_call_pieces("execute", pieces).ending(Ending::Endless),
        Reply::text("still here"),
    ]);
    let server = ScriptedServer::start(script).await.unwrap();
    let settings = common::settings(&server, true);
    let env = oi_llm::Env::empty().with(oi_llm::reply_limits::REPLY_BYTES_VAR, "1MiB");
    let oi = interpreter_with(settings, None, env);
    let started = Instant::now();
    let (chunks, errors) = run_turn(&oi, "run it").await;
    assert!(
        started.elapsed() < Duration::from_secs(12),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("more than 1 MiB of text and code"),
        "{errors:?}"
    );
    assert!(
        !ran_code(&chunks),
        "code from a reply that never completed ran"
    );
    assert_stored_valid(&oi);
    assert_next_turn_works(&oi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_sending_one_16_mib_line_hits_the_line_limit_and_the_next_turn_works() {
    let script = Script::new([Reply::text("a".repeat(16 << 20)), Reply::text("still here")]);
    let (_server, oi) = setup(script, false, None).await;
    let started = Instant::now();
    let (chunks, errors) = run_turn(&oi, "hi").await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("longer than 4 MiB") && errors[0].contains("OI_MAX_SSE_LINE_BYTES"),
        "{errors:?}"
    );
    assert!(chunks.iter().filter_map(Chunk::text).all(str::is_empty));
    assert_stored_valid(&oi);
    assert_next_turn_works(&oi).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_sending_control_characters_in_an_error_gets_them_escaped() {
    let script = Script::new([
        Reply::status(
            400,
            r#"{"error": {"message": "no \u001b]52;c;eA==\u0007 way"}}"#,
        ),
        Reply::text("still here"),
    ]);
    let (_server, oi) = setup(script, true, None).await;
    let (_, errors) = run_turn(&oi, "hi").await;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        !errors[0].contains('\x1b') && errors[0].contains("no \\u{1b}]52;c;eA==\\u{7} way"),
        "{errors:?}"
    );
    assert_next_turn_works(&oi).await;
}
