//! The sandbox (Landlock + seccomp) with real processes; skipped where the kernel lacks it.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{have, run, text};
use oi_computer::{LocalComputer, SandboxMode, SandboxPolicy, SandboxSupport, probe};

/// A directory outside the temp dir (which `workspace` mode may write), e.g. a stand-in for
/// `$HOME`.
fn dir_outside_tmp(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("tempdir")
}

/// Whether Landlock works here; when not, prints why `test` is skipped.
fn landlock(test: &str) -> bool {
    let support = probe();
    if !support.filesystem() {
        oi_testkit::skipped!("skipped {test}: the kernel has no Landlock ({support})");
    }
    support.filesystem()
}

fn py_str(path: &Path) -> String {
    format!("{:?}", path.to_string_lossy())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_mode_writes_only_in_the_workspace() {
    if !landlock("workspace_mode_writes_only_in_the_workspace") || !have("python3", "workspace") {
        return;
    }
    let ws = dir_outside_tmp("oi-ws-");
    let home = dir_outside_tmp("oi-home-");
    let c = LocalComputer::new()
        .with_sandbox(SandboxPolicy::new(SandboxMode::Workspace).with_workspace(ws.path()));
    let code = format!(
        r#"
import os, subprocess, tempfile
ws, home = {ws}, {home}
open(os.path.join(ws, "ok.txt"), "w").write("hi")
print("cwd", os.getcwd() == os.path.realpath(ws))
with tempfile.NamedTemporaryFile() as f:
    print("tmp ok")
try:
    open(os.path.join(home, "bad.txt"), "w").write("x")
    print("HOME WRITTEN")
except OSError as e:
    print("home denied", e.errno)
r = subprocess.run(["bash", "-c", "touch " + home + "/bad2.txt"], capture_output=True, text=True)
print("touch rc", r.returncode)
print("marker", os.environ.get("OI_SANDBOX"), os.environ.get("OI_SANDBOX_NETWORK"))
"#,
        ws = py_str(ws.path()),
        home = py_str(home.path()),
    );
    let out = text(&run(&c, "python", &code).await);
    assert!(out.contains("cwd True"), "{out}");
    assert!(out.contains("tmp ok"), "{out}");
    // EROFS: the mount namespace's write wall answers before Landlock would (EACCES).
    assert!(out.contains("home denied 30"), "{out}");
    assert!(out.contains("touch rc 1"), "{out}");
    assert!(out.contains("marker workspace 1"), "{out}");
    assert!(ws.path().join("ok.txt").exists());
    assert!(!home.path().join("bad.txt").exists());
    assert!(!home.path().join("bad2.txt").exists());

    // The shell session is confined too, and so is what it starts.
    let home_s = home.path().to_string_lossy().into_owned();
    let out = text(
        &run(
            &c,
            "shell",
            &format!("touch ok2.txt && echo made; touch {home_s}/bad3.txt || echo denied; echo $OI_SANDBOX; cat <<EOF\nheredoc\nEOF"),
        )
        .await,
    );
    assert!(out.contains("made") && out.contains("denied"), "{out}");
    assert!(
        out.contains("workspace") && out.contains("heredoc"),
        "{out}"
    );
    assert!(ws.path().join("ok2.txt").exists());
    assert!(!home.path().join("bad3.txt").exists());

    if have("node", "workspace_mode (node)") {
        let out = text(
            &run(
                &c,
                "javascript",
                &format!(
                    "const fs = require('fs'); fs.writeFileSync('ok3.txt', 'x'); try {{ fs.writeFileSync({home_s:?} + '/bad4.txt', 'x'); console.log('WRITTEN') }} catch (e) {{ console.log(e.code) }}"
                ),
            )
            .await,
        );
        assert!(out.contains("EROFS"), "{out}");
        assert!(ws.path().join("ok3.txt").exists());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readonly_mode_blocks_writes_in_the_workspace_too() {
    if !landlock("readonly_mode_blocks_writes_in_the_workspace_too") || !have("python3", "readonly")
    {
        return;
    }
    let ws = dir_outside_tmp("oi-ro-");
    let c = LocalComputer::new()
        .with_sandbox(SandboxPolicy::new(SandboxMode::ReadOnly).with_workspace(ws.path()));
    let code = r#"
import os
for path in ["ok.txt", "/tmp/oi-ro-probe.txt"]:
    try:
        open(path, "w").write("x")
        print("WRITTEN", path)
    except OSError as e:
        print("denied", e.errno)
open(os.devnull, "w").write("fine")
print("devnull ok", os.environ.get("OI_SANDBOX"))
"#;
    let out = text(&run(&c, "python", code).await);
    assert_eq!(out.matches("denied 30").count(), 2, "{out}");
    assert!(out.contains("devnull ok readonly"), "{out}");
    assert!(!ws.path().join("ok.txt").exists());

    let out = text(
        &run(
            &c,
            "shell",
            "echo hi > /dev/null; touch x.txt 2>/dev/null || echo denied; cat <<EOF\nheredoc\nEOF",
        )
        .await,
    );
    assert!(out.contains("denied") && out.contains("heredoc"), "{out}");
    assert!(!ws.path().join("x.txt").exists());

    if have("node", "readonly (node)") {
        let out = text(&run(&c, "javascript", "console.log(6 * 7)").await);
        assert_eq!(out, "42\n");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_is_denied_when_asked() {
    let support = probe();
    if !support.network() {
        oi_testkit::skipped!("skipped network_is_denied_when_asked: no seccomp ({support})");
        return;
    }
    if !have("python3", "network_is_denied_when_asked") {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let code = format!(
        r#"
import socket, os
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
    print("connected")
except OSError as e:
    print("refused", e.errno)
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    print("udp ok")
except OSError as e:
    print("udp refused", e.errno)
a, b = socket.socketpair()
print("unix ok", os.environ.get("OI_SANDBOX_NETWORK"))
"#
    );
    let denied =
        LocalComputer::new().with_sandbox(SandboxPolicy::new(SandboxMode::Off).with_network(false));
    let out = text(&run(&denied, "python", &code).await);
    assert!(out.contains("refused 13"), "{out}");
    assert!(out.contains("udp refused 13"), "{out}");
    assert!(out.contains("unix ok 0"), "{out}");

    // With network allowed, the same code connects (so the denial above is the sandbox's).
    let allowed = LocalComputer::new().with_sandbox(SandboxPolicy::new(SandboxMode::Off));
    let out = text(&run(&allowed, "python", &code).await);
    assert!(out.contains("connected") && out.contains("udp ok"), "{out}");

    // Combined with the file-system sandbox (Landlock's TCP rules are added there too).
    if support.filesystem() {
        let ws = dir_outside_tmp("oi-net-");
        let both = LocalComputer::new().with_sandbox(
            SandboxPolicy::new(SandboxMode::Workspace)
                .with_network(false)
                .with_workspace(ws.path()),
        );
        let out = text(&run(&both, "python", &code).await);
        assert!(
            out.contains("refused 13") && out.contains("unix ok 0"),
            "{out}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unenforceable_sandbox_is_refused_or_announced_once() {
    if !have("python3", "unenforceable_sandbox") {
        return;
    }
    let none = SandboxSupport::default();
    let policy = SandboxPolicy::new(SandboxMode::Workspace);
    let refused = LocalComputer::new().with_sandbox_support(policy.clone(), none);
    let outputs = run(&refused, "python", "print('ran')").await;
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    let out = text(&outputs);
    assert!(
        out.starts_with("[oi: refusing to run code") && !out.contains("ran\n"),
        "{out}"
    );
    assert!(out.contains("Landlock"), "{out}");

    let fallback =
        LocalComputer::new().with_sandbox_support(policy.with_unsandboxed_fallback(true), none);
    let out = text(&run(&fallback, "python", "print('ran')").await);
    assert!(out.contains("WARNING") && out.ends_with("ran\n"), "{out}");
    let out = text(&run(&fallback, "shell", "echo again; echo ${OI_SANDBOX:-none}").await);
    assert_eq!(out, "again\nnone\n", "the warning is given once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_installed_language_starts_in_both_modes_without_network() {
    if !landlock("every_installed_language_starts_in_both_modes_without_network") {
        return;
    }
    let ws = dir_outside_tmp("oi-all-");
    let cases = [
        ("python3", "python", "print(6*7)", "42\n"),
        ("bash", "shell", "echo 42", "42\n"),
        ("node", "javascript", "console.log(6*7)", "42\n"),
        ("ruby", "ruby", "puts 6*7", "42\n"),
        ("R", "r", "cat(6*7, '\\n')", "42 \n"),
        (
            "javac",
            "java",
            "public class A { public static void main(String[] a) { System.out.println(42); } }",
            "42\n",
        ),
    ];
    for mode in [SandboxMode::ReadOnly, SandboxMode::Workspace] {
        let c = LocalComputer::new().with_sandbox(
            SandboxPolicy::new(mode)
                .with_network(false)
                .with_workspace(ws.path()),
        );
        for (program, language, code, want) in cases {
            if !have(program, "every_installed_language_starts (one language)") {
                continue;
            }
            let out = text(&run(&c, language, code).await);
            assert_eq!(out, want, "{language} in {mode} mode");
        }
    }
}
