//! The server's model key is bound to the endpoint it was configured for (issue 21.4),
//! through the real `oi-server` binary: a client that switches the model to `ollama/x` over
//! `POST /settings` gets its requests sent to Ollama's address (here a listener standing in
//! for it) without the key; the configured endpoint still gets it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::time::Duration;

use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, ServerProcess, raw};

const SERVER_KEY: &str = "sk-the-servers-own-key";
const CLIENT_KEY: &str = "client-door-key";

async fn post(server: &ServerProcess, path: &str, body: &str) -> (u16, String) {
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {}\r\nX-API-KEY: {CLIENT_KEY}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        server.addr(),
        body.len()
    );
    let answer = raw(&server.addr(), &request).await;
    (answer.status, answer.body().to_owned())
}

const CHAT: &str = r#"{"model": "oi", "messages": [{"role": "user", "content": "hello"}]}"#;

fn start(configured: &ScriptedServer, ollama: &ScriptedServer, extra: &[&str]) -> ServerProcess {
    Launch::new(&configured.base_url())
        .without_model_flags()
        .args(&["--model", "gpt-4o", "--api_key", SERVER_KEY])
        .args(extra)
        .env("OPENAI_BASE_URL", &configured.base_url())
        .env("OLLAMA_HOST", &ollama.addr().to_string())
        .env("INTERPRETER_API_KEY", CLIENT_KEY)
        .start()
}

/// Whether any request `server` recorded carries the server's key, in any header or the body.
fn saw_key(server: &ScriptedServer) -> bool {
    server.requests().iter().any(|request| {
        request.headers.iter().any(|(_, v)| v.contains(SERVER_KEY))
            || request.body.to_string().contains(SERVER_KEY)
    }) || server
        .ollama_show_requests()
        .iter()
        .any(|body| body.to_string().contains(SERVER_KEY))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switching_the_model_over_the_network_does_not_take_the_key_along() {
    let configured = ScriptedServer::start(Script::new([
        Reply::text("hi from the real one"),
        Reply::text("hi again"),
    ]))
    .await
    .unwrap();
    let ollama = ScriptedServer::start(Script::new([Reply::text("hi from the stand-in")]))
        .await
        .unwrap();
    let server = start(&configured, &ollama, &[]);
    // The configured endpoint gets the key.
    let (status, body) = post(&server, "/openai/chat/completions", CHAT).await;
    assert_eq!(status, 200, "{body}");
    let first = configured.requests();
    assert_eq!(first.len(), 1);
    assert_eq!(
        first[0].authorization.as_deref(),
        Some(format!("Bearer {SERVER_KEY}").as_str())
    );
    // The attack: point the model at "Ollama" (code in the sandbox could listen there).
    let (status, body) = post(&server, "/settings", r#"{"llm": {"model": "ollama/x"}}"#).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = post(&server, "/openai/chat/completions", CHAT).await;
    assert_eq!(status, 200, "{body}");
    let reached = ollama.requests();
    assert_eq!(reached.len(), 1, "the request went to the stand-in: {body}");
    assert_eq!(reached[0].authorization, None, "no key reached it");
    assert!(!saw_key(&ollama), "the key never reached the stand-in");
    // Setting the base URL or the key over the network stays refused.
    let (status, body) = post(
        &server,
        "/settings",
        &format!(
            r#"{{"llm": {{"api_base": "http://{}/v1"}}}}"#,
            ollama.addr()
        ),
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("--allow-network-credentials"), "{body}");
    // Back on the configured model, the key goes again.
    let (status, _) = post(&server, "/settings", r#"{"llm": {"model": "gpt-4o"}}"#).await;
    assert_eq!(status, 200);
    let _ = post(&server, "/openai/chat/completions", CHAT).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let again = configured.requests();
    assert_eq!(again.len(), 2);
    assert_eq!(
        again[1].authorization.as_deref(),
        Some(format!("Bearer {SERVER_KEY}").as_str())
    );
    assert!(!saw_key(&ollama));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_allow_network_credentials_the_key_follows_the_model() {
    let configured = ScriptedServer::start(Script::new([])).await.unwrap();
    let ollama = ScriptedServer::start(Script::new([Reply::text("hi")]))
        .await
        .unwrap();
    let server = start(&configured, &ollama, &["--allow-network-credentials"]);
    let (status, body) = post(&server, "/settings", r#"{"llm": {"model": "ollama/x"}}"#).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = post(&server, "/openai/chat/completions", CHAT).await;
    assert_eq!(status, 200, "{body}");
    let reached = ollama.requests();
    assert_eq!(reached.len(), 1);
    assert_eq!(
        reached[0].authorization.as_deref(),
        Some(format!("Bearer {SERVER_KEY}").as_str()),
        "the operator allowed it"
    );
}

/// Stop-32 review: a server started with `--api_base` (and no key of its own there) sent the
/// keys of provider variables in its environment to that base when a client switched the model
/// to their provider (`groq/x` → `GROQ_API_KEY`, `anthropic/…` → `ANTHROPIC_API_KEY` as
/// `x-api-key`). A provider's variable now goes only to that provider's own address; OpenAI's
/// still goes to the configured base, as it did from the start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_keys_from_the_environment_never_follow_a_switched_model() {
    const SECRETS: [(&str, &str); 4] = [
        ("GROQ_API_KEY", "gsk-GROQSECRET-123456"),
        ("MISTRAL_API_KEY", "mis-MISTRALSECRET-1234"),
        ("ANTHROPIC_API_KEY", "sk-ant-ANTSECRET-123456"),
        ("DEEPSEEK_API_KEY", "sk-DEEPSECRET-123456"),
    ];
    let configured = ScriptedServer::start(Script::new([
        Reply::text("openai"),
        Reply::text("groq"),
        Reply::text("mistral"),
        Reply::text("anthropic"),
        Reply::text("deepseek"),
    ]))
    .await
    .unwrap();
    let base = configured.base_url();
    let mut launch = Launch::new(&base)
        .without_model_flags()
        .args(&["--api_base", &base, "--model", "openai/m"])
        .env("OPENAI_API_KEY", "sk-openai-for-the-base")
        .env("INTERPRETER_API_KEY", CLIENT_KEY);
    for (name, value) in SECRETS {
        launch = launch.env(name, value);
    }
    let server = launch.start();
    let (status, body) = post(&server, "/openai/chat/completions", CHAT).await;
    assert_eq!(status, 200, "{body}");
    for model in [
        "groq/x",
        "mistral/x",
        "anthropic/claude-3-5-sonnet",
        "deepseek/x",
    ] {
        let (status, body) = post(
            &server,
            "/settings",
            &format!(r#"{{"llm": {{"model": "{model}"}}}}"#),
        )
        .await;
        assert_eq!(status, 200, "{model}: {body}");
        let _ = post(&server, "/openai/chat/completions", CHAT).await;
    }
    let requests = configured.requests();
    assert_eq!(requests.len(), 5, "every turn reached the configured base");
    assert_eq!(
        requests[0].authorization.as_deref(),
        Some("Bearer sk-openai-for-the-base"),
        "control: OpenAI's variable goes to the configured base"
    );
    for request in &requests {
        let seen = format!("{:?} {}", request.headers, request.body);
        for (name, value) in SECRETS {
            assert!(!seen.contains(value), "{name} reached the base: {seen}");
        }
    }
}
