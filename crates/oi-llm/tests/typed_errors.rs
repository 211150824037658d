//! HTTP errors become typed [`ModelError`]s (credentials refused, rate limited, the context
//! window exceeded) from the status and the provider's own error body, over real HTTP to
//! the scripted server, so that front ends can act on the kind and not on the text.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures::StreamExt;
use oi_core::{LanguageModel, LlmSettings, Message, ModelError, ModelRequest, Settings};
use oi_llm::{Env, OpenAiCompatible, RetryPolicy};
use oi_testkit::{Reply, Script, ScriptedServer};
use serde_json::json;

/// The error one request to a server answering `status` with `body` ends in.
async fn error_for(status: u16, body: serde_json::Value) -> ModelError {
    let server = ScriptedServer::start(Script::new([Reply::status(status, body.to_string())]))
        .await
        .expect("the scripted server starts");
    let provider = OpenAiCompatible::new()
        .with_env(Env::empty())
        .with_retry(RetryPolicy::none())
        .with_idle_timeout(Some(Duration::from_secs(10)));
    let request = ModelRequest {
        messages: vec![
            Message::new(oi_core::Role::System, oi_core::Kind::Message, "Be brief."),
            Message::user("What is 2+2?"),
        ],
        languages: vec!["python".to_owned()],
        llm: LlmSettings {
            model: "openai/local".to_owned(),
            api_base: Some(server.base_url()),
            ..LlmSettings::default()
        },
        templates: Settings::default().templates(),
        tools: Vec::new(),
    };
    let deltas: Vec<_> = provider.stream(request).collect().await;
    match deltas.as_slice() {
        [Err(error)] => error.clone(),
        other => panic!("expected one error, got {other:?}"),
    }
}

fn openai_error(message: &str, code: &str) -> serde_json::Value {
    json!({"error": {"message": message, "type": "invalid_request_error", "code": code}})
}

#[tokio::test]
async fn a_refused_key_is_unauthorized() {
    let error = error_for(
        401,
        openai_error("Incorrect API key provided: sk-***", "invalid_api_key"),
    )
    .await;
    assert_eq!(
        error,
        ModelError::Unauthorized {
            status: 401,
            body: "Incorrect API key provided: sk-***".into()
        }
    );
    assert_eq!(error.http_status(), Some(401));
    assert!(error.to_string().contains("--api_key"), "{error}");
}

#[tokio::test]
async fn too_many_requests_is_rate_limited() {
    let error = error_for(
        429,
        openai_error("Rate limit reached for gpt-4o", "rate_limit_exceeded"),
    )
    .await;
    assert!(
        matches!(&error, ModelError::RateLimited { status: 429, body } if body == "Rate limit reached for gpt-4o"),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_provider_saying_the_prompt_is_too_long_is_context_window_exceeded() {
    let openai = error_for(
        400,
        openai_error(
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
            "context_length_exceeded",
        ),
    )
    .await;
    assert!(
        matches!(
            openai,
            ModelError::ContextWindowExceeded { status: 400, .. }
        ),
        "{openai:?}"
    );
    let anthropic = error_for(
        400,
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}),
    )
    .await;
    assert!(
        matches!(
            anthropic,
            ModelError::ContextWindowExceeded { status: 400, .. }
        ),
        "{anthropic:?}"
    );
    assert!(
        anthropic.to_string().contains("context_window"),
        "{anthropic}"
    );
}

#[tokio::test]
async fn other_client_errors_stay_plain_status_errors() {
    let error = error_for(
        400,
        openai_error("Invalid value for 'temperature'", "invalid_value"),
    )
    .await;
    assert_eq!(
        error,
        ModelError::Status {
            status: 400,
            body: "Invalid value for 'temperature'".into()
        }
    );
}
