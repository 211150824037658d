//! A hostile server on a raw socket against oi-llm's readers: answers that never end (an
//! Ollama model list, an HTTP error body, one SSE line without a newline) are read only up to
//! their caps, quickly, and end in a clear error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use futures::StreamExt;
use oi_core::{
    Kind, LanguageModel, LlmSettings, Message, ModelError, ModelRequest, Role, Settings,
};
use oi_llm::{Env, OpenAiCompatible, RetryPolicy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Starts a server that answers every request with `head` and then `piece` forever; returns
/// its `http://127.0.0.1:PORT`.
async fn endless(head: &'static str, piece: &'static [u8]) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 65536];
                let _ = socket.read(&mut request).await;
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                let batch = piece.repeat(1024);
                while socket.write_all(&batch).await.is_ok() {}
            });
        }
    });
    format!("http://{addr}")
}

const OK_JSON: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n";

fn request(base: &str) -> ModelRequest {
    let llm = LlmSettings {
        model: "gpt-4o".to_owned(),
        api_base: Some(format!("{base}/v1")),
        api_key: Some("k".to_owned()),
        ..LlmSettings::default()
    };
    ModelRequest {
        messages: vec![
            Message::new(Role::System, Kind::Message, "You are a test."),
            Message::user("hi"),
        ],
        languages: vec!["python".to_owned()],
        llm,
        templates: Settings::default().templates(),
        tools: Vec::new(),
    }
}

async fn first_error(base: &str) -> (ModelError, Duration) {
    let model = OpenAiCompatible::new()
        .with_env(Env::empty())
        .with_retry(RetryPolicy::none())
        .with_idle_timeout(Some(Duration::from_secs(10)));
    let started = Instant::now();
    let mut stream = model.stream(request(base));
    loop {
        match stream.next().await {
            Some(Err(error)) => return (error, started.elapsed()),
            Some(Ok(_)) => {}
            None => panic!("the stream ended without an error"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_ollama_model_list_is_read_up_to_its_cap() {
    let base = endless(OK_JSON, b"{\"models\": [").await;
    let client = reqwest::Client::new();
    let started = Instant::now();
    let error = oi_llm::ollama::list_models(&client, &base)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert!(error.contains("at most 1048576 bytes"), "{error}");
    let started = Instant::now();
    assert_eq!(
        oi_llm::ollama::context_length(&client, &base, "m").await,
        None
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_error_body_is_read_up_to_its_cap() {
    let head = "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n";
    let base = endless(head, b"bad \x1b]0;title\x07 request ").await;
    let (error, took) = first_error(&base).await;
    assert!(took < Duration::from_secs(3), "{took:?}");
    match error {
        ModelError::Status { status: 400, body } => {
            assert!(
                body.starts_with("bad \\u{1b}]0;title\\u{7} request"),
                "{body}"
            );
            // 500 characters are kept; escaping a control character makes it longer.
            assert!(body.chars().count() < 2000, "{}", body.len());
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_line_is_refused_at_the_line_limit() {
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: ";
    let base = endless(head, b"aaaaaaaaaaaaaaaa").await;
    let (error, took) = first_error(&base).await;
    assert!(took < Duration::from_secs(5), "{took:?}");
    let text = error.to_string();
    assert!(
        text.contains("longer than 4 MiB") && text.contains("OI_MAX_SSE_LINE_BYTES"),
        "{text}"
    );
}

/// Stop-32 review: an endpoint that answers with a redirect got the key and the conversation
/// re-sent to another host (reqwest strips only `Authorization` across hosts, not Anthropic's
/// `x-api-key`). oi-llm follows no redirect: the other host is never asked, on either wire,
/// and the answer is an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_is_never_followed_with_the_key_and_the_conversation() {
    let elsewhere = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let elsewhere_addr = elsewhere.local_addr().unwrap();
    let reached = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    {
        let reached = std::sync::Arc::clone(&reached);
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = elsewhere.accept().await {
                reached.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let _ = socket.write_all(OK_JSON.as_bytes()).await;
            }
        });
    }
    let head: &'static str = Box::leak(
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: http://localhost:{}/v1/next\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            elsewhere_addr.port()
        )
        .into_boxed_str(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 65536];
                let _ = socket.read(&mut request).await;
                let _ = socket.write_all(head.as_bytes()).await;
            });
        }
    });
    let (error, _) = first_error(&base).await;
    let anthropic = oi_llm::Anthropic::new()
        .with_env(Env::empty())
        .with_retry(RetryPolicy::none());
    let mut llm = request(&base).llm;
    llm.model = "anthropic/claude-3-5-sonnet".to_owned();
    let mut anthropic_request = request(&base);
    anthropic_request.llm = llm;
    let items: Vec<_> = anthropic.stream(anthropic_request).collect().await;
    assert!(
        items.iter().any(Result::is_err),
        "the Anthropic wire ended in an error: {items:?}"
    );
    assert_eq!(
        reached.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the redirect was followed ({error})"
    );
}
