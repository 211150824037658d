//! Issue 21.2 through the real `oi` binary, as root, under `--sandbox workspace` and
//! `readonly`: sandboxed code plants links (symbolic, hard) and FIFOs at every name oi or its
//! hosts will touch next — the shell's and Java's run files and directories in each session's
//! private directory, the CLI's output directory — and leaves a process behind that keeps
//! planting them while more blocks run (shell blocks, one long enough to be joined into a file,
//! Java). It also forges the driver event that once made oi read and delete a named file. The
//! canary outside the sandbox (standing for `~/.bashrc`) stays as it was, and nothing appears
//! beside it.
//!
//! Skips (saying why) where the kernel cannot sandbox, and fails instead under
//! `OI_TEST_REQUIRE_ALL=1`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use oi_testkit::{Reply, Script, ScriptedServer};

const CANARY_TEXT: &str = "export PS1='canary'\n";

/// Whether the kernel enforces the sandbox here; else says why (a failure under
/// `OI_TEST_REQUIRE_ALL=1`).
fn sandbox_works(test: &str) -> bool {
    let support = oi_computer::probe();
    if support.filesystem() && support.seccomp {
        return true;
    }
    assert!(
        std::env::var("OI_TEST_REQUIRE_ALL").as_deref() != Ok("1"),
        "OI_TEST_REQUIRE_ALL=1 but {test} cannot run: the kernel cannot sandbox ({support})"
    );
    oi_testkit::skipped!("skipped {test}: the kernel cannot enforce the sandbox ({support})");
    false
}

fn have(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

/// The block that plants links and FIFOs at every name oi may touch (now and, from a process
/// left behind, for 20 s), and forges a `file` event naming the canary.
fn attack(canary: &Path) -> String {
    let canary = canary.display();
    let canary_dir = Path::new(&canary.to_string())
        .parent()
        .unwrap()
        .display()
        .to_string();
    format!(
        r#"plant() {{
  for d in "$__OI_DIR" "$(dirname -- "$__OI_FILE")" "${{TMPDIR:-/tmp}}"/oi-*; do
    [ -d "$d" ] || continue
    for i in $(seq 1 60); do
      case $((i % 3)) in
        0) ln -sfn '{canary}' "$d/run-$i.sh" ;;
        1) ln -f '{canary}' "$d/run-$i.sh" 2>/dev/null || ln -sfn '{canary}' "$d/run-$i.sh" ;;
        2) rm -f "$d/run-$i.sh"; mkfifo "$d/run-$i.sh" ;;
      esac
      ln -sfn '{canary_dir}' "$d/run-$i"
      ln -sfn '{canary}' "$d/run-$i.applescript"
      ln -sfn '{canary}' "$d/page.html"
    done
  done
  ln -sfn '{canary_dir}' "${{TMPDIR:-/tmp}}"/oi-outputs
}} 2>/dev/null
plant
( end=$((SECONDS + 20)); while [ $SECONDS -lt $end ]; do plant; sleep 0.02; done ) >/dev/null 2>&1 &
nonce=$(trap -p DEBUG | grep -o 'OI[0-9a-f]\{{32\}}' | head -n 1 | cut -c3-)
printf '\036OI%s{{"ev":"file","kind":"image","format":"base64.png","path":"{canary}"}}\n' "$nonce"
echo planted"#
    )
}

/// A shell block longer than one pipe (the shell joins it into a file itself).
fn long_block() -> String {
    let mut code = String::from("n=0\n");
    let padding = "x".repeat(1_000);
    for _ in 0..150 {
        code.push_str(&format!("n=$((n+1)) # {padding}\n"));
    }
    code.push_str("echo long-ran-$n\n");
    code
}

/// Runs `command` with its output in files (a pipe nobody reads would stop it), killing it
/// after `within` (a FIFO once made oi block forever); its stdout.
fn run_for(mut command: Command, within: Duration) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let read = |path: &Path| String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > within {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "oi did not finish within {within:?}:\n{}\n{}",
                read(&out),
                read(&err)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    read(&out)
}

/// One `oi -y --plain --sandbox <mode>` turn of the attack; the canary checked after it.
fn attack_in(mode: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // oi's temporary directories (the shell's private one, the CLI's outputs) go here, so the
    // planting reaches every one of this oi's and none of other tests' (hundreds of stale
    // `/tmp/oi-*` once made one round of planting outlast the test's time limit).
    let temp = tempfile::tempdir().unwrap();
    // Outside the temp directory, which `workspace` mode lets code write.
    let outside = tempfile::Builder::new()
        .prefix("oi-canary-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let canary = outside.path().join("bashrc");
    std::fs::write(&canary, CANARY_TEXT).unwrap();

    let mut replies = vec![
        Reply::tool_call("shell", &attack(&canary)),
        Reply::tool_call("shell", "echo second-$((1 + 1))"),
        Reply::tool_call("shell", &long_block()),
        Reply::tool_call("shell", "sleep 0.3; echo third-$((1 + 2))"),
    ];
    let java = have("javac") && have("java");
    if java {
        replies.push(Reply::tool_call(
            "java",
            "public class Main { public static void main(String[] a) { System.out.println(\"java-\" + (2 + 2)); } }",
        ));
        replies.push(Reply::tool_call(
            "java",
            "public class Main { public static void main(String[] a) { System.out.println(\"java-\" + (3 + 2)); } }",
        ));
    }
    replies.push(Reply::tool_call("shell", "echo last-$((2 + 2))"));
    replies.push(Reply::text("Done."));
    let server = runtime
        .block_on(ScriptedServer::start(Script::new(replies)))
        .unwrap();

    let mut command = Command::new(env!("CARGO_BIN_EXE_oi"));
    command
        .args([
            "--api_base",
            &server.base_url(),
            "--api_key",
            "sk-test-0123456789",
        ])
        .args(["-y", "--plain", "--sandbox", mode, "go"])
        .current_dir(work.path())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("TMPDIR", temp.path())
        .env_remove("OPENAI_API_KEY")
        .env_remove("INTERPRETER_API_KEY")
        .env("TERM", "dumb");
    let stdout = run_for(command, Duration::from_secs(120));

    assert!(stdout.contains("planted"), "{mode}: {stdout}");
    assert_eq!(
        std::fs::read_to_string(&canary).ok().as_deref(),
        Some(CANARY_TEXT),
        "{mode}: the canary was changed or removed\n{stdout}"
    );
    let beside: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        beside.len(),
        1,
        "{mode}: files appeared beside the canary: {beside:?}"
    );
    // The blocks that carry no file of their own ran despite the planting.
    for ran in ["second-2", "third-3", "last-4"] {
        assert!(stdout.contains(ran), "{mode}: {ran} missing\n{stdout}");
    }
    eprintln!(
        "{mode}: long block {}, java {}",
        if stdout.contains("long-ran-150") {
            "ran"
        } else {
            "refused by the sandbox"
        },
        if !java {
            "not installed"
        } else if stdout.contains("java-4") {
            "ran"
        } else {
            "refused by the sandbox"
        }
    );
}

#[test]
fn links_planted_where_oi_works_never_lead_oi_outside_the_sandbox_workspace() {
    if sandbox_works("own files (workspace)") {
        attack_in("workspace");
    }
}

#[test]
fn links_planted_where_oi_works_never_lead_oi_outside_the_sandbox_readonly() {
    if sandbox_works("own files (readonly)") {
        attack_in("readonly");
    }
}
