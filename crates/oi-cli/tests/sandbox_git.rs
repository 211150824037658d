//! Workspace code against the user's next `git` command, through the real `oi` binary (as
//! root on CI): `.git/config` and `.git/hooks` stay read-only unless the user opts in
//! (issue 21, item 9).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

mod reach;

use reach::{can_run, setup};

// ---------------------------------------------------------------------------------------------
// .git/config and .git/hooks

/// Python that tries every way to make git run code outside the sandbox, then writes and
/// commits a file the ordinary way.
const GIT_CODE: &str = r##"
import os, subprocess
print("CODE RAN")
def attempt(what, action):
    try:
        action()
        print("DONE", what)
    except OSError as e:
        print("refused", what, e.errno)
def append_config():
    with open(".git/config", "a") as f:
        f.write("[core]\n\tfsmonitor = touch pwned-by-config\n")
def add_hook():
    with open(".git/hooks/pre-commit", "w") as f:
        f.write("#!/bin/sh\ntouch pwned-by-hook\n")
def move_hooks():
    os.rename(".git/hooks", ".git/hooks-away")
    os.mkdir(".git/hooks")
def replace_config():
    with open(".git/config.new", "w") as f:
        f.write("[core]\n\tfsmonitor = touch pwned-by-rename\n")
    os.rename(".git/config.new", ".git/config")
def move_git():
    os.rename(".git", ".git-away")
    os.mkdir(".git")
attempt("append config", append_config)
attempt("add hook", add_hook)
attempt("move hooks", move_hooks)
attempt("replace config", replace_config)
r = subprocess.run(["git", "config", "core.fsmonitor", "touch pwned-by-git-config"], capture_output=True, text=True)
print("git config exit", r.returncode)
with open("notes.txt", "w") as f:
    f.write("ordinary work\n")
subprocess.run(["git", "add", "notes.txt"])
r = subprocess.run(["git", "-c", "user.name=oi", "-c", "user.email=oi@example.com", "commit", "-q", "--no-verify", "-m", "notes"], capture_output=True, text=True)
print("commit exit", r.returncode, r.stderr.strip()[:120])
attempt("move .git", move_git)
"##;

fn git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .output()
        .unwrap()
}

#[test]
fn workspace_code_cannot_plant_git_config_or_hooks_unless_the_user_opts_in() {
    if !can_run(".git", &["python3", "git"]) {
        return;
    }
    let s = setup();
    let ws = s.work.path();
    assert!(git(ws, &["init", "-q"]).status.success());
    let config_before = std::fs::read_to_string(ws.join(".git/config")).unwrap();

    let text = s.run_python(GIT_CODE, &["--sandbox", "workspace"], &[]);
    for what in [
        "append config",
        "add hook",
        "move hooks",
        "replace config",
        "move .git",
    ] {
        assert!(!text.contains(&format!("DONE {what}")), "{what}: {text}");
        assert!(text.contains(&format!("refused {what}")), "{what}: {text}");
    }
    assert!(!text.contains("git config exit 0"), "{text}");
    assert!(
        text.contains("commit exit 0"),
        "ordinary git work failed: {text}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        config_before
    );
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    assert!(!ws.join(".git/hooks-away").exists() && !ws.join(".git-away").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "ordinary work\n"
    );
    let status = git(ws, &["status", "--short"]);
    assert!(status.status.success());
    assert!(!ws.join("pwned-by-config").exists() && !ws.join("pwned-by-git-config").exists());

    // With the opt-in, the same code may write them (and the user was told at start).
    let opted = setup();
    let ws = opted.work.path();
    assert!(git(ws, &["init", "-q"]).status.success());
    let (text, stderr) = opted.run_python_with_stderr(
        GIT_CODE,
        &["--sandbox", "workspace", "--sandbox_git_writable"],
        &[],
    );
    assert!(stderr.contains("sandbox_git_writable"), "{stderr}");
    for what in [
        "append config",
        "add hook",
        "move hooks",
        "replace config",
        "move .git",
    ] {
        assert!(text.contains(&format!("DONE {what}")), "{what}: {text}");
    }
    assert!(text.contains("git config exit 0"), "{text}");
}
