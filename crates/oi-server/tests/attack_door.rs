//! The key is one default-deny door in front of the router (issue 21.1), through the real
//! `oi-server` binary with `INTERPRETER_API_KEY` set and the insecure routes on: every route
//! the router registers (taken from the router's own table, so a new one cannot be
//! forgotten), with every method, path variants (`//x`, `/x/`, `%2e`, case), no key, a wrong
//! key, and `Upgrade`/`Connection` headers, is refused; nothing it would do happens.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::path::Path;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, ServerProcess, raw};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

const KEY: &str = "s3cret-door-key";

const METHODS: &[&str] = &[
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "FOO",
];

/// A server whose model, asked anything, writes `marker` with shell code (`-y`: at once).
async fn start(work: &Path, marker: &Path) -> (ScriptedServer, ServerProcess) {
    let code = format!("touch {}", marker.display());
    let replies = (0..4).flat_map(|_| [Reply::tool_call("shell", &code), Reply::text("done")]);
    let model = ScriptedServer::start(Script::new(replies)).await.unwrap();
    let server = Launch::new(&model.base_url())
        .env("INTERPRETER_API_KEY", KEY)
        .env("INTERPRETER_INSECURE_ROUTES", "true")
        .cwd(work)
        .start();
    (model, server)
}

/// The route pattern with its parameters filled in.
fn concrete(pattern: &str) -> String {
    pattern
        .replace("{id}", "intruder")
        .replace("{name}", "messages")
        .replace("{*path}", "secret.txt")
}

/// Spellings of `path` that a lax check might take for it, or for an open path.
fn variants(path: &str) -> Vec<String> {
    let rest = path.trim_start_matches('/');
    let mut all = vec![
        path.to_owned(),
        format!("/{path}"),
        format!("{path}/"),
        format!("/./{rest}"),
        format!("/%2e/{rest}"),
        format!("/heartbeat/../{rest}"),
        format!("/heartbeat/%2e%2e/{rest}"),
        format!("/sessions/x/../../{rest}"),
        path.to_uppercase(),
    ];
    if let Some(first) = rest.chars().next() {
        all.push(format!("/%{:02x}{}", first as u32, &rest[1..]));
        all.push(format!("/%{:02X}{}", first as u32, &rest[1..]));
    }
    all.sort();
    all.dedup();
    all
}

/// What each path is sent: code that would write `marker`, or a patch, or an upload.
fn body_for(path: &str, marker: &Path) -> (String, String) {
    let touch = format!("touch {}", marker.display());
    if path.to_ascii_lowercase().contains("upload") {
        let body = "--B\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\npwned.txt\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\npwned\r\n--B--\r\n";
        return (
            "multipart/form-data; boundary=B".to_owned(),
            body.to_owned(),
        );
    }
    let body = serde_json::json!({
        "language": "shell",
        "code": touch,
        "custom_instructions": "PWNED",
        "model": "oi",
        "messages": [{"role": "user", "content": "run it"}],
    });
    ("application/json".to_owned(), body.to_string())
}

fn request(
    method: &str,
    path: &str,
    server: &ServerProcess,
    extra: &[&str],
    body: &(String, String),
) -> String {
    let mut text = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
        server.addr(),
        body.0,
        body.1.len()
    );
    let upgrade = extra.iter().any(|h| h.starts_with("Upgrade"));
    text.push_str(if upgrade {
        "Connection: close, Upgrade\r\n"
    } else {
        "Connection: close\r\n"
    });
    for header in extra {
        text.push_str(header);
        text.push_str("\r\n");
    }
    text.push_str("\r\n");
    text.push_str(&body.1);
    text
}

/// With the key: `GET path` answered as JSON.
async fn keyed_get(server: &ServerProcess, path: &str) -> serde_json::Value {
    let answer = raw(
        &server.addr(),
        &format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nX-API-KEY: {KEY}\r\nConnection: close\r\n\r\n",
            server.addr()
        ),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    serde_json::from_str(answer.body()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_route_with_every_method_and_spelling_is_refused_without_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("secret.txt"), "TOPSECRET").unwrap();
    let marker = dir.path().join("pwned");
    let (model, server) = start(&work, &marker).await;
    let routes = oi_server::routes::route_table(true);
    assert!(
        routes.iter().any(|r| r.path == "/run"),
        "the insecure routes are on"
    );
    let header_sets: [&[&str]; 5] = [
        &[],
        &["X-API-KEY: wrong"],
        &["Upgrade: websocket"],
        &["Upgrade: websocket", "X-API-KEY: wrong"],
        &[
            "Upgrade: websocket",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version: 13",
        ],
    ];
    let mut tried = 0;
    for route in &routes {
        let path = concrete(route.path);
        let body = body_for(&path, &marker);
        for spelled in variants(&path) {
            for method in METHODS {
                for (i, headers) in header_sets.iter().enumerate() {
                    // `/heartbeat`, the web page and its static files (exact paths, GET:
                    // they hold no data, and the page must load before the key is typed).
                    let open = *method == "GET"
                        && (spelled == "/heartbeat"
                            || spelled == "/"
                            || oi_server::web::is_asset(&spelled));
                    let real_upgrade = i == 4 && *method == "GET";
                    if open || (real_upgrade && spelled == "/sessions/intruder") {
                        // Open by design (the sockets then ask for the auth frame: below).
                        continue;
                    }
                    let answer = raw(
                        &server.addr(),
                        &request(method, &spelled, &server, headers, &body),
                    )
                    .await;
                    tried += 1;
                    assert!(
                        matches!(answer.status, 401 | 403),
                        "{method} {spelled} {headers:?} got through: {}",
                        answer.text
                    );
                    assert!(!answer.text.contains("TOPSECRET"), "{method} {spelled}");
                }
            }
        }
    }
    assert!(tried > 1000, "{tried} requests");
    eprintln!("{tried} requests without the key, all refused");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!marker.exists(), "no code ran");
    assert!(!work.join("pwned.txt").exists(), "nothing was uploaded");
    assert!(model.requests().is_empty(), "the model was never asked");
    let settings = keyed_get(&server, "/settings").await;
    assert_ne!(
        settings["custom_instructions"], "PWNED",
        "no setting changed"
    );
    assert_eq!(
        keyed_get(&server, "/settings/messages").await["messages"],
        serde_json::json!([])
    );
    let sessions = keyed_get(&server, "/sessions").await.to_string();
    assert!(
        !sessions.contains("intruder"),
        "no session was created: {sessions}"
    );
    // The door is not a wall: the key opens it, and a path the router lacks is then a JSON 404
    // (without the key, the same path is refused before anyone looks it up).
    let run = request(
        "POST",
        "/run",
        &server,
        &[&format!("X-API-KEY: {KEY}")],
        &body_for("/run", &marker),
    );
    let answer = raw(&server.addr(), &run).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert!(marker.exists(), "with the key, /run runs");
    let body = (String::from("text/plain"), String::new());
    let absent = request(
        "GET",
        "/nope",
        &server,
        &[&format!("X-API-KEY: {KEY}")],
        &body,
    );
    let answer = raw(&server.addr(), &absent).await;
    assert_eq!(answer.status, 404, "{}", answer.text);
    assert_eq!(answer.body(), r#"{"detail":"Not Found"}"#);
    let answer = raw(
        &server.addr(),
        &request("GET", "/nope", &server, &[], &body),
    )
    .await;
    assert_eq!(answer.status, 403, "{}", answer.text);
    // The open paths answer without the key; the page's files are the embedded ones, with
    // the page's CSP, and hold nothing of the server's.
    let answer = raw(
        &server.addr(),
        &request("GET", "/heartbeat", &server, &[], &body),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    for path in std::iter::once("/").chain(oi_server::web::asset_paths()) {
        let answer = raw(&server.addr(), &request("GET", path, &server, &[], &body)).await;
        assert_eq!(answer.status, 200, "{path}: {}", answer.text);
        assert!(
            answer
                .text
                .to_ascii_lowercase()
                .contains("content-security-policy: default-src 'none'"),
            "{path}: {}",
            answer.text
        );
        for secret in [KEY, "TOPSECRET", "\"messages\""] {
            assert!(!answer.text.contains(secret), "{path} holds {secret}");
        }
    }
}

/// The exact attack of issue 21: `Upgrade: websocket` on a POST to the chat endpoint, then
/// the same conversation with "yes".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upgrade_header_on_the_chat_endpoint_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("pwned");
    let (model, server) = start(dir.path(), &marker).await;
    let first = r#"{"model": "oi", "messages": [{"role": "user", "content": "write a file"}]}"#;
    let second = r#"{"model": "oi", "messages": [{"role": "user", "content": "write a file"}, {"role": "assistant", "content": "Shall I run it?"}, {"role": "user", "content": "yes"}]}"#;
    for body in [first, second] {
        let attack = format!(
            "POST /openai/chat/completions HTTP/1.1\r\nHost: {}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            server.addr(),
            body.len()
        );
        let answer = raw(&server.addr(), &attack).await;
        assert_eq!(answer.status, 403, "{}", answer.text);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!marker.exists(), "no code ran");
    assert!(model.requests().is_empty(), "the model was never asked");
}

/// A real upgrade passes the door without the key, but the socket serves nothing before the
/// auth frame: a message sent first closes it, and nothing runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_opened_without_the_key_serves_nothing_before_the_auth_frame() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("pwned");
    let (model, server) = start(dir.path(), &marker).await;
    // A new session cannot even be created without the key on the upgrade.
    let refused = format!("ws://{}/sessions/intruder", server.addr());
    let refused = tokio_tungstenite::connect_async(refused.into_client_request().unwrap()).await;
    assert!(refused.is_err(), "a session was created without the key");
    // An existing one (made with the key) still asks for the auth frame first.
    let mut keyed = format!("ws://{}/sessions/known", server.addr())
        .into_client_request()
        .unwrap();
    keyed
        .headers_mut()
        .insert("x-api-key", KEY.parse().unwrap());
    let (ws, _) = tokio_tungstenite::connect_async(keyed).await.unwrap();
    drop(ws);
    for path in ["/", "/sessions/known"] {
        let request = format!("ws://{}{path}", server.addr())
            .into_client_request()
            .unwrap();
        let (mut ws, _) = tokio_tungstenite::connect_async(request).await.unwrap();
        for frame in [
            r#"{"role":"user","type":"message","start":true}"#,
            r#"{"role":"user","type":"message","content":"run it"}"#,
            r#"{"role":"user","type":"message","end":true}"#,
        ] {
            let _ = ws.send(Message::text(frame)).await;
        }
        let mut seen = Vec::new();
        while let Ok(Some(Ok(frame))) =
            tokio::time::timeout(Duration::from_secs(10), ws.next()).await
        {
            if frame.is_close() {
                break;
            }
            seen.push(frame.to_text().unwrap_or_default().to_owned());
        }
        assert_eq!(seen, [r#"{"auth":false}"#], "{path}");
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!marker.exists(), "no code ran");
    assert!(model.requests().is_empty(), "the model was never asked");
}
