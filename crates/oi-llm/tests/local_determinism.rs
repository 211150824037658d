//! The embedded model's replies at temperature 0 depend on the request alone: not on whether
//! the previous reply was read to its end or dropped early (which used to decide whether its
//! last token stayed in the KV cache, and changed the next reply), nor on what the context
//! held before. Real model (Qwen2.5-Coder-0.5B), skipped with the reason printed when its
//! file is absent (`cargo xtask fetch-model`).
//!
//! Run: `cargo test -p oi-llm --features local --test local_determinism -- --nocapture --test-threads=1`
#![cfg(feature = "local")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod local_support;

use futures::StreamExt;
use local_support::{ANSWER, QUESTION, code_of, first_request, model, reply, request, stats};
use oi_core::{LanguageModel, Message, ModelDelta};
use oi_llm::local::{LocalConfig, LocalProvider};

fn provider(model: std::sync::Arc<oi_llm::local::LocalModel>) -> LocalProvider {
    LocalProvider::with_config(model, LocalConfig::new(4096)).unwrap()
}

/// The second request of the turn: the first reply's code ran and printed the answer.
fn second_request(code: &str) -> oi_core::ModelRequest {
    request(
        vec![
            Message::user(QUESTION),
            Message::code("python", code),
            Message::console_output(ANSWER),
        ],
        40,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_next_reply_is_the_same_however_the_previous_one_was_read() {
    let Some(model) = model() else {
        return;
    };

    // Read to the end: the first reply, then the second request built from its code.
    let full = provider(model.clone());
    let first = reply(&full, first_request()).await;
    let code = code_of(&first);
    assert!(
        code.contains("239023"),
        "the model wrote no code: {first:?}"
    );
    let after_full = reply(&full, second_request(&code)).await;
    let full_stats = stats(&full, 2);
    eprintln!("after a full read: {full_stats}");
    assert!(
        full_stats.cached_tokens > 0,
        "the second call reused nothing, so this test shows nothing"
    );

    // Dropped right after the first piece of the reply.
    let early = provider(model.clone());
    let mut stream = early.stream(first_request());
    stream.next().await.unwrap().unwrap();
    drop(stream);
    let after_early = reply(&early, second_request(&code)).await;
    let early_stats = stats(&early, 2);
    eprintln!("after an early drop: {early_stats}");

    // Dropped the moment the code block closed (what a turn does), racing the worker.
    let at_fence = provider(model.clone());
    let mut stream = at_fence.stream(first_request());
    let mut seen = String::new();
    while let Some(delta) = stream.next().await {
        if let ModelDelta::Code { code, .. } = delta.unwrap() {
            seen.push_str(&code);
        }
        if seen.len() >= code.len() {
            break;
        }
    }
    drop(stream);
    let after_fence = reply(&at_fence, second_request(&code)).await;
    let fence_stats = stats(&at_fence, 2);
    eprintln!("after a drop at the fence: {fence_stats}");

    // A fresh context that never saw the first request.
    let fresh = provider(model.clone());
    let alone = reply(&fresh, second_request(&code)).await;

    eprintln!("second reply: {after_full:?}");
    // What the context held after the first reply is the same in all three cases (it used to
    // be the prompt plus however many reply tokens were evaluated before the reader left).
    assert_eq!(early_stats.cached_tokens, full_stats.cached_tokens);
    assert_eq!(fence_stats.cached_tokens, full_stats.cached_tokens);
    assert_eq!(after_early, after_full, "dropped early vs read to the end");
    assert_eq!(
        after_fence, after_full,
        "dropped at the fence vs read to the end"
    );
    assert_eq!(
        alone, after_full,
        "fresh context vs after the first request"
    );
    let text: String = after_full
        .iter()
        .filter_map(|d| match d {
            ModelDelta::Message(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        text.contains(ANSWER),
        "the answer is not in the reply: {text}"
    );

    // The same request again on the same context: the same reply.
    let again = reply(&full, second_request(&code)).await;
    assert_eq!(again, after_full, "the same request twice");
}

/// The text of a reply's message deltas.
fn text_of(deltas: &[ModelDelta]) -> String {
    deltas
        .iter()
        .filter_map(|d| match d {
            ModelDelta::Message(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_read_in_part_or_whole_leaves_the_same_context() {
    let Some(model) = model() else {
        return;
    };
    let ask = || {
        request(
            vec![Message::user(
                "Without code: what is the capital of France? One short sentence.",
            )],
            40,
        )
    };
    let full = provider(model.clone());
    let first = text_of(&reply(&full, ask()).await);
    assert!(!first.is_empty(), "no text reply");
    // The follow-up carries the first reply word for word, so its tokens are the ones the
    // model generated: the context could reuse them, if it kept them.
    let follow_up = || {
        request(
            vec![
                Message::user("Without code: what is the capital of France? One short sentence."),
                Message::assistant(first.as_str()),
                Message::user("And of Germany? One short sentence."),
            ],
            40,
        )
    };
    let after_full = reply(&full, follow_up()).await;
    let full_stats = stats(&full, 2);
    eprintln!("after a full read: {full_stats}");

    let early = provider(model.clone());
    let mut stream = early.stream(ask());
    stream.next().await.unwrap().unwrap();
    stream.next().await.unwrap().unwrap();
    drop(stream);
    let after_early = reply(&early, follow_up()).await;
    let early_stats = stats(&early, 2);
    eprintln!("after an early drop: {early_stats}");
    eprintln!("follow-up reply: {}", text_of(&after_full));
    assert_eq!(early_stats.cached_tokens, full_stats.cached_tokens);
    assert_eq!(text_of(&after_early), text_of(&after_full));
    assert_eq!(after_early, after_full);
}
