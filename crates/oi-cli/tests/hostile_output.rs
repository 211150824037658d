//! Hostile terminal output against the real `oi` binary: the model's text and the output of
//! the code it runs carry OSC 0 (window title), OSC 52 (clipboard), CSI sequences (clear the
//! screen, move the cursor, conceal text), 8-bit C1 controls and BEL, and the code shown for
//! approval hides `touch pwned` behind a `\r`. Through a real pseudo-terminal (colour
//! rendering) and through pipes (plain rendering), none of the hostile bytes reach the
//! output, and the code's `\r` and escapes are shown.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod hostile;

use std::time::Duration;

use hostile::{pty_available, run_measured, setup};
use oi_testkit::{Reply, Script};

/// Model text with every kind of hostile sequence.
const HOSTILE_TEXT: &str = "Let me look.\x1b]0;PWNED-TITLE\x07\x1b]52;c;cm0gLXJmIH4K\x07\x1b[2J\x1b[5;5H\x1b[8mconcealed\x1b[0m\u{9b}3A\u{9d}0;C1-TITLE\u{9c}\x08\x08 Looking.\n";

/// Shell code whose output carries the same sequences (written with printf escapes, so the
/// code itself is plain text).
const HOSTILE_CODE: &str = "printf 'out: \\033]0;PWNED-OUT\\007\\033]52;c;cm0gLXJmIH4K\\007\\033[2J\\033[5;5Hmoved \\302\\2333A\\033[8mdone\\n'";

/// The last reply, with more of them.
const HOSTILE_END: &str = "All done.\x1b]0;PWNED-END\x07\x1b[3A\x07 Bye.";

/// The bytes of a rexpect transcript (rexpect turns each byte into one `char`).
fn bytes_of(transcript: &str) -> Vec<u8> {
    transcript.chars().map(|c| c as u32 as u8).collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Checks that none of the hostile sequences (nor what they carried) is in `bytes`, and that
/// every escape left is a CSI (oi's own colours and line clears).
fn assert_clean(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for needle in [
        &b"\x1b]"[..],
        b"\x07",
        b"\x08",
        b"\x1b[2J",
        b"\x1b[5;5H",
        b"\x1b[8m",
        b"\x1b[3A",
        b"\x1bP",
        b"\x1b_",
    ] {
        assert!(
            !contains(bytes, needle),
            "{needle:?} reached the terminal: {text:?}"
        );
    }
    assert!(
        !text.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c)),
        "a C1 control reached the terminal: {text:?}"
    );
    // PWNED-OUT is in the code as printf text (shown); the titles set by raw sequences are not.
    for secret in ["PWNED-TITLE", "PWNED-END", "C1-TITLE"] {
        assert!(!text.contains(secret), "{secret} was shown: {text:?}");
    }
    for (at, _) in bytes.iter().enumerate().filter(|(_, b)| **b == 0x1b) {
        assert_eq!(
            bytes.get(at + 1),
            Some(&b'['),
            "a non-CSI escape at {at}: {text:?}"
        );
    }
}

#[test]
fn hostile_sequences_never_reach_the_terminal() {
    if !pty_available() {
        eprintln!("SKIPPED: no pseudo-terminal on this machine");
        return;
    }
    let s = setup();
    let server = s.server(Script::new([
        Reply::tool_call("shell", HOSTILE_CODE).with_text_before(HOSTILE_TEXT),
        Reply::text(HOSTILE_END),
    ]));
    let base = server.base_url();
    let mut command = s.command(&["-y", "--api_base", &base, "--api_key", "k"]);
    command.env("TERM", "dumb");
    let mut session = rexpect::session::spawn_command(command, Some(20_000)).unwrap();
    let mut transcript = session.exp_string("> ").unwrap();
    session.send_line("show me").unwrap();
    transcript += &session.exp_string("Bye.").unwrap();
    transcript += &session.exp_string("> ").unwrap();
    session.send_control('d').unwrap();
    transcript += &session.exp_eof().unwrap();
    let bytes = bytes_of(&transcript);
    assert_clean(&bytes);
    let text = String::from_utf8_lossy(&bytes);
    for visible in ["Let me look.", "Looking.", "out: moved done", "All done."] {
        assert!(text.contains(visible), "{visible} is missing: {text:?}");
    }
    assert!(
        text.contains("\x1b[36m"),
        "the colour renderer was used: {text:?}"
    );
}

#[test]
fn code_hiding_a_command_behind_a_carriage_return_is_shown_whole_at_the_approval_prompt() {
    if !pty_available() {
        eprintln!("SKIPPED: no pseudo-terminal on this machine");
        return;
    }
    let s = setup();
    let code = "touch pwned-by-cr #\r# list the files, nothing else: ls -la    \x1b[2K";
    let server = s.server(Script::new([Reply::tool_call("shell", code)]));
    let base = server.base_url();
    let mut command = s.command(&["--api_base", &base, "--api_key", "k"]);
    command.env("TERM", "dumb");
    let mut session = rexpect::session::spawn_command(command, Some(20_000)).unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("list the files").unwrap();
    let shown = session
        .exp_string("Would you like to run this code? (y/n)")
        .unwrap();
    let text = String::from_utf8_lossy(&bytes_of(&shown)).into_owned();
    assert!(
        text.contains("touch pwned-by-cr #␍# list the files"),
        "the \\r is not shown: {text:?}"
    );
    assert!(text.contains("␛[2K"), "the escape is not shown: {text:?}");
    assert!(
        text.contains("contains control or invisible characters"),
        "no warning: {text:?}"
    );
    session.send_line("n").unwrap();
    session.exp_string("> ").unwrap();
    session.send_control('d').unwrap();
    session.exp_eof().unwrap();
    assert!(!s.work.path().join("pwned-by-cr").exists());
}

#[test]
fn plain_output_in_a_pipe_carries_no_escapes_and_shows_the_codes_controls() {
    let s = setup();
    let code = format!("{HOSTILE_CODE} # \r\x1b[1A");
    let server = s.server(Script::new([
        Reply::tool_call("shell", &code).with_text_before(HOSTILE_TEXT),
        Reply::text(HOSTILE_END),
    ]));
    let base = server.base_url();
    let out = run_measured(
        s.command(&["-y", "--plain", "--api_base", &base, "--api_key", "k", "go"]),
        "",
        Duration::from_secs(60),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        !out.stdout.contains('\x1b') && !out.stdout.contains('\x07'),
        "{:?}",
        out.stdout
    );
    assert_clean(out.stdout.as_bytes());
    assert!(out.stdout.contains("# ␍␛[1A"), "{:?}", out.stdout);
    assert!(
        out.stdout.contains("```output\nout: moved done\n```"),
        "{:?}",
        out.stdout
    );
}

#[test]
fn magic_shell_output_and_model_errors_are_filtered_too() {
    let s = setup();
    let server = s.server(Script::new([Reply::status(
        400,
        r#"{"error": {"message": "bad \u001b]0;PWNED-TITLE\u0007\u001b[2J request"}}"#,
    )]));
    let base = server.base_url();
    let out = run_measured(
        s.command(&["--plain", "--api_base", &base, "--api_key", "k"]),
        "%% printf 'shell \\033]52;c;cm0gLXJmIH4K\\007\\033[2Jsays hi\\n'\nhello\n",
        Duration::from_secs(60),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_clean(out.stdout.as_bytes());
    assert!(
        !out.stderr.contains('\x1b') && !out.stderr.contains('\x07'),
        "{:?}",
        out.stderr
    );
    assert!(out.stdout.contains("shell says hi"), "{:?}", out.stdout);
    assert!(
        out.stderr.contains("HTTP 400: bad \\u{1b}]0;"),
        "{:?}",
        out.stderr
    );
}
