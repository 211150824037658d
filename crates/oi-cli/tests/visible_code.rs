//! What the person approves is what runs (issue 34, items 6 and 9), through the real `oi`:
//! code hiding its payload in invisible characters is shown with escapes and a warning that
//! names them before the question (on a terminal and in a pipe), and keys typed on the
//! terminal while the reply still streams never answer the question that comes later.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod hostile;
mod pty;
mod terminal;

use std::time::{Duration, Instant};

use oi_testkit::{Ending, Reply, Script};
use terminal::{WAIT, setup};

/// Python that runs `command` hidden as Unicode TAG characters: an editor shows
/// `exec(''.join(chr(ord(c)-0xE0000) for c in ''))`.
fn tag_payload(command: &str) -> String {
    let tags: String = command
        .chars()
        .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
        .collect();
    format!("exec(''.join(chr(ord(c)-0xE0000) for c in '{tags}'))")
}

/// The payload as oi must show it.
fn shown_payload(command: &str) -> String {
    let escapes: String = command
        .chars()
        .map(|c| format!("<U+{:04X}>", 0xE0000 + c as u32))
        .collect();
    format!("exec(''.join(chr(ord(c)-0xE0000) for c in '{escapes}'))")
}

const HIDDEN: &str = "import os;os.system('touch pwned')";

const QUESTION: &str = "Would you like to run this code? (y/n)";

/// The first row holding `needle`.
fn row_of(rows: &[String], needle: &str) -> usize {
    rows.iter()
        .position(|row| row.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} is not on the screen:\n{}", rows.join("\n")))
}

#[test]
fn a_tag_payload_is_shown_as_escapes_with_a_warning_before_the_question_on_a_terminal() {
    let s = setup();
    let server = s.server(vec![Reply::tool_call("python", &tag_payload(HIDDEN))]);
    // Wide enough that the shown line is one row.
    let Some(mut term) = s.oi(&server, &[], 400) else {
        return;
    };
    term.line("tidy up");
    term.wait_for(QUESTION, WAIT);
    let rows = term.rows();
    let code = row_of(&rows, &shown_payload(HIDDEN));
    let warning = row_of(
        &rows,
        "Warning: this code contains control or invisible characters, 34 in all (U+E0069 TAG LATIN SMALL LETTER I, U+E006D TAG LATIN SMALL LETTER M, U+E0070 TAG LATIN SMALL LETTER P, and 18 other kinds), shown above as escapes",
    );
    let question = row_of(&rows, QUESTION);
    assert!(
        code < warning && warning < question,
        "code, warning, question out of order:\n{}",
        rows.join("\n")
    );
    term.line("n");
    term.wait_prompt(WAIT);
    assert!(!s.work.path().join("pwned").exists());
}

#[test]
fn a_tag_payload_is_shown_as_escapes_with_a_warning_in_a_pipe() {
    let s = hostile::setup();
    let server = s.server(Script::new([Reply::tool_call(
        "python",
        &tag_payload(HIDDEN),
    )]));
    let base = server.base_url();
    let out = hostile::run_measured(
        s.command(&["--plain", "--api_base", &base, "--api_key", "k", "tidy up"]),
        "n\n",
        Duration::from_secs(60),
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    let code = out
        .stdout
        .find(&format!("```python\n{}\n```", shown_payload(HIDDEN)));
    let warning = out.stdout.find(
        "Warning: this code contains control or invisible characters, 34 in all (U+E0069 TAG LATIN SMALL LETTER I,",
    );
    let question = out.stdout.find(QUESTION);
    assert!(
        code.is_some() && code < warning && warning < question,
        "{:?}",
        out.stdout
    );
    assert!(!out.stdout.contains('\u{E0069}'), "{:?}", out.stdout);
    assert!(!s.work.path().join("pwned").exists());
}

#[test]
fn keys_typed_while_the_reply_streams_do_not_answer_the_question() {
    let s = setup();
    let server = s.server(vec![
        // The role and the text, then a pause before the code.
        Reply::tool_call("shell", "touch typed-ahead")
            .with_text_before("Let me think about it.")
            .ending(Ending::StallAfter(2, Duration::from_secs(3))),
        Reply::text("Made it."),
    ]);
    let Some(mut term) = s.oi(&server, &[], 80) else {
        return;
    };
    let made = s.work.path().join("typed-ahead");
    term.line("make the file");
    term.wait_for("Let me think about it.", WAIT);
    // Typed ahead, before any code is shown.
    term.send("y\r");
    term.wait_for(QUESTION, WAIT);
    // The question waits: the early `y` did not answer it.
    term.settle(Duration::from_millis(1500), Duration::from_secs(10));
    assert!(
        !made.exists(),
        "the typed-ahead y ran the code:\n{}",
        term.screen()
    );
    term.line("y");
    let deadline = Instant::now() + WAIT;
    while !made.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        made.exists(),
        "the y typed after the question did not run it:\n{}",
        term.screen()
    );
    term.wait_for("Made it.", WAIT);
}
