//! DNS rebinding and cross-site pages against the real `oi-server` binary (no key, `-y`): a
//! page whose name now resolves to 127.0.0.1 sends `Host: evil.example:PORT` and
//! `Origin: http://evil.example:PORT`; if that were accepted it could send code and run it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::path::Path;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, ServerProcess, get, post, raw};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// A server whose model, asked anything, writes `marker` with shell code (run at once: `-y`).
async fn server_that_runs(marker: &Path, extra: &[&str]) -> (ScriptedServer, ServerProcess) {
    let code = format!("touch {}", marker.display());
    let model = ScriptedServer::start(Script::new([
        Reply::tool_call("shell", &code),
        Reply::text("done"),
        Reply::tool_call("shell", &code),
        Reply::text("done"),
    ]))
    .await
    .unwrap();
    let server = Launch::new(&model.base_url()).args(extra).start();
    (model, server)
}

/// Opens a WebSocket to the server with these `Host`/`Origin` headers and, if it is accepted,
/// sends one message; the error when the upgrade is refused.
async fn websocket_attack(
    server: &ServerProcess,
    host: &str,
    origin: Option<&str>,
) -> Result<(), String> {
    let mut request = format!("ws://{}/", server.addr())
        .into_client_request()
        .unwrap();
    request.headers_mut().insert("host", host.parse().unwrap());
    if let Some(origin) = origin {
        request
            .headers_mut()
            .insert("origin", origin.parse().unwrap());
    }
    let (mut ws, _) = tokio_tungstenite::connect_async(request)
        .await
        .map_err(|e| e.to_string())?;
    for frame in [
        r#"{"role":"user","type":"message","start":true}"#,
        r#"{"role":"user","type":"message","content":"run it"}"#,
        r#"{"role":"user","type":"message","end":true}"#,
    ] {
        ws.send(Message::text(frame)).await.unwrap();
    }
    while let Ok(Some(Ok(frame))) = tokio::time::timeout(Duration::from_secs(15), ws.next()).await {
        if frame.to_text().is_ok_and(|t| t.contains("\"complete\"")) {
            break;
        }
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dns_rebinding_websocket_upgrade_is_refused_before_the_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("pwned");
    let (_model, server) = server_that_runs(&marker, &[]).await;
    let evil = format!("evil.example:{}", server.port);
    let refused = websocket_attack(&server, &evil, Some(&format!("http://{evil}"))).await;
    let err = refused.expect_err("the rebinding upgrade must be refused");
    assert!(err.contains("403"), "{err}");
    // The same upgrade over raw TCP shows the body that says what to do.
    let upgrade = get(
        "/",
        &[
            &format!("Host: {evil}"),
            &format!("Origin: http://{evil}"),
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Version: 13",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        ],
    );
    let answer = raw(&server.addr(), &upgrade).await;
    assert_eq!(answer.status, 403, "{}", answer.text);
    assert!(answer.body().contains("--allowed-host"), "{}", answer.text);
    // Without Origin (a script that lies about Host) it is refused too.
    assert!(websocket_attack(&server, &evil, None).await.is_err());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!marker.exists(), "no code ran");
    // The same client with the real name runs code: the refusal above is not a broken path.
    websocket_attack(&server, &server.addr(), None)
        .await
        .expect("a loopback Host is accepted");
    assert!(process::eventually(Duration::from_secs(10), || marker.exists()).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dns_rebinding_openai_post_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("pwned");
    let (model, server) = server_that_runs(&marker, &[]).await;
    let evil = format!("evil.example:{}", server.port);
    let body = r#"{"model": "oi", "messages": [{"role": "user", "content": "run it"}]}"#;
    for origin in [Some(format!("Origin: http://{evil}")), None] {
        let mut headers = vec![format!("Host: {evil}")];
        headers.extend(origin);
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        let answer = raw(
            &server.addr(),
            &post("/openai/chat/completions", &headers, body),
        )
        .await;
        assert_eq!(answer.status, 403, "{}", answer.text);
        assert!(answer.body().contains("DNS rebinding"), "{}", answer.text);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!marker.exists(), "no code ran");
    assert!(model.requests().is_empty(), "the model was never asked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_and_https_origins_are_refused_and_clients_without_origin_work() {
    let dir = tempfile::tempdir().unwrap();
    let (_model, server) = server_that_runs(&dir.path().join("m"), &[]).await;
    let port = server.port;
    let host = format!("Host: 127.0.0.1:{port}");
    let refused = [
        format!("Origin: http://evil.example:{port}"),
        format!("Origin: https://127.0.0.1:{port}"),
        format!("Origin: http://127.0.0.1:{}", port.wrapping_add(1)),
        "Origin: null".to_owned(),
    ];
    for origin in &refused {
        let answer = raw(&server.addr(), &get("/settings", &[&host, origin])).await;
        assert_eq!(answer.status, 403, "{origin}: {}", answer.text);
        assert!(answer.body().contains("cross-origin"), "{}", answer.text);
    }
    let heartbeat_evil = raw(
        &server.addr(),
        &get("/heartbeat", &[&format!("Host: evil.example:{port}")]),
    )
    .await;
    assert_eq!(heartbeat_evil.status, 403, "/heartbeat is checked too");
    let accepted = [
        vec![host.clone()],
        vec![host.clone(), format!("Origin: http://127.0.0.1:{port}")],
        vec![
            format!("Host: localhost:{port}"),
            format!("Origin: http://localhost:{port}"),
        ],
        vec![format!("Host: [::1]:{port}")],
    ];
    for headers in &accepted {
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        let answer = raw(&server.addr(), &get("/heartbeat", &headers)).await;
        assert_eq!(answer.status, 200, "{headers:?}: {}", answer.text);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_host_flag_and_env_admit_listed_names_only() {
    let model = ScriptedServer::start(Script::new([])).await.unwrap();
    let server = Launch::new(&model.base_url())
        .args(&["--allowed-host", "oi.test"])
        .env("INTERPRETER_ALLOWED_HOSTS", "other.test, third.test")
        .start();
    let port = server.port;
    for name in ["oi.test", "other.test", "third.test"] {
        let headers = [
            format!("Host: {name}:{port}"),
            format!("Origin: http://{name}:{port}"),
        ];
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        let answer = raw(&server.addr(), &get("/heartbeat", &headers)).await;
        assert_eq!(answer.status, 200, "{name}: {}", answer.text);
    }
    let answer = raw(
        &server.addr(),
        &get("/heartbeat", &[&format!("Host: evil.example:{port}")]),
    )
    .await;
    assert_eq!(answer.status, 403);
}
