//! Trimming on every wire, through the router and the scripted server: a conversation past
//! the window is sent with the system message and the newest messages, the reply starts with
//! the note once, and the note never goes back to the model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures::StreamExt;
use oi_core::{
    Kind, LanguageModel, LlmSettings, Message, ModelDelta, ModelRequest, Role, Settings,
};
use oi_llm::context_note::NOTE_PREFIX;
use oi_llm::{Env, provider_for};
use oi_testkit::{Reply, Script, ScriptedServer};
use serde_json::Value;

fn long_history(turns: usize) -> Vec<Message> {
    let mut messages = vec![Message::new(Role::System, Kind::Message, "You are a test.")];
    for i in 0..turns {
        messages.push(Message::user(format!(
            "question {i}: {}",
            "many words here ".repeat(200)
        )));
        messages.push(Message::assistant(format!("answer {i}")));
    }
    messages.push(Message::user("the newest question"));
    messages
}

fn request(model: &str, base: String, messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        messages,
        languages: vec!["python".into()],
        llm: LlmSettings {
            model: model.to_owned(),
            api_base: Some(base),
            api_key: Some("k".into()),
            context_window: Some(4000),
            max_tokens: Some(500),
            ..LlmSettings::default()
        },
        templates: Settings::default().templates(),
        tools: Vec::new(),
    }
}

async fn reply(model: &dyn LanguageModel, request: ModelRequest) -> String {
    let deltas: Vec<_> = tokio::time::timeout(
        Duration::from_secs(20),
        model.stream(request).collect::<Vec<_>>(),
    )
    .await
    .unwrap();
    deltas
        .into_iter()
        .map(|d| match d.unwrap() {
            ModelDelta::Message(text) => text,
            ModelDelta::Code { code, .. } => code,
            ModelDelta::Usage(_) => String::new(),
        })
        .collect()
}

/// All the text of a request body's messages (OpenAI or Anthropic).
fn sent_text(body: &Value) -> String {
    body.to_string()
}

async fn check_wire(model_name: &str, anthropic: bool) {
    let server = ScriptedServer::start(Script::new([Reply::text("first"), Reply::text("second")]))
        .await
        .unwrap();
    let base = if anthropic {
        server.anthropic_base_url()
    } else {
        server.base_url()
    };
    let provider = provider_for(
        &request(model_name, base.clone(), Vec::new()).llm,
        Env::empty(),
    )
    .unwrap();
    let mut history = long_history(12);
    let first = reply(
        provider.as_ref(),
        request(model_name, base.clone(), history.clone()),
    )
    .await;
    assert!(first.starts_with(NOTE_PREFIX), "{model_name}: {first:.120}");
    assert!(first.ends_with("first"), "{first}");
    let body = &server.requests()[0].body;
    let text = sent_text(body);
    assert!(
        text.contains("You are a test."),
        "the system message is kept"
    );
    assert!(
        text.contains("the newest question"),
        "the newest message is kept"
    );
    assert!(
        !text.contains("question 0:"),
        "the oldest message is left out"
    );
    // At 4 000 tokens less 525, about 4 characters a token: far below the whole history.
    assert!(
        text.len() < 3_500 * 6,
        "{model_name}: {} bytes sent",
        text.len()
    );

    history.push(Message::assistant(first));
    history.push(Message::user("one more"));
    let second = reply(provider.as_ref(), request(model_name, base, history)).await;
    assert_eq!(second, "second", "the note is said once");
    let text = sent_text(&server.requests()[1].body);
    assert!(
        !text.contains("oi left out"),
        "the note went back to the model"
    );
}

#[tokio::test]
async fn the_openai_wire_trims_and_says_so_once() {
    check_wire("openai/my-model", false).await;
}

#[tokio::test]
async fn the_anthropic_wire_trims_and_says_so_once() {
    check_wire("anthropic/claude-3-5-haiku-20241022", true).await;
}
