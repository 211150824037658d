//! oi-server takes its settings from the same layers as oi (defaults ← profile ← environment ←
//! flags), through the real binary: a profile's settings reach the model, flags win over the
//! profile, and -v logs the loop's decisions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod process;

use common::{say, until_complete};
use oi_testkit::{Reply, Script, ScriptedServer};
use process::Launch;
use tokio_tungstenite::connect_async;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_and_flags_set_the_servers_settings() {
    let model = ScriptedServer::start(Script::new([Reply::text("Hi.")]))
        .await
        .unwrap();
    let work = tempfile::tempdir().unwrap();
    let profile = work.path().join("team.yaml");
    std::fs::write(
        &profile,
        "custom_instructions: PROFILE-MARK\nllm:\n  temperature: 0.7\n  max_tokens: 55\nspeak_messages: true\n",
    )
    .unwrap();
    let server = Launch::new(&model.base_url())
        .args(&[
            "--profile",
            profile.to_str().unwrap(),
            "--max-tokens",
            "77",
            "-v",
        ])
        .cwd(work.path())
        .start();
    let (mut ws, _) = connect_async(format!("ws://{}/", server.addr()))
        .await
        .unwrap();
    say(&mut ws, "message", "hello").await;
    until_complete(&mut ws, false).await;
    let body = &model.requests()[0].body;
    let system = body["messages"][0]["content"].as_str().unwrap_or("");
    assert!(system.contains("PROFILE-MARK"), "{system}");
    assert_eq!(body["temperature"], 0.7, "the profile's value holds");
    assert_eq!(body["max_tokens"], 77, "the flag wins over the profile");
    let stderr = server.stderr();
    assert!(
        stderr.contains("line 5: unknown setting `speak_messages`; skipped"),
        "{stderr}"
    );
    assert!(
        stderr.contains("asking the model"),
        "-v logs the loop: {stderr}"
    );
}
