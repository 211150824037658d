//! Issue 21.7 through the real `oi-server` binary: a session whose sandbox or limits were
//! tightened over `POST /settings` runs its next block under them. The computer takes the
//! policy from the session's settings at every run; a session started under the old one is
//! restarted, and the model is told that its state was lost.
//!
//! Also issue 21 round 3 (b): a workspace narrowed over the network and then swapped by the
//! code for a link to `/` starts no session.
//!
//! Skips (saying why) where the kernel cannot sandbox, and fails instead under
//! `OI_TEST_REQUIRE_ALL=1`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod process;

use common::{Ws, say, until_complete};
use oi_testkit::{Reply, Script, ScriptedServer};
use process::{Launch, post, raw};
use serde_json::Value;

/// Whether the test can run here; else says why (a failure under `OI_TEST_REQUIRE_ALL=1`).
fn can_run(test: &str) -> bool {
    let support = oi_computer::probe();
    let python = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("python3").is_file()));
    let why = if !support.filesystem() {
        format!("the kernel cannot sandbox files here ({support})")
    } else if !python {
        "python3 is not installed".to_owned()
    } else {
        return true;
    };
    assert!(
        std::env::var("OI_TEST_REQUIRE_ALL").as_deref() != Ok("1"),
        "OI_TEST_REQUIRE_ALL=1 but {test} cannot run: {why}"
    );
    oi_testkit::skipped!("skipped {test}: {why}");
    false
}

async fn connect(port: u16) -> Ws {
    let url = format!("ws://127.0.0.1:{port}/");
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

/// What the code of one turn printed (console output and oi's notes).
async fn turn(ws: &mut Ws, message: &str) -> String {
    say(ws, "message", message).await;
    until_complete(ws, false)
        .await
        .iter()
        .filter(|f| f.get("format").and_then(Value::as_str) == Some("output"))
        .filter_map(|f| f.get("content").and_then(Value::as_str))
        .collect()
}

/// `POST /settings` with `patch`; the status.
async fn patch(addr: &str, patch: &str) -> u16 {
    let host = format!("Host: {addr}");
    let answer = raw(
        addr,
        &post(
            "/settings",
            &[&host, "Content-Type: application/json"],
            patch,
        ),
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    answer.status
}

/// A server started without a sandbox, tightened to `readonly` over the network: the next
/// block can no longer write the working directory, and its shell was restarted (state lost,
/// the model told so).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_tightened_over_the_network_holds_for_the_next_block() {
    if !can_run("a_sandbox_tightened_over_the_network_holds_for_the_next_block") {
        return;
    }
    let model = ScriptedServer::start(Script::new([
        Reply::tool_call("shell", "export KEPT=yes; echo one > before.txt && echo wrote-before"),
        Reply::text("Wrote it."),
        Reply::tool_call(
            "shell",
            "echo \"kept=${KEPT:-lost} sandbox=${OI_SANDBOX:-none}\"; echo two > after.txt && echo wrote-after",
        ),
        Reply::text("Tried."),
    ]))
    .await
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = Launch::new(&model.base_url()).cwd(work.path()).start();
    let mut ws = connect(server.port).await;

    let out = turn(&mut ws, "write before.txt").await;
    assert!(out.contains("wrote-before"), "{out}");
    assert!(work.path().join("before.txt").exists());

    patch(&server.addr(), r#"{"sandbox": "readonly"}"#).await;
    let out = turn(&mut ws, "write after.txt").await;
    assert!(!work.path().join("after.txt").exists(), "written: {out}");
    assert!(!out.contains("wrote-after"), "{out}");
    assert!(out.contains("sandbox=readonly"), "{out}");
    assert!(out.contains("kept=lost"), "{out}");
    assert!(
        out.contains("the Shell session was restarted") && out.contains("state"),
        "the model is told its state was lost: {out}"
    );
}

/// Limits tightened over the network hold for the next block: what allocated 256 MiB before
/// cannot once memory is capped at 64 MiB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limits_tightened_over_the_network_hold_for_the_next_block() {
    if !can_run("limits_tightened_over_the_network_hold_for_the_next_block") {
        return;
    }
    let code = "python3 -c 'b = bytearray(256 << 20); print(\"allocated\", len(b) >> 20)' 2>&1 | tail -n 1";
    let model = ScriptedServer::start(Script::new([
        Reply::tool_call("shell", code),
        Reply::text("Allocated."),
        Reply::tool_call("shell", code),
        Reply::text("Tried."),
    ]))
    .await
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = Launch::new(&model.base_url())
        .args(&["--sandbox", "workspace"])
        .cwd(work.path())
        .start();
    let mut ws = connect(server.port).await;

    let out = turn(&mut ws, "allocate").await;
    assert!(out.contains("allocated 256"), "{out}");

    patch(
        &server.addr(),
        r#"{"limits": {"max_memory_bytes": 67108864}}"#,
    )
    .await;
    let out = turn(&mut ws, "allocate again").await;
    assert!(!out.contains("allocated 256"), "{out}");
    assert!(out.contains("MemoryError"), "{out}");
}

/// Issue 21 round 3 (b): code makes `sub`, the workspace is narrowed to it over the network
/// (stricter, so accepted, and stored canonical), then `sub` is renamed away and `/` linked
/// there. The next block's session is refused, saying why, and writes nothing outside. (Since
/// issue 34 sandboxed code cannot do the swap itself — the workspace is a mount point of its
/// write wall, `EBUSY` — so the swap is made from outside, as another process of the user
/// could; `sandbox_swaps.rs` checks the `EBUSY`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_narrowed_workspace_swapped_for_a_link_starts_no_session() {
    if !can_run("a_narrowed_workspace_swapped_for_a_link_starts_no_session") {
        return;
    }
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let escaped = outside.path().join("escaped");
    let model = ScriptedServer::start(Script::new([
        Reply::tool_call("python", "import os\nos.mkdir('sub')\nprint('MADE')"),
        Reply::text("Made."),
        Reply::tool_call(
            "shell",
            &format!("echo escaped > {} && echo WROTE-OUTSIDE", escaped.display()),
        ),
        Reply::text("Done."),
    ]))
    .await
    .unwrap();
    let parent = tempfile::tempdir().unwrap();
    let work = parent.path().join("ws");
    std::fs::create_dir(&work).unwrap();
    let server = Launch::new(&model.base_url())
        .args(&["--sandbox", "workspace"])
        .cwd(&work)
        .start();
    let mut ws = connect(server.port).await;

    let out = turn(&mut ws, "make sub").await;
    assert!(out.contains("MADE"), "{out}");
    let sub = work.canonicalize().unwrap().join("sub");
    let narrowed = serde_json::json!({"sandbox": {"workspace": sub}}).to_string();
    patch(&server.addr(), &narrowed).await;
    std::fs::rename(&sub, sub.with_extension("old")).unwrap();
    std::os::unix::fs::symlink("/", &sub).unwrap();
    let out_next = turn(&mut ws, "write outside").await;
    // Put things back before asserting: nothing may be left that leads to `/`.
    if sub.is_symlink() {
        std::fs::remove_file(&sub).unwrap();
    }
    assert!(
        !escaped.exists(),
        "the next session wrote outside: {out_next}"
    );
    assert!(!out_next.contains("WROTE-OUTSIDE"), "{out_next}");
    assert!(
        out_next.contains(&format!(
            "the workspace {} was replaced by a link since oi was started there; nothing was run",
            sub.display()
        )),
        "the model is told why: {out_next}"
    );
}
