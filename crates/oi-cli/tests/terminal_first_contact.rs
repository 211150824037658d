//! The terminal on first contact (issue 15): no key yet, an unreachable server, and the
//! picker of saved conversations, on a real pseudo-terminal against the scripted model.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod pty;
mod terminal;

use pty::Term;
use std::time::Duration;
use terminal::*;

// ---------------------------------------------------------------------------------------------
// First contact: no key and no configured model
// ---------------------------------------------------------------------------------------------

#[test]
fn without_a_key_oi_says_the_ways_on_and_keeps_a_pasted_key_only_if_asked() {
    let s = setup();
    let profile = s
        .home
        .path()
        .join(".config/open-interpreter/profiles/default.yaml");
    let Some(mut term) = Term::spawn(s.command(&[]), 80, ROWS) else {
        return;
    };
    let screen = term.wait_for("OpenAI API key (not shown as you type", WAIT);
    for way in [
        "OPENAI_API_KEY",
        "oi --local",
        "oi --api_base http://127.0.0.1:8080/v1",
    ] {
        assert!(screen.contains(way), "{way} missing:\n{screen}");
    }
    assert!(!screen.contains("**") && !screen.contains('`'), "{screen}");
    assert!(!screen.contains("\n>"), "the prompt came first:\n{screen}");
    term.line("sk-test-secret-123");
    term.wait_for("so oi finds it next time", WAIT);
    assert!(
        !term.screen().contains("sk-test-secret-123"),
        "the key was echoed"
    );
    term.line("y");
    term.wait_prompt(WAIT);
    let text = std::fs::read_to_string(&profile).unwrap();
    assert!(text.contains("api_key: \"sk-test-secret-123\""), "{text}");
    let mode = std::os::unix::fs::PermissionsExt::mode(&profile.metadata().unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600);
    term.send("\x04");
    assert_eq!(term.exit(WAIT), Some(0));
    // Next time the key is found: no question.
    let Some(mut term) = Term::spawn(s.command(&[]), 80, ROWS) else {
        return;
    };
    let screen = term.wait_prompt(WAIT);
    assert!(!screen.contains("No OpenAI API key"), "{screen}");
    term.send("\x04");
    assert_eq!(term.exit(WAIT), Some(0));
}

#[test]
fn an_unreachable_api_base_is_one_sentence_and_a_missing_scheme_is_named() {
    let s = setup();
    let out = s
        .command(&["--api_base", "127.0.0.1:9/v1", "--api_key", "k", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("add http:// (or https://), e.g. --api_base http://127.0.0.1:9/v1"),
        "{stderr}"
    );
    let out = s
        .command(&[
            "--api_base",
            "http://127.0.0.1:9/v1",
            "--api_key",
            "k",
            "-y",
            "hi",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        "oi: error: could not reach the model server at http://127.0.0.1:9/v1: the connection was refused (nothing listens there); start the model server, or point --api_base at one that runs."
    );
}

#[test]
fn conversations_are_listed_newest_first_and_picked_with_the_arrow_keys() {
    let s = setup();
    let dir = s.home.path().join(".config/open-interpreter/conversations");
    std::fs::create_dir_all(&dir).unwrap();
    let older = dir.join("Older_talk__July_28_2025_10-00-00.json");
    let newer = dir.join("Newer_talk__July_29_2025_10-00-00.json");
    let talk = |text: &str| {
        serde_json::json!([
            {"role": "user", "type": "message", "content": "hello"},
            {"role": "assistant", "type": "message", "content": text}
        ])
        .to_string()
    };
    std::fs::write(&older, talk("From the older talk.")).unwrap();
    // A file name can carry escapes (a title-setting OSC): it is shown without them.
    let hostile = dir.join("Evil\x1b]0;PWNED-TITLE\x07talk__July_27_2025_10-00-00.json");
    std::fs::write(&hostile, talk("hostile")).unwrap();
    std::fs::write(&newer, talk("From the newer talk.")).unwrap();
    let past = std::time::SystemTime::now() - Duration::from_secs(3600);
    for (file, age) in [(&older, 1), (&hostile, 2)] {
        std::fs::File::options()
            .write(true)
            .open(file)
            .unwrap()
            .set_modified(past - Duration::from_secs(age))
            .unwrap();
    }
    let server = s.server(vec![]);
    let Some(mut term) = Term::spawn(
        s.command(&[
            "--api_base",
            &server.base_url(),
            "--api_key",
            "k",
            "--conversations",
        ]),
        80,
        ROWS,
    ) else {
        return;
    };
    let screen = term.wait_for("Enter to open", WAIT);
    let newer_at = screen.find("Newer talk...").unwrap();
    let older_at = screen.find("Older talk...").unwrap();
    assert!(newer_at < older_at, "not newest first:\n{screen}");
    assert!(
        screen.contains("Eviltalk...") && !screen.contains("PWNED"),
        "{screen}"
    );
    let raw = term.raw();
    assert!(
        !raw.windows(4).any(|w| w == b"\x1b]0;"),
        "an escape from a file name reached the terminal"
    );
    assert!(
        term.rows()
            .iter()
            .any(|r| r.contains("❯") && r.contains("Newer talk"))
    );
    term.send("\x1b[B");
    term.wait_for("❯   2. Older talk", WAIT);
    term.send("\r");
    let screen = term.wait_for("From the older talk.", WAIT);
    assert!(!screen.contains("From the newer talk."), "{screen}");
    term.wait_prompt(WAIT);
    term.send("\x04");
    assert_eq!(term.exit(WAIT), Some(0));
}
