//! Approval rules through the real `oi` binary and the scripted model: an allow rule approves
//! only the command it names, the hard-deny list sees through disguises (the attack is aimed at
//! a temporary HOME holding a canary, so a failed defence harms nothing but that directory),
//! and deny rules see through quoting.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod oi_common;

use std::path::Path;
use std::process::Output;

use oi_common::Oi;

use oi_testkit::{Reply, Script, ScriptedServer};

struct Run {
    stdout: String,
    stderr: String,
    /// The conversation oi saved, as JSON text.
    conversation: String,
}

/// Runs `oi ARGS "do it"` with HOME at `home`, in `workdir`, against a model that writes
/// `replies`, with `stdin` as the user's answers.
fn oi(home: &Path, workdir: &Path, args: &[&str], replies: Vec<Reply>, stdin: &str) -> Run {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(ScriptedServer::start(Script::new(replies)))
        .unwrap();
    let base = server.base_url();
    let mut all = vec!["--api_base", base.as_str()];
    all.extend_from_slice(args);
    all.push("do it");
    let Output { stdout, stderr, .. } = Oi {
        args: all,
        workdir: Some(workdir),
        stdin,
        ..Oi::default()
    }
    .run(home);
    let saved = home.join(".config/open-interpreter/conversations");
    let conversation = std::fs::read_dir(&saved)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    Run {
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        conversation,
    }
}

const QUESTION: &str = "Would you like to run this code?";

#[test]
fn allow_ls_asks_before_a_chained_command_and_runs_plain_ls_without_asking() {
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    std::fs::write(workdir.path().join("marker-file.txt"), "x").unwrap();

    // The attack: `ls` first, then something else on the same line.
    let chained = oi(
        home.path(),
        workdir.path(),
        &["--allow", "ls"],
        vec![
            Reply::tool_call("shell", "ls >/dev/null; echo SMUGGLED-$((6*7))"),
            Reply::text("done"),
        ],
        "n\n",
    );
    assert!(
        chained.stdout.contains(QUESTION),
        "oi should ask: {}\n{}",
        chained.stdout,
        chained.stderr
    );
    assert!(
        !chained.stdout.contains("SMUGGLED-42") && !chained.conversation.contains("SMUGGLED-42"),
        "the chained command must not run: {}",
        chained.stdout
    );

    let plain = oi(
        home.path(),
        workdir.path(),
        &["--allow", "ls"],
        vec![Reply::tool_call("shell", "ls -la"), Reply::text("done")],
        "",
    );
    assert!(
        !plain.stdout.contains(QUESTION),
        "plain ls is allowed: {}",
        plain.stdout
    );
    assert!(
        plain.stdout.contains("marker-file.txt"),
        "ls ran: {}\n{}",
        plain.stdout,
        plain.stderr
    );
}

/// Disguised deletes of the home directory (the temporary HOME of this test).
const DISGUISED_DELETES: &[(&str, &str)] = &[
    ("shell", "$(echo rm) -rf ~"),
    ("shell", "X=r; Y=m; \"$X$Y\" -r'f' \"$HOME\"//"),
    ("shell", "echo ~ | xargs r''m -rf"),
    ("bash", "bash -c 'rm -rf \"$0\"' \"$HOME\""),
    ("shell", "eval \"$(printf '%s -rf %s' rm \"$HOME\")\""),
    (
        "python",
        "import shutil, os\nshutil.rmtree(os.path.expanduser('~'))",
    ),
    (
        "python",
        "import subprocess, os\nsubprocess.run(['rm', '-rf', os.environ['HOME']])",
    ),
];

#[test]
fn yes_mode_blocks_disguised_deletes_of_home_and_the_canary_survives() {
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let canary = home.path().join("canary.txt");
    std::fs::write(&canary, "still here").unwrap();

    let mut replies: Vec<Reply> = DISGUISED_DELETES
        .iter()
        .map(|(language, code)| Reply::tool_call(language, code))
        .collect();
    replies.push(Reply::text("done"));
    let run = oi(home.path(), workdir.path(), &["-y"], replies, "");

    assert_eq!(
        std::fs::read_to_string(&canary).ok().as_deref(),
        Some("still here"),
        "the canary must survive: {}\n{}",
        run.stdout,
        run.stderr
    );
    let blocked = run
        .stdout
        .matches("oi blocked this code: it recursively deletes your home directory")
        .count();
    assert_eq!(
        blocked,
        DISGUISED_DELETES.len(),
        "every disguise is blocked: {}",
        run.stdout
    );
}

#[test]
fn the_same_disguise_deletes_home_when_hard_deny_is_off() {
    // Proves the attack above is real: with the seat belt off, the first disguise deletes
    // the temporary HOME.
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let target = home.path().join("victim-home");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("canary.txt"), "x").unwrap();
    let run = oi(
        &target,
        workdir.path(),
        &["-y", "--no_hard_deny"],
        vec![
            Reply::tool_call("shell", DISGUISED_DELETES[0].1),
            Reply::text("done"),
        ],
        "",
    );
    assert!(
        !target.join("canary.txt").exists(),
        "with --no_hard_deny the code runs: {}\n{}",
        run.stdout,
        run.stderr
    );
}

#[test]
fn deny_rules_see_through_quoting() {
    let home = tempfile::tempdir().unwrap();
    let workdir = tempfile::tempdir().unwrap();
    let run = oi(
        home.path(),
        workdir.path(),
        &["-y", "--deny", "curl"],
        vec![
            Reply::tool_call("shell", "c''url --version; echo RAN-$((6*7))"),
            Reply::text("done"),
        ],
        "",
    );
    assert!(
        run.stdout
            .contains("oi blocked this code: it matches the deny rule `curl`"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert!(!run.stdout.contains("RAN-42"), "{}", run.stdout);
}
