//! The OpenAI-compatible provider against the scripted server (real HTTP and SSE).

use std::time::Duration;

use futures::StreamExt;
use oi_core::{
    LanguageModel, LlmSettings, Message, ModelDelta, ModelError, ModelRequest, Settings,
    UnreachableKind,
};
use oi_llm::{Env, OpenAiCompatible, RetryPolicy};
use oi_testkit::{Ending, Reply, Script, ScriptedServer};
use serde_json::json;

fn provider() -> OpenAiCompatible {
    OpenAiCompatible::new()
        .with_env(Env::empty())
        .with_retry(RetryPolicy::none())
        .with_idle_timeout(Some(Duration::from_secs(10)))
}

fn llm(server: &ScriptedServer, model: &str) -> LlmSettings {
    LlmSettings {
        model: model.to_owned(),
        api_base: Some(server.base_url()),
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
        Message::new(
            oi_core::Role::System,
            oi_core::Kind::Message,
            "You are a test.",
        ),
        Message::user("What is 2+2?"),
    ]
}

async fn collect(
    provider: &OpenAiCompatible,
    request: ModelRequest,
) -> Vec<Result<ModelDelta, ModelError>> {
    provider.stream(request).collect().await
}

fn code(language: &str, code: &str) -> Result<ModelDelta, ModelError> {
    Ok(ModelDelta::Code {
        language: language.into(),
        code: code.into(),
    })
}

fn message(text: &str) -> Result<ModelDelta, ModelError> {
    Ok(ModelDelta::Message(text.into()))
}

/// Joins a delta sequence into (text, language, code) and checks no error came.
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
async fn text_mode_reply_becomes_message_then_code_and_stops_at_the_fence() {
    let reply = Reply::text_pieces([
        "Let me compute that.\n``",
        "`python\nprint(",
        "2+2)\n```\nignored",
        " more",
    ]);
    let server = ScriptedServer::start(Script::new([reply])).await.unwrap();
    let deltas = collect(&provider(), request(llm(&server, "openai/local"), ask())).await;
    assert_eq!(
        deltas,
        vec![
            message("Let me compute that.\n"),
            code("python", "print("),
            code("python", "2+2)")
        ]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].authorization, None);
    let body = &requests[0].body;
    assert_eq!(body["model"], "local");
    assert_eq!(body["stream"], true);
    assert_eq!(body["temperature"], 0.0);
    assert!(body.get("tools").is_none());
    assert!(body["messages"][0]["content"].as_str().unwrap().ends_with("\nTo execute code on the user's machine, write a markdown code block. Specify the language after the ```. You will receive the output. Use any programming language."));
}

#[tokio::test]
async fn tool_mode_reply_becomes_message_then_code() {
    let reply = Reply::tool_call("python", "print(239023*79043)").with_text_before("Sure.");
    let server = ScriptedServer::start(Script::new([reply])).await.unwrap();
    let settings = LlmSettings {
        api_key: Some("sk-test".into()),
        ..llm(&server, "gpt-4o")
    };
    let deltas = collect(&provider(), request(settings, ask())).await;
    assert_eq!(
        deltas,
        vec![message("Sure."), code("python", "print(239023*79043)")]
    );
    let requests = server.requests();
    assert_eq!(requests[0].authorization.as_deref(), Some("Bearer sk-test"));
    assert_eq!(
        requests[0].body["tools"][0]["function"]["parameters"]["properties"]["language"]["enum"],
        json!(["python", "shell"])
    );
}

#[tokio::test]
async fn tool_arguments_in_one_char_pieces_still_give_the_code() {
    let code_text = "import os\nprint(\"héllo \\\\ 世界 😀\")\n";
    let server = ScriptedServer::start(Script::new([Reply::tool_call("Python", code_text)
        .with_text_before("Running it.")
        .chunked(1)]))
    .await
    .unwrap();
    let deltas = collect(&provider(), request(llm(&server, "gpt-4o"), ask())).await;
    assert!(
        deltas.len() > 20,
        "streamed piece by piece: {}",
        deltas.len()
    );
    assert_eq!(
        joined(&deltas),
        (
            "Running it.".to_owned(),
            "python".to_owned(),
            code_text.to_owned()
        )
    );
}

#[tokio::test]
async fn legacy_python_tool_name_is_raw_code() {
    let server = ScriptedServer::start(Script::new([Reply::tool_call_pieces(
        "python",
        ["print(", "1)"],
    )]))
    .await
    .unwrap();
    let deltas = collect(&provider(), request(llm(&server, "gpt-4o"), ask())).await;
    assert_eq!(deltas, vec![code("python", "print("), code("python", "1)")]);
}

#[tokio::test]
async fn missing_key_for_openai_is_a_config_error_and_nothing_is_sent() {
    let server = ScriptedServer::start(Script::new([])).await.unwrap();
    let settings = LlmSettings {
        model: "gpt-4o".into(),
        ..LlmSettings::default()
    };
    let env = Env::empty().with("OLLAMA_HOST", &server.base_url());
    let deltas = collect(&provider().with_env(env), request(settings, ask())).await;
    assert_eq!(deltas.len(), 1);
    let Err(ModelError::Config(text)) = &deltas[0] else {
        panic!("{deltas:?}")
    };
    assert!(
        text.contains("--api_key") && text.contains("OPENAI_API_KEY"),
        "{text}"
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn closed_port_is_unreachable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let settings = LlmSettings {
        model: "openai/local".into(),
        api_base: Some(format!("http://127.0.0.1:{port}/v1")),
        ..LlmSettings::default()
    };
    let deltas = collect(&provider(), request(settings, ask())).await;
    assert_eq!(deltas.len(), 1);
    let Err(ModelError::Unreachable { url, reason, kind }) = &deltas[0] else {
        panic!("{deltas:?}")
    };
    assert_eq!(url, &format!("http://127.0.0.1:{port}/v1/chat/completions"));
    assert!(!reason.is_empty());
    assert_eq!(*kind, UnreachableKind::Refused, "{reason}");
}

#[tokio::test]
async fn http_error_is_a_status_error_with_the_message() {
    let body = json!({"error": {"message": "The model `nope` does not exist", "type": "invalid_request_error"}});
    let server = ScriptedServer::start(Script::new([Reply::status(500, body.to_string())]))
        .await
        .unwrap();
    let deltas = collect(&provider(), request(llm(&server, "nope"), ask())).await;
    assert_eq!(
        deltas,
        vec![Err(ModelError::Status {
            status: 500,
            body: "The model `nope` does not exist".into()
        })]
    );
}

#[tokio::test]
async fn malformed_line_is_a_stream_error_naming_it() {
    let server = ScriptedServer::start(Script::new([Reply::text("Hi").malformed_after(2)]))
        .await
        .unwrap();
    let deltas = collect(&provider(), request(llm(&server, "openai/local"), ask())).await;
    assert_eq!(deltas[0], message("Hi"));
    let Err(ModelError::Stream(text)) = &deltas[1] else {
        panic!("{deltas:?}")
    };
    assert!(text.contains("{\"choices\": ["), "{text}");
    assert_eq!(deltas.len(), 2);
}

#[tokio::test]
async fn missing_done_pings_and_cut_streams() {
    let server = ScriptedServer::start(Script::new([
        Reply::text("Hello").with_pings().ending(Ending::NoDone),
        Reply::text("Hello").ending(Ending::CutAfter(2)),
        Reply::text("Hello").ending(Ending::CutAfter(0)),
    ]))
    .await
    .unwrap();
    let p = provider();
    assert_eq!(
        collect(&p, request(llm(&server, "openai/local"), ask())).await,
        vec![message("Hello")]
    );
    assert_eq!(
        collect(&p, request(llm(&server, "openai/local"), ask())).await,
        vec![message("Hello")]
    );
    let nothing = collect(&p, request(llm(&server, "openai/local"), ask())).await;
    assert!(
        matches!(nothing.as_slice(), [Err(ModelError::Stream(_))]),
        "{nothing:?}"
    );
}

#[tokio::test]
async fn dropped_connection_after_output_is_a_stream_error() {
    let server = ScriptedServer::start(Script::new([Reply::text("Hello")
        .chunked(1)
        .ending(Ending::DropAfter(3))]))
    .await
    .unwrap();
    let deltas = collect(&provider(), request(llm(&server, "openai/local"), ask())).await;
    assert_eq!(&deltas[..2], &[message("H"), message("e")]);
    assert!(
        matches!(deltas.last(), Some(Err(ModelError::Stream(_)))),
        "{deltas:?}"
    );
}

#[tokio::test]
async fn idle_timeout_ends_a_stalled_stream() {
    let server = ScriptedServer::start(Script::new([
        Reply::text("Hello").ending(Ending::StallAfter(2, Duration::from_secs(5)))
    ]))
    .await
    .unwrap();
    let p = provider().with_idle_timeout(Some(Duration::from_millis(200)));
    let started = std::time::Instant::now();
    let deltas = collect(&p, request(llm(&server, "openai/local"), ask())).await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(deltas[0], message("Hello"));
    let Err(ModelError::Stream(text)) = &deltas[1] else {
        panic!("{deltas:?}")
    };
    assert!(text.contains("sent nothing for 0.2 seconds"), "{text}");
}

#[tokio::test]
async fn retries_429_and_5xx_before_anything_was_yielded() {
    let server = ScriptedServer::start(Script::new([
        Reply::status(429, "slow down").with_retry_after(0),
        Reply::status(503, "busy"),
        Reply::text("Hello").ending(Ending::DropAfter(1)),
        Reply::text("Hello"),
    ]))
    .await
    .unwrap();
    let retry = RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(10),
        ..RetryPolicy::default()
    };
    let deltas = collect(
        &provider().with_retry(retry),
        request(llm(&server, "openai/local"), ask()),
    )
    .await;
    assert_eq!(deltas, vec![message("Hello")]);
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn gives_up_after_the_last_retry_with_the_last_error() {
    let server = ScriptedServer::start(Script::new([
        Reply::status(502, "bad gateway"),
        Reply::status(502, "still bad"),
    ]))
    .await
    .unwrap();
    let retry = RetryPolicy {
        max_retries: 1,
        base_delay: Duration::from_millis(1),
        ..RetryPolicy::default()
    };
    let deltas = collect(
        &provider().with_retry(retry),
        request(llm(&server, "openai/local"), ask()),
    )
    .await;
    assert_eq!(
        deltas,
        vec![Err(ModelError::Status {
            status: 502,
            body: "still bad".into()
        })]
    );
}

#[tokio::test]
async fn api_version_goes_in_the_query() {
    let server = ScriptedServer::start(Script::new([Reply::text("ok")]))
        .await
        .unwrap();
    let settings = LlmSettings {
        api_version: Some("2024-02-01".into()),
        ..llm(&server, "openai/local")
    };
    collect(&provider(), request(settings, ask())).await;
    assert_eq!(
        server.requests()[0].query.as_deref(),
        Some("api-version=2024-02-01")
    );
}

#[tokio::test]
async fn calculator_round_trip_in_both_modes() {
    let server = ScriptedServer::start(Script::calculator()).await.unwrap();
    let question = vec![Message::user("What is 239023*79043?")];
    for model in ["gpt-4o", "openai/local"] {
        let deltas = collect(&provider(), request(llm(&server, model), question.clone())).await;
        assert_eq!(joined(&deltas).2, "print(239023*79043)", "{model}");
        let mut history = question.clone();
        history.push(Message::code("python", "print(239023*79043)"));
        history.push(Message::console_output("18893195389\n"));
        let deltas = collect(&provider(), request(llm(&server, model), history)).await;
        assert_eq!(joined(&deltas).0, "The result is 18893195389.", "{model}");
    }
}

#[tokio::test]
async fn ollama_latest_tag_context_length_and_listing() {
    let server = ScriptedServer::start(Script::new([Reply::text("one"), Reply::text("two")]))
        .await
        .unwrap();
    // A history far longer than Ollama's reported 2048-token window is trimmed to fit.
    let mut messages = ask();
    for i in 0..40 {
        messages.insert(
            1,
            Message::user(format!("old message {i}: {}", "words ".repeat(100))),
        );
    }
    let p = provider();
    for expected in ["one", "two"] {
        let deltas = collect(
            &p,
            request(llm(&server, "ollama/llama3:latest"), messages.clone()),
        )
        .await;
        assert_eq!(deltas, vec![message(expected)]);
    }
    assert_eq!(
        server.ollama_show_requests(),
        vec![json!({"model": "llama3", "name": "llama3"})],
        "looked up once"
    );
    let sent = server.requests().remove(0).body;
    assert_eq!(sent["model"], "llama3");
    let chars = sent["messages"].to_string().chars().count();
    assert!(
        chars / 4 <= usize::try_from(oi_testkit::OLLAMA_CONTEXT_LENGTH).unwrap(),
        "trimmed to the window: {chars} chars"
    );
    assert_eq!(sent["messages"][0]["role"], "system");
    assert!(
        sent["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("You are a test.")
    );
    let last = sent["messages"].as_array().unwrap().last().unwrap().clone();
    // Text mode merged the user messages; the boundary one is shortened from the middle.
    let last = last["content"].as_str().unwrap();
    assert!(
        last.ends_with("What is 2+2?") && last.contains("..."),
        "the newest text is kept"
    );
    let host = oi_llm::ollama::host_of(&server.base_url());
    let models = oi_llm::ollama::list_models(&reqwest::Client::new(), &host)
        .await
        .unwrap();
    assert_eq!(models, ["scripted", "llama3.1:8b"]);
}

#[tokio::test]
async fn json_tool_calls_in_text_run_as_code() {
    let fenced = "```json\n{\"name\": \"execute\", \"arguments\": {\"language\": \"python\", \"code\": \"print('hello world')\"}}\n```\nThat runs it.";
    let bare = "{\"language\": \"shell\", \"code\": \"echo hi\"}";
    let server = ScriptedServer::start(Script::new([
        Reply::text(fenced).chunked(2),
        Reply::text(bare).chunked(3),
        Reply::text("{\"a\": 1} is JSON").chunked(3),
    ]))
    .await
    .unwrap();
    let p = provider();
    let first = collect(&p, request(llm(&server, "openai/local"), ask())).await;
    assert_eq!(first, vec![code("python", "print('hello world')")]);
    let second = collect(&p, request(llm(&server, "openai/local"), ask())).await;
    assert_eq!(second, vec![code("shell", "echo hi")]);
    let third = collect(&p, request(llm(&server, "openai/local"), ask())).await;
    assert_eq!(joined(&third).0, "{\"a\": 1} is JSON");
}
