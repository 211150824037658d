//! End to end with the real embedded model (feature `local`): Qwen2.5-Coder-0.5B at
//! temperature 0 drives the real core and a real Python. Skipped, with the reason printed,
//! when the model file is absent (`cargo xtask fetch-model` downloads it).
//!
//! Run: `cargo xtask fetch-model && cargo test -p oi-llm --features local --test local_e2e -- --nocapture --test-threads=1`
//! (one thread: the tests share the loaded model and 2 cores).
#![cfg(feature = "local")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use oi_core::{Interpreter, Kind, Role, Settings};
use oi_llm::local::LocalProvider;

mod local_support;
use local_support::{ANSWER, QUESTION, model, system_message};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_model_runs_python_and_reports_the_output() {
    let Some(model) = model() else {
        return;
    };
    let provider = Arc::new(LocalProvider::new(model, 8192).unwrap());

    let mut settings = Settings {
        auto_run: true,
        conversation_history: false,
        system_message: system_message(),
        ..Settings::default()
    };
    settings.llm.model = "local".to_owned();
    settings.llm.temperature = 0.0;
    settings.llm.context_window = Some(4096);
    settings.llm.max_tokens = Some(400);
    let interpreter = Interpreter::new(
        settings,
        provider.clone(),
        Arc::new(oi_computer::LocalComputer::new()),
        oi_judge::judge(),
    );

    let started = Instant::now();
    let turn = interpreter.chat(QUESTION);
    let chunks = tokio::time::timeout(Duration::from_secs(600), turn.collect::<Vec<_>>())
        .await
        .expect("the turn finished within 10 minutes");
    eprintln!("turn wall time: {:.2} s", started.elapsed().as_secs_f64());
    tokio::time::sleep(Duration::from_millis(300)).await;
    if let Some(stats) = provider.last_stats() {
        eprintln!("last reply: {stats}");
    }
    for event in &chunks {
        assert!(
            !matches!(event, oi_core::TurnEvent::Error(_)),
            "turn error: {event:?}"
        );
    }

    let messages = interpreter.messages();
    for m in &messages {
        eprintln!("{:?}/{:?}: {}", m.role, m.kind, m.text());
    }
    let code = messages
        .iter()
        .find(|m| m.kind == Kind::Code)
        .expect("the model wrote a code block");
    assert_eq!(code.format.as_deref(), Some("python"));
    let output = messages
        .iter()
        .find(|m| m.role == Role::Computer && m.kind == Kind::Console)
        .expect("the code ran and printed something");
    assert!(output.text().contains(ANSWER), "output: {}", output.text());
    let last = messages.last().expect("messages");
    assert_eq!((last.role, last.kind), (Role::Assistant, Kind::Message));
    let digits: String = last.text().chars().filter(char::is_ascii_digit).collect();
    assert!(
        digits.contains(ANSWER),
        "the final answer does not carry the output: {}",
        last.text()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_stream_stops_generation() {
    use oi_core::{LanguageModel, Message, ModelRequest};
    let Some(model) = model() else {
        return;
    };
    let provider = LocalProvider::new(model, 2048).unwrap();
    let settings = Settings::default();
    let mut llm = settings.llm.clone();
    llm.model = "local".to_owned();
    llm.max_tokens = Some(500);
    let request = ModelRequest {
        messages: vec![Message::user(
            "Write a long story about a robot, at least 400 words.",
        )],
        languages: vec!["python".to_owned()],
        llm,
        templates: settings.templates(),
        tools: Vec::new(),
    };
    let mut stream = provider.stream(request.clone());
    for _ in 0..3 {
        stream.next().await.expect("a delta").expect("no error");
    }
    drop(stream);
    // The worker notices within a token; the next reply then starts at once.
    // Timed against the same short reply asked again (the machine may be busy: CI shares two
    // cores): a dropped reply still generating its 500 tokens would cost many times that.
    let mut short = request;
    short.llm.max_tokens = Some(5);
    let started = Instant::now();
    let _: Vec<_> = provider.stream(short.clone()).collect().await;
    let after_drop = started.elapsed();
    let stats = provider.last_stats().unwrap();
    assert_eq!(stats.generated_tokens, 5);
    let started = Instant::now();
    let _: Vec<_> = provider.stream(short).collect().await;
    let again = started.elapsed();
    assert!(
        after_drop < again * 3 + Duration::from_secs(2),
        "the dropped reply kept the model busy: {after_drop:?} after the drop, {again:?} for the same reply again"
    );
}

/// Throughput on a 200-token code answer: `cargo test -p oi-llm --features local --release
/// --test local_e2e -- --ignored --nocapture measure_throughput`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a check"]
async fn measure_throughput() {
    use oi_core::{LanguageModel, Message, ModelRequest};
    let Some(model) = model() else {
        return;
    };
    let provider = LocalProvider::new(model, 4096).unwrap();
    let settings = Settings::default();
    let mut llm = settings.llm.clone();
    llm.model = "local".to_owned();
    llm.max_tokens = Some(200);
    let request = ModelRequest {
        messages: vec![
            Message::new(Role::System, Kind::Message, system_message()),
            Message::user(
                "Write a Python script that lists the files in the current directory sorted by size, with comments.",
            ),
        ],
        languages: vec!["python".to_owned()],
        llm,
        templates: settings.templates(),
        tools: Vec::new(),
    };
    for _ in 0..3 {
        let started = Instant::now();
        let _: Vec<_> = provider.stream(request.clone()).collect().await;
        let elapsed = started.elapsed();
        // A reply ended by its closing fence is recorded when the worker notices (one token).
        tokio::time::sleep(Duration::from_millis(300)).await;
        eprintln!(
            "{:.2} s: {}",
            elapsed.as_secs_f64(),
            provider.last_stats().unwrap()
        );
    }
}
