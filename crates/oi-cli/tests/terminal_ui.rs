//! The terminal as a person sees it (issue 15): `oi` on a real pseudo-terminal 60, 80 and 120
//! columns wide, with `COLUMNS` unset as shells leave it, against the scripted model server;
//! the screen is read through a terminal emulator, so rows, wrapping and colours are what a
//! terminal would show.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod pty;
mod terminal;

use std::time::Duration;

use oi_testkit::{Ending, Reply};
use pty::Term;
use terminal::*;

// ---------------------------------------------------------------------------------------------
// Broken: the running line never showed and a silent run looked frozen
// ---------------------------------------------------------------------------------------------

#[test]
fn silent_code_shows_a_spinner_its_running_line_and_the_elapsed_time() {
    if !have_python() {
        return;
    }
    for cols in WIDTHS {
        let s = setup();
        let server = s.server(vec![
            Reply::tool_call("python", "import time\ntime.sleep(2.5)\nprint('woke up')"),
            Reply::text("Slept."),
        ]);
        let Some(mut term) = s.oi(&server, &[], cols) else {
            return;
        };
        term.line("take a nap");
        term.wait_for("Would you like to run this code? (y/n)", WAIT);
        term.line("y");
        let screen = term.wait_for("Running python · line 2: time.sleep(2.5)", WAIT);
        let rows = term.rows();
        let status = row_with(&rows, "Running python").unwrap();
        assert!(
            status.trim_end().ends_with(" s"),
            "{cols}: no elapsed time: {status:?}\n{screen}"
        );
        assert!(
            status
                .trim_start()
                .starts_with(['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']),
            "{cols}: no spinner: {status:?}"
        );
        let screen = term.wait_for("Slept.", WAIT);
        assert!(
            !screen.contains("Running python"),
            "{cols}: the status stayed:\n{screen}"
        );
        assert!(screen.contains("│ woke up"), "{cols}:\n{screen}");
        term.wait_prompt(WAIT);
        term.send("\x04");
        assert_eq!(term.exit(WAIT), Some(0));
    }
}

#[test]
fn a_silent_shell_command_shows_it_is_running() {
    let s = setup();
    let server = s.server(vec![
        Reply::tool_call("shell", "sleep 2.5"),
        Reply::text("Done."),
    ]);
    let Some(mut term) = s.oi(&server, &["-y"], 80) else {
        return;
    };
    term.line("sleep 5");
    let screen = term.wait_for("Running shell", WAIT);
    assert!(screen.contains("╭─ shell"), "{screen}");
    let screen = term.wait_for("Done.", WAIT);
    assert!(screen.contains("no output"), "{screen}");
}

// ---------------------------------------------------------------------------------------------
// Broken: styling only below $COLUMNS, words cut at the edge, lines printed twice
// ---------------------------------------------------------------------------------------------

const LONG_PROSE: &str = "Use `grep -rn` with **care**: it searches every file below the current directory, follows no symbolic links, and prints each matching line with its number, which is what you asked for.";
const LONG_CODE: &str =
    "import os; print(os.path.join('alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta'))";

#[test]
fn long_lines_are_styled_and_wrapped_at_the_terminals_real_width() {
    if !have_python() {
        return;
    }
    for cols in WIDTHS {
        let s = setup();
        let server = s.server(vec![
            Reply::tool_call("python", LONG_CODE)
                .with_text_before(LONG_PROSE)
                .chunked(9),
            Reply::text("All done."),
        ]);
        let Some(mut term) = s.oi(&server, &["-y"], cols) else {
            return;
        };
        term.line("search");
        let screen = term.wait_for("All done.", WAIT);
        assert!(
            !screen.contains("**") && !screen.contains('`'),
            "{cols}: raw Markdown:\n{screen}"
        );
        let plain_prose = LONG_PROSE.replace(['`', '*'], "");
        assert_words_whole(&screen, &plain_prose, cols);
        assert_eq!(
            screen.matches("Use grep -rn").count(),
            1,
            "{cols}: printed twice:\n{screen}"
        );
        let rows = term.rows();
        let first = rows
            .iter()
            .position(|r| r.contains("Use grep -rn"))
            .unwrap();
        for row in rows[first..].iter().take_while(|r| !r.is_empty()) {
            assert!(
                row.starts_with("  ") && row.len() > 2,
                "{cols}: a row lost its indent: {row:?}"
            );
        }
        // The code line is longer than 80 columns, and still coloured.
        let (r, row) = rows
            .iter()
            .enumerate()
            .find(|(_, row)| row.contains("│ import os"))
            .unwrap();
        let col = row.chars().position(|c| c == 'i').unwrap() as u16;
        let cell = term.cell(r as u16, col).unwrap();
        assert_eq!(
            cell.fgcolor(),
            vt100::Color::Idx(5),
            "{cols}: `import` is not a keyword colour"
        );
        let quote = row
            .find("'alpha'")
            .map(|at| row[..at].chars().count() as u16);
        if let Some(col) = quote {
            assert_eq!(
                term.cell(r as u16, col).unwrap().fgcolor(),
                vt100::Color::Idx(2)
            );
        }
        let code_rows: Vec<&String> = rows.iter().filter(|row| row.starts_with("  │ ")).collect();
        assert!(
            code_rows.iter().any(|row| row.contains("'eta'))")),
            "{cols}: the wrapped code line lost its end:\n{screen}"
        );
    }
}

#[test]
fn the_width_follows_a_resize() {
    let s = setup();
    let server = s.server(vec![
        Reply::text(LONG_PROSE).ending(Ending::StallAfter(0, Duration::from_secs(3))),
    ]);
    let Some(mut term) = s.oi(&server, &[], 120) else {
        return;
    };
    term.line("explain");
    term.wait_for("Waiting for", WAIT);
    term.resize(60, ROWS);
    let screen = term.wait_for("asked for.", WAIT);
    assert_words_whole(&screen, &LONG_PROSE.replace(['`', '*'], ""), 60);
    let rows = term.rows();
    let first = rows
        .iter()
        .position(|r| r.contains("Use grep -rn"))
        .unwrap();
    let prose: Vec<&String> = rows[first..].iter().take_while(|r| !r.is_empty()).collect();
    assert!(prose.len() >= 3, "not wrapped at 60 columns:\n{screen}");
    assert!(prose.iter().all(|r| r.starts_with("  ")), "{screen}");
}

// ---------------------------------------------------------------------------------------------
// Broken: oi's own texts printed raw Markdown, quoted like the prompt, cut mid-word
// ---------------------------------------------------------------------------------------------

#[test]
fn help_tokens_info_and_the_intro_are_rendered_markdown() {
    let s = setup();
    let server = s.server(vec![]);
    for cols in WIDTHS {
        let Some(mut term) = s.oi(&server, &[], cols) else {
            return;
        };
        let intro = term.screen();
        assert!(
            intro.contains("Use oi -y to bypass this.") && !intro.contains('`'),
            "{cols}: {intro}"
        );
        term.line("%help");
        let screen = term.wait_for("Show this message.", WAIT);
        assert!(screen.contains("Available Commands:"), "{screen}");
        assert!(
            !screen.contains("**") && !screen.contains("`%"),
            "{cols}: raw Markdown:\n{screen}"
        );
        for row in term.rows() {
            assert!(
                !row.starts_with("> ") || row.starts_with("> %"),
                "{cols}: a note looks like the prompt: {row:?}"
            );
        }
        assert_words_whole(
            &screen,
            "Removes the previous user message and the AI's response from the message history.",
            cols,
        );
        term.line("%tokens");
        let screen = term.wait_for("what the provider reported.", WAIT);
        assert!(
            screen.contains("Note: The next request is an estimate")
                && !screen.contains("**Note**"),
            "{screen}"
        );
        term.line("%info");
        let screen = term.wait_for("Interpreter Info", WAIT);
        assert!(!screen.contains("# Interpreter Info"), "{screen}");
        term.wait_prompt(WAIT);
        term.send("\x04");
        assert_eq!(term.exit(WAIT), Some(0));
    }
}

#[test]
fn a_resumed_conversation_is_drawn_like_a_live_one() {
    let s = setup();
    let dir = s.home.path().join(".config/open-interpreter/conversations");
    std::fs::create_dir_all(&dir).unwrap();
    let messages = serde_json::json!([
        {"role": "user", "type": "message", "content": "compute 6*7"},
        {"role": "assistant", "type": "message", "content": "## Plan\n\nI will use **Python**."},
        {"role": "assistant", "type": "code", "format": "python", "content": "print(6*7)"},
        {"role": "computer", "type": "console", "format": "output", "content": "42\n"},
        {"role": "assistant", "type": "message", "content": "The answer is `42`."}
    ]);
    std::fs::write(
        dir.join("compute__July_29_2025_18-29-20.json"),
        messages.to_string(),
    )
    .unwrap();
    let server = s.server(vec![]);
    for cols in WIDTHS {
        let Some(mut term) = Term::spawn(
            s.command(&[
                "--api_base",
                &server.base_url(),
                "--api_key",
                "k",
                "--conversations",
            ]),
            cols,
            ROWS,
        ) else {
            return;
        };
        term.wait_for("Enter to open", WAIT);
        term.send("\r");
        let screen = term.wait_for("The answer is 42.", WAIT);
        assert!(
            !screen.contains("## ") && !screen.contains("```") && !screen.contains("**"),
            "{cols}:\n{screen}"
        );
        assert!(screen.contains("> compute 6*7"), "{screen}");
        assert!(
            screen.contains("╭─ python") && screen.contains("│ 42"),
            "{screen}"
        );
        term.wait_prompt(WAIT);
        term.wait_prompt(WAIT);
        term.send("\x04");
        assert_eq!(term.exit(WAIT), Some(0));
    }
}

// ---------------------------------------------------------------------------------------------
// Broken: CTRL-C during a slow answer said code was stopped
// ---------------------------------------------------------------------------------------------

#[test]
fn ctrl_c_while_the_model_thinks_says_the_request_was_cancelled() {
    for cols in WIDTHS {
        let s = setup();
        let server = s.server(vec![
            Reply::text("too late").ending(Ending::StallAfter(0, Duration::from_secs(30))),
            Reply::text("Back."),
        ]);
        let Some(mut term) = s.oi(&server, &[], cols) else {
            return;
        };
        term.line("think hard");
        let screen = term.wait_for("Waiting for", WAIT);
        assert!(screen.contains(" s"), "{screen}");
        term.send("\x03");
        let screen = term.wait_for("Stopped.", WAIT);
        assert_words_whole(
            &screen,
            "The request to the model was cancelled before it answered.",
            cols,
        );
        assert!(
            screen.contains("Stopped. The request to the model was cancelled"),
            "{cols}:\n{screen}"
        );
        assert!(!screen.contains("code was stopped"), "{cols}:\n{screen}");
        term.line("again");
        term.wait_for("Back.", WAIT);
        term.wait_prompt(WAIT);
        term.send("\x04");
        assert_eq!(term.exit(WAIT), Some(0));
    }
}

// ---------------------------------------------------------------------------------------------
// Look and feel: long output, errors, approval answers
// ---------------------------------------------------------------------------------------------

#[test]
fn long_output_shows_its_head_and_tail_and_where_the_rest_is() {
    if !have_python() {
        return;
    }
    let s = setup();
    let server = s.server(vec![
        Reply::tool_call("python", "for i in range(100000):\n    print('row', i)"),
        Reply::text("Printed."),
    ]);
    let Some(mut term) = s.oi(&server, &["-y"], 80) else {
        return;
    };
    term.line("flood");
    let screen = term.wait_for("Printed.", Duration::from_secs(60));
    assert!(screen.contains("│ row 99999"), "{screen}");
    // (oi-computer holds back the middle of a flood and says so: the count includes its notes)
    assert!(
        screen.contains(" more lines (") && screen.contains("not shown; the whole output is in"),
        "{screen}"
    );
    assert!(screen.contains("│ row 99990"), "{screen}");
    assert!(!screen.contains("│ row 99989"), "{screen}");
    let raw = term.raw();
    assert!(
        raw.len() < 200_000,
        "{} bytes reached the terminal",
        raw.len()
    );
    let saved = std::fs::read_dir(s.work.path().join("oi-outputs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let whole = std::fs::read_to_string(saved).unwrap();
    assert!(whole.starts_with("row 0\nrow 1\n") && whole.contains("\nrow 40\n"));
    assert!(
        whole.ends_with("row 99999\n"),
        "{}",
        &whole[whole.len() - 100..]
    );
}

#[test]
fn an_answer_other_than_y_n_or_e_asks_again() {
    let s = setup();
    let marker = s.work.path().join("made-it");
    let server = s.server(vec![Reply::tool_call(
        "shell",
        &format!("touch {}", marker.display()),
    )]);
    let Some(mut term) = s.oi(&server, &[], 80) else {
        return;
    };
    term.line("make it");
    term.wait_for("Would you like to run this code? (y/n)", WAIT);
    term.line("maybe");
    term.wait_for("\"maybe\" is not an answer", WAIT);
    assert!(!marker.exists());
    term.line("n");
    term.wait_prompt(WAIT);
    assert!(!marker.exists());
}

// ---------------------------------------------------------------------------------------------
// Snapshots of the rendered screen (text with escapes)
// ---------------------------------------------------------------------------------------------

fn snapshot_turn(
    name: &str,
    cols: u16,
    replies: Vec<Reply>,
    message: &str,
    extra: &[&str],
    last: &str,
) {
    let s = setup();
    let server = s.server(replies);
    let Some(mut term) = s.oi(&server, extra, cols) else {
        return;
    };
    term.line(message);
    term.wait_for(last, WAIT);
    term.settle(Duration::from_millis(300), WAIT);
    insta::assert_snapshot!(name, s.redact(&term.screen_formatted()));
}

#[test]
fn snapshot_of_a_code_turn() {
    if !have_python() {
        return;
    }
    snapshot_turn(
        "code_turn_80",
        80,
        vec![
            Reply::tool_call(
                "python",
                "total = 0\nfor n in range(1, 5):\n    total += n * n  # squares\nprint(total)",
            )
            .with_text_before("Let me add the **squares** with `Python`:"),
            Reply::text("The sum of the first four squares is **30**."),
        ],
        "sum the squares",
        &["-y"],
        "first four squares",
    );
}

#[test]
fn snapshot_of_a_long_line() {
    snapshot_turn(
        "long_line_60",
        60,
        vec![Reply::text(format!(
            "{LONG_PROSE}\n\n- a list item that is long enough to wrap onto a second row\n- `short`"
        ))],
        "explain",
        &[],
        "short",
    );
}

#[test]
fn snapshot_of_a_traceback() {
    if !have_python() {
        return;
    }
    snapshot_turn(
        "traceback_80",
        80,
        vec![
            Reply::tool_call(
                "python",
                "def f(x):\n    return 1 / x\n\nprint('before')\nf(0)",
            ),
            Reply::text("It divided by zero."),
        ],
        "divide",
        &["-y"],
        "divided by zero",
    );
}

#[test]
fn snapshot_of_help() {
    let s = setup();
    let server = s.server(vec![]);
    let Some(mut term) = s.oi(&server, &[], 60) else {
        return;
    };
    term.line("%help");
    term.wait_for("Show this message.", WAIT);
    term.settle(Duration::from_millis(200), WAIT);
    insta::assert_snapshot!("help_60", s.redact(&term.screen_formatted()));
}
