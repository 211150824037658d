//! Issue 21, third round, through the real `oi` binary against the scripted model: code that
//! swaps the workspace for a link to `/` does not get the next session to write outside it
//! (the workspace is resolved once, when oi starts, and every session opens it without
//! following links), a workspace given through a link the user made still works; and
//! sandboxed code cannot read oi's own files (the profile holding the model's key, saved
//! conversations), while oi itself still reads its profile and saves conversations.
//!
//! Skips (saying why) where the kernel cannot sandbox, and fails instead under
//! `OI_TEST_REQUIRE_ALL=1`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod reach;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use oi_testkit::{Reply, Script, ScriptedServer};
use reach::{can_run, printed, py, unique};

/// `oi -y --plain <args> go` in `dir` with HOME `home`, answering with `replies`; what it
/// printed (stdout and stderr together) and the scripted model's server.
fn oi(
    home: &Path,
    dir: &Path,
    replies: Vec<Reply>,
    args: &[&str],
    api_key: Option<&str>,
) -> (Output, ScriptedServer, tokio::runtime::Runtime) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(ScriptedServer::start(Script::new(replies)))
        .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_oi"));
    command.args(["--api_base", &server.base_url()]);
    if let Some(key) = api_key {
        command.args(["--api_key", key]);
    }
    let out = command
        .args(["-y", "--plain", "--no_hard_deny"])
        .args(args)
        .arg("go")
        .current_dir(dir)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("INTERPRETER_API_KEY")
        .env("TERM", "dumb")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (out, server, runtime)
}

fn all(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A directory outside every writable root of a workspace sandbox (not under the temp
/// directory, which `workspace` mode may write).
fn outside() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// Puts `ws` back as it was (the link removed, the directory renamed back), so nothing is
/// left that leads to `/`.
fn restore(ws: &Path) {
    if ws.is_symlink() {
        std::fs::remove_file(ws).unwrap();
    }
    let old = PathBuf::from(format!("{}.old", ws.display()));
    if old.is_dir() {
        std::fs::rename(&old, ws).unwrap();
    }
}

/// The attack of issue 21 round 3 (a): the first block swaps the workspace for a link to `/`,
/// the next one (a new shell session) writes outside. Since issue 34 the workspace is a mount
/// point of the session's write wall, so the swap itself fails (`EBUSY`), and nothing is
/// written outside. (The parent's check of a swapped directory is tested below, by a swap one
/// level up.)
#[test]
fn a_workspace_swapped_for_a_link_to_root_starts_no_session() {
    let test = "a_workspace_swapped_for_a_link_to_root_starts_no_session";
    if !can_run(test, &["python3", "bash"]) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let parent = tempfile::tempdir().unwrap();
    let ws = parent.path().join("atk-ws");
    std::fs::create_dir(&ws).unwrap();
    let target = outside();
    let escaped = target.path().join(unique("escaped"));
    let swap = "import os\nws = os.getcwd()\nos.chdir('/tmp')\nos.rename(ws, ws + '.old')\nos.symlink('/', ws)\nprint('SWAPPED', os.path.islink(ws))";
    let write = format!("echo escaped > {} && echo WROTE-OUTSIDE", escaped.display());
    let (out, _server, _rt) = oi(
        home.path(),
        &ws,
        vec![
            Reply::tool_call("python", swap),
            Reply::tool_call("shell", &write),
            Reply::text("Done."),
        ],
        &["--sandbox", "workspace"],
        Some("sk-test-0123456789"),
    );
    let text = all(&out);
    restore(&ws);
    assert!(!printed(&out).contains("SWAPPED"), "{text}");
    assert!(
        printed(&out).contains("[Errno 16] Device or resource busy"),
        "{text}"
    );
    assert!(!escaped.exists(), "the next session wrote outside: {text}");
    assert!(!printed(&out).contains("WROTE-OUTSIDE"), "{text}");
}

/// The same with a directory on the workspace's path swapped rather than the workspace
/// itself: the workspace is `<dir>/ws`, and the code moves `<dir>` away and links `/` there.
#[test]
fn a_directory_above_the_workspace_swapped_for_a_link_starts_no_session() {
    let test = "a_directory_above_the_workspace_swapped_for_a_link_starts_no_session";
    if !can_run(test, &["python3", "bash"]) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let parent = tempfile::tempdir().unwrap();
    let above = parent.path().join("above");
    let ws = above.join("tmp");
    std::fs::create_dir_all(&ws).unwrap();
    let target = outside();
    // `/tmp` exists, so after the swap `<above>/tmp` leads to the real `/tmp`... and `/` is
    // what the next session would be granted through `<above>`.
    let swap = "import os\nabove = os.path.dirname(os.getcwd())\nos.chdir('/tmp')\nos.rename(above, above + '.old')\nos.symlink('/', above)\nprint('SWAPPED', os.path.islink(above))";
    let escaped = target.path().join(unique("escaped"));
    let write = format!("echo escaped > {} && echo WROTE-OUTSIDE", escaped.display());
    let (out, _server, _rt) = oi(
        home.path(),
        &ws,
        vec![
            Reply::tool_call("python", swap),
            Reply::tool_call("shell", &write),
            Reply::text("Done."),
        ],
        &["--sandbox", "workspace"],
        Some("sk-test-0123456789"),
    );
    let text = all(&out);
    restore(&above);
    assert!(printed(&out).contains("SWAPPED True"), "{text}");
    assert!(!escaped.exists(), "the next session wrote outside: {text}");
    assert!(
        text.contains("was replaced by a link since oi was started there; nothing was run"),
        "{text}"
    );
}

/// A workspace the user names through a link (made before oi starts) is resolved once, at
/// start: sessions start in the real directory and may write there.
#[test]
fn a_workspace_given_through_a_link_still_works() {
    let test = "a_workspace_given_through_a_link_still_works";
    if !can_run(test, &["python3", "bash"]) {
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let parent = tempfile::tempdir().unwrap();
    let real = parent.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = parent.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let code = "import os\nopen('note.txt', 'w').write('hi')\nprint('CWD', os.getcwd())";
    let (out, _server, _rt) = oi(
        home.path(),
        parent.path(),
        vec![
            Reply::tool_call("python", code),
            Reply::tool_call("shell", "echo shell > shell.txt && echo SHELL-WROTE"),
            Reply::text("Done."),
        ],
        &[
            "--sandbox",
            "workspace",
            "--workspace",
            link.to_str().unwrap(),
        ],
        Some("sk-test-0123456789"),
    );
    let text = all(&out);
    let real = real.canonicalize().unwrap();
    assert!(
        printed(&out).contains(&format!("CWD {}", real.display())),
        "{text}"
    );
    assert!(printed(&out).contains("SHELL-WROTE"), "{text}");
    assert_eq!(
        std::fs::read_to_string(real.join("note.txt")).unwrap(),
        "hi"
    );
    assert!(real.join("shell.txt").exists(), "{text}");
}

/// The model's key in the profile of the tests below.
const PROFILE_KEY: &str = "sk-profile-key-9876543210abcdef";

/// Issue 21 round 3, break 2: under every sandbox mode, code can read neither the profile
/// holding the model's key nor a saved conversation; oi itself still read the profile (the
/// model got the key) and saved the conversation.
#[test]
fn sandboxed_code_cannot_read_oi_profiles_or_conversations() {
    let test = "sandboxed_code_cannot_read_oi_profiles_or_conversations";
    if !can_run(test, &["python3", "bash"]) {
        return;
    }
    for (mode, in_home) in [
        ("readonly", false),
        ("workspace", false),
        ("workspace", true),
    ] {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let config = home.path().join(".config/open-interpreter");
        std::fs::create_dir_all(config.join("profiles")).unwrap();
        std::fs::create_dir_all(config.join("conversations")).unwrap();
        let profile = config.join("profiles/default.yaml");
        std::fs::write(&profile, format!("llm:\n  api_key: \"{PROFILE_KEY}\"\n")).unwrap();
        let secret = unique("said-before");
        let conversation = config.join("conversations/earlier.json");
        std::fs::write(&conversation, format!("[\"{secret}\"]")).unwrap();
        let code = format!(
            r#"
import os
for path in [{profile}, {conversation}]:
    try:
        print("READ", open(path).read())
    except OSError as e:
        print("refused", e.errno)
try:
    print("LISTED", os.listdir({config}))
except OSError as e:
    print("refused list", e.errno)
try:
    open(os.path.join({config}, "profiles", "evil.yaml"), "w").write("sandbox: off\n")
    print("WROTE PROFILE")
except OSError as e:
    print("refused write", e.errno)
print("CODE RAN")
"#,
            profile = py(&profile.display().to_string()),
            conversation = py(&conversation.display().to_string()),
            config = py(&config.display().to_string()),
        );
        let shell = format!("cat {} 2>&1; echo SHELL-DONE", profile.display());
        let dir = if in_home { home.path() } else { work.path() };
        let (out, server, _rt) = oi(
            home.path(),
            dir,
            vec![
                Reply::tool_call("python", &code),
                Reply::tool_call("shell", &shell),
                Reply::text("Done."),
            ],
            &["--sandbox", mode],
            None,
        );
        let text = all(&out);
        let what = format!("{mode}, workspace in HOME: {in_home}");
        let shown = printed(&out);
        assert!(shown.contains("CODE RAN"), "{what}: {text}");
        assert!(shown.contains("SHELL-DONE"), "{what}: {text}");
        assert!(
            !shown.contains(PROFILE_KEY),
            "{what}: the key was read: {text}"
        );
        assert!(
            !shown.contains(&secret),
            "{what}: a conversation was read: {text}"
        );
        assert!(
            !shown.contains("READ") && !shown.contains("WROTE PROFILE"),
            "{what}: {text}"
        );
        assert!(!shown.contains("earlier.json"), "{what}: {text}");
        assert!(!config.join("profiles/evil.yaml").exists(), "{what}");
        // oi itself read the profile (the model was called with its key) ...
        let requests = server.requests();
        assert!(
            requests
                .iter()
                .any(|r| r.authorization.as_deref() == Some(&format!("Bearer {PROFILE_KEY}"))),
            "{what}: oi did not use its profile's key: {text}"
        );
        // ... and saved this conversation beside the earlier one.
        let saved = std::fs::read_dir(config.join("conversations"))
            .unwrap()
            .count();
        assert_eq!(saved, 2, "{what}: {text}");
        assert!(
            std::fs::read_to_string(&profile)
                .unwrap()
                .contains(PROFILE_KEY)
        );
    }
}
