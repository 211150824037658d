//! The usage of a reply, asked for on the OpenAI wire (`stream_options.include_usage`) with or
//! without `max_budget`, and a server that refuses the field (real HTTP to the scripted server).

use std::time::Duration;

use futures::StreamExt;
use oi_core::{LanguageModel, LlmSettings, Message, ModelDelta, ModelRequest, Settings, Usage};
use oi_llm::{Env, OpenAiCompatible, RetryPolicy};
use oi_testkit::{Reply, Script, ScriptedServer};
use serde_json::Value;

fn provider() -> OpenAiCompatible {
    OpenAiCompatible::new()
        .with_env(Env::empty())
        .with_retry(RetryPolicy::none())
        .with_idle_timeout(Some(Duration::from_secs(10)))
}

fn request(server: &ScriptedServer) -> ModelRequest {
    ModelRequest {
        messages: vec![Message::user("What is 2+2?")],
        languages: vec!["python".to_owned()],
        tools: Vec::new(),
        llm: LlmSettings {
            model: "openai/scripted".to_owned(),
            api_base: Some(server.base_url()),
            ..LlmSettings::default()
        },
        templates: Settings::default().templates(),
    }
}

/// The text and the usage reports of a reply; panics on an error.
async fn reply(provider: &OpenAiCompatible, request: ModelRequest) -> (String, Vec<Usage>) {
    let mut text = String::new();
    let mut usage = Vec::new();
    let mut stream = provider.stream(request);
    while let Some(item) = stream.next().await {
        match item {
            Ok(ModelDelta::Message(t)) => text.push_str(&t),
            Ok(ModelDelta::Usage(u)) => usage.push(u),
            Ok(other) => panic!("unexpected {other:?}"),
            Err(error) => panic!("the reply failed: {error}"),
        }
    }
    (text, usage)
}

fn asks_usage(body: &Value) -> bool {
    body.pointer("/stream_options/include_usage") == Some(&Value::Bool(true))
}

#[tokio::test]
async fn usage_is_asked_for_without_a_budget_and_reported() {
    let server = ScriptedServer::start(Script::new([Reply::text("Four.").with_usage(12, 3)]))
        .await
        .unwrap();
    let (text, usage) = reply(&provider(), request(&server)).await;
    assert_eq!(text, "Four.");
    assert_eq!(
        usage,
        vec![Usage {
            prompt_tokens: 12,
            reply_tokens: 3,
            cost: None
        }]
    );
    assert!(asks_usage(&server.requests()[0].body));
}

#[tokio::test]
async fn a_server_refusing_stream_options_is_asked_again_without_it_and_remembered() {
    let refusal = r#"{"error": {"message": "Unrecognized request argument supplied: stream_options", "type": "invalid_request_error"}}"#;
    let server = ScriptedServer::start(Script::new([
        Reply::status(400, refusal),
        Reply::text("Four."),
        Reply::text("Five."),
    ]))
    .await
    .unwrap();
    let provider = provider();
    let (text, usage) = reply(&provider, request(&server)).await;
    assert_eq!(text, "Four.");
    assert!(usage.is_empty());
    let (text, _) = reply(&provider, request(&server)).await;
    assert_eq!(text, "Five.");
    let asked: Vec<bool> = server
        .requests()
        .iter()
        .map(|r| asks_usage(&r.body))
        .collect();
    assert_eq!(asked, [true, false, false]);
}

#[tokio::test]
async fn another_400_is_an_error_not_a_second_request() {
    let server = ScriptedServer::start(Script::new([
        Reply::status(400, r#"{"error": {"message": "model not found"}}"#),
        Reply::text("never"),
    ]))
    .await
    .unwrap();
    let items: Vec<_> = provider().stream(request(&server)).collect().await;
    assert!(items.iter().any(Result::is_err), "{items:?}");
    assert_eq!(server.request_count(), 1);
}
