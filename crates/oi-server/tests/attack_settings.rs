//! `POST /settings` against the real `oi-server` binary: a workspace that climbs out of the
//! server's (`<ws>/../../..`, a link) is not "stricter" (issue 21.7), and a patch is applied
//! key by key, each refused key named (issue 25).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use oi_testkit::{Script, ScriptedServer};
use process::{Launch, ServerProcess, raw};
use serde_json::Value;

async fn call(server: &ServerProcess, method: &str, path: &str, body: &str) -> (u16, Value) {
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        server.addr(),
        body.len()
    );
    let answer = raw(&server.addr(), &request).await;
    let value = serde_json::from_str(answer.body()).unwrap_or(Value::Null);
    (answer.status, value)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_outside_the_servers_is_refused_however_it_is_spelled() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("a").join("b").join("work");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    std::os::unix::fs::symlink("/", work.join("root")).unwrap();
    let model = ScriptedServer::start(Script::new([])).await.unwrap();
    let server = Launch::new(&model.base_url())
        .args(&["--sandbox", "workspace", "--sandbox-fallback"])
        .cwd(&work)
        .start();
    let (_, before) = call(&server, "GET", "/settings", "").await;
    let ws = work.display();
    for escape in [
        format!("{ws}/../../.."),
        format!("{ws}/sub/../../.."),
        format!("{ws}/root"),
        format!("{ws}/root/etc"),
        format!("{ws}/./../work/../.."),
    ] {
        let patch = serde_json::json!({"sandbox": {"workspace": escape}}).to_string();
        let (status, body) = call(&server, "POST", "/settings", &patch).await;
        assert_eq!(status, 403, "{escape}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains("sandbox"),
            "{body}"
        );
    }
    let (_, after) = call(&server, "GET", "/settings", "").await;
    assert_eq!(before, after, "nothing changed");
    // A directory that is really beneath it is stricter, and kept in its real form.
    let patch = serde_json::json!({"sandbox": {"workspace": format!("{ws}/sub/.")}}).to_string();
    let (status, body) = call(&server, "POST", "/settings", &patch).await;
    assert_eq!(status, 200, "{body}");
    let (_, now) = call(&server, "GET", "/settings", "").await;
    assert_eq!(
        now["computer"]["sandbox"]["workspace"],
        work.join("sub")
            .canonicalize()
            .unwrap()
            .display()
            .to_string()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_is_applied_key_by_key_and_each_refusal_is_named() {
    let model = ScriptedServer::start(Script::new([])).await.unwrap();
    let server = Launch::new(&model.base_url()).asking().start();
    let patch = r#"{"auto_run": true, "custom_instructions": "be brief",
        "messages": [{"role": "user", "type": "message", "content": "hi"}]}"#;
    let (status, body) = call(&server, "POST", "/settings", patch).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["status"], "partial", "{body}");
    assert!(
        body["refused"]["auto_run"]
            .as_str()
            .unwrap()
            .contains("--allow-network-auto-run"),
        "{body}"
    );
    let (_, settings) = call(&server, "GET", "/settings", "").await;
    assert_eq!(settings["auto_run"], false);
    assert_eq!(settings["custom_instructions"], "be brief");
    let (_, messages) = call(&server, "GET", "/settings/messages", "").await;
    assert_eq!(
        messages["messages"][0]["content"], "hi",
        "the messages were kept"
    );
    // Only refused keys: the refusal's own status.
    let (status, _) = call(&server, "POST", "/settings", r#"{"auto_run": true}"#).await;
    assert_eq!(status, 403);
    // A path the router does not have.
    let (status, body) = call(&server, "GET", "/nope", "").await;
    assert_eq!(
        (status, body),
        (404, serde_json::json!({"detail": "Not Found"}))
    );
}
