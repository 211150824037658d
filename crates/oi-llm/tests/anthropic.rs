//! The Anthropic Messages provider against the scripted server's `/v1/messages` (real HTTP
//! and named SSE events).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures::StreamExt;
use oi_core::{
    Kind, LanguageModel, LlmSettings, Message, ModelDelta, ModelError, ModelRequest, Role,
    Settings, Usage,
};
use oi_llm::{Anthropic, Env, RetryPolicy};
use oi_testkit::{Ending, Reply, Script, ScriptedServer, ToolCall};

fn provider() -> Anthropic {
    Anthropic::new()
        .with_env(Env::empty())
        .with_retry(RetryPolicy::none())
        .with_idle_timeout(Some(Duration::from_secs(10)))
}

fn llm(server: &ScriptedServer, model: &str) -> LlmSettings {
    LlmSettings {
        model: model.to_owned(),
        api_base: Some(server.anthropic_base_url()),
        api_key: Some("sk-ant-test".into()),
        ..LlmSettings::default()
    }
}

fn request(llm: LlmSettings, messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        messages,
        languages: vec!["python".to_owned(), "shell".to_owned()],
        llm,
        templates: Settings::default().templates(),
        tools: Vec::new(),
    }
}

fn ask() -> Vec<Message> {
    vec![
        Message::new(Role::System, Kind::Message, "You are a test."),
        Message::user("What is 2+2?"),
    ]
}

async fn collect(
    provider: &Anthropic,
    request: ModelRequest,
) -> Vec<Result<ModelDelta, ModelError>> {
    provider.stream(request).collect().await
}

fn joined(deltas: &[Result<ModelDelta, ModelError>]) -> (String, String, String) {
    let (mut text, mut language, mut code) = (String::new(), String::new(), String::new());
    for delta in deltas {
        match delta {
            Ok(ModelDelta::Message(t)) => text.push_str(t),
            Ok(ModelDelta::Code {
                language: l,
                code: c,
            }) => {
                language.clone_from(l);
                code.push_str(c);
            }
            Ok(ModelDelta::Usage(_)) => {}
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    (text, language, code)
}

#[tokio::test]
async fn tool_use_streams_as_code_with_headers_system_and_tool() {
    let code_text = "import math\nprint(math.sqrt(2))";
    let server = ScriptedServer::start(Script::new([Reply::tool_call("python", code_text)
        .with_text_before("Computing.")
        .chunked(1)]))
    .await
    .unwrap();
    let deltas = collect(
        &provider(),
        request(llm(&server, "anthropic/claude-3.5"), ask()),
    )
    .await;
    assert_eq!(
        joined(&deltas),
        ("Computing.".into(), "python".into(), code_text.into())
    );
    assert!(deltas.len() > 10, "code arrives piece by piece");
    let sent = server.requests().remove(0);
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.api_key.as_deref(), Some("sk-ant-test"));
    assert_eq!(sent.anthropic_version.as_deref(), Some("2023-06-01"));
    assert_eq!(sent.authorization, None);
    assert_eq!(sent.body["model"], "claude-3-5-sonnet-20240620");
    assert_eq!(sent.body["system"], "You are a test.");
    assert_eq!(sent.body["max_tokens"], 8192);
    assert_eq!(sent.body["tools"][0]["name"], "execute");
    assert_eq!(
        sent.body["tools"][0]["input_schema"]["properties"]["language"]["enum"],
        serde_json::json!(["python", "shell"])
    );
}

#[tokio::test]
async fn only_the_first_of_several_tool_calls_runs() {
    let server = ScriptedServer::start(Script::new([Reply::tool_calls(
        None,
        vec![
            ToolCall::execute("shell", "ls"),
            ToolCall::execute("python", "print(9)"),
        ],
    )]))
    .await
    .unwrap();
    let deltas = collect(
        &provider(),
        request(llm(&server, "claude-3-5-sonnet"), ask()),
    )
    .await;
    assert_eq!(
        joined(&deltas),
        (String::new(), "shell".into(), "ls".into())
    );
}

#[tokio::test]
async fn text_mode_fences_and_json_tool_calls() {
    let server = ScriptedServer::start(Script::new([
        Reply::text("Run:\n```python\nprint(2)\n```\nignored").chunked(3),
        Reply::text("{\"language\": \"shell\", \"code\": \"echo hi\"}").chunked(4),
    ]))
    .await
    .unwrap();
    let text_only = LlmSettings {
        supports_functions: Some(false),
        ..llm(&server, "anthropic/claude-3-haiku-20240307")
    };
    let first = collect(&provider(), request(text_only.clone(), ask())).await;
    assert_eq!(
        joined(&first),
        ("Run:\n".into(), "python".into(), "print(2)".into())
    );
    let sent = server.requests().remove(0);
    assert!(sent.body.get("tools").is_none());
    assert!(
        sent.body["system"]
            .as_str()
            .unwrap()
            .contains("write a markdown code block"),
        "execution instructions are appended in text mode"
    );
    let second = collect(&provider(), request(text_only, ask())).await;
    assert_eq!(
        joined(&second),
        (String::new(), "shell".into(), "echo hi".into())
    );
}

#[tokio::test]
async fn missing_key_is_one_sentence_and_nothing_is_sent() {
    let server = ScriptedServer::start(Script::new([])).await.unwrap();
    let llm = LlmSettings {
        model: "claude-3-5-sonnet".into(),
        ..LlmSettings::default()
    };
    let deltas = collect(&provider(), request(llm, ask())).await;
    let [Err(ModelError::Config(text))] = deltas.as_slice() else {
        panic!("expected one config error, got {deltas:?}");
    };
    assert_eq!(
        text,
        "No Anthropic API key is set: pass one with --api_key or set the ANTHROPIC_API_KEY environment variable."
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn retries_overload_then_streams_and_reports_errors() {
    let overloaded =
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let server = ScriptedServer::start(Script::new([
        Reply::status(529, overloaded).with_retry_after(0),
        Reply::text("Hello").ending(Ending::DropAfter(1)),
        Reply::text("Hello").with_pings().with_usage(12, 3),
        Reply::status(
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad things"}}"#,
        ),
    ]))
    .await
    .unwrap();
    let retrying = provider().with_retry(RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(1),
        ..RetryPolicy::default()
    });
    let deltas = collect(&retrying, request(llm(&server, "claude-3.5"), ask())).await;
    let usage = Usage {
        prompt_tokens: 12,
        reply_tokens: 3,
        cost: None,
    };
    assert_eq!(
        deltas,
        vec![
            Ok(ModelDelta::Message("Hello".into())),
            Ok(ModelDelta::Usage(usage))
        ]
    );
    assert_eq!(server.requests().len(), 3);
    let error = collect(&retrying, request(llm(&server, "claude-3.5"), ask())).await;
    assert_eq!(
        error,
        vec![Err(ModelError::Status {
            status: 400,
            body: "bad things".into()
        })]
    );
}

#[tokio::test]
async fn history_becomes_tool_use_and_tool_result_with_images() {
    let server = ScriptedServer::start(Script::new([Reply::text("ok")]))
        .await
        .unwrap();
    let messages = vec![
        Message::new(Role::System, Kind::Message, "You are a test."),
        Message::user("Compute 2+2, then look."),
        Message::assistant("Sure."),
        Message::code("python", "print(2+2)"),
        Message::console_output("4\n"),
        Message::code("shell", "true"),
        Message::console_output(""),
        Message::new(Role::Computer, Kind::Image, "AAAA").with_format("base64.png"),
        Message::assistant("Done."),
        Message::user("Thanks!"),
    ];
    let mut settings = llm(&server, "claude-3-5-sonnet-20240620");
    settings.max_tokens = Some(1000);
    let _ = collect(&provider(), request(settings, messages)).await;
    let body = server.requests().remove(0).body;
    insta::assert_json_snapshot!(body);
}
