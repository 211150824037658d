//! The original's interpreter variables through the real `oi-server`:
//! `INTERPRETER_REQUIRE_AUTHENTICATION=False` is explained and weakens nothing (a request
//! without the key is still refused), `INTERPRETER_TERMINAL_INPUT_PATIENCE` is explained.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, get, raw};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_authentication_false_does_not_open_the_door() {
    let model = ScriptedServer::start(Script::new([Reply::text("unused")]))
        .await
        .unwrap();
    let server = Launch::new(&model.base_url())
        .env("INTERPRETER_API_KEY", "the-key")
        .env("INTERPRETER_REQUIRE_AUTHENTICATION", "False")
        .env("INTERPRETER_TERMINAL_INPUT_PATIENCE", "15")
        .start();
    let without = raw(&server.addr(), &get("/settings", &[])).await;
    assert_eq!(without.status, 403, "{}", without.text);
    let with = raw(&server.addr(), &get("/settings", &["X-API-KEY: the-key"])).await;
    assert_eq!(with.status, 200, "{}", with.text);
    let stderr = server.stderr();
    assert!(
        stderr.contains("INTERPRETER_REQUIRE_AUTHENTICATION=False: it turns nothing off"),
        "{stderr}"
    );
    assert!(
        stderr.contains("INTERPRETER_TERMINAL_INPUT_PATIENCE=15"),
        "{stderr}"
    );
}
