//! The terminal as good to look at as the original's (issue 24): `oi` on a real
//! pseudo-terminal 60, 80 and 120 columns wide against the scripted model, the screen read
//! through a terminal emulator and kept as snapshots — long output capped by rows, paragraphs
//! reflowed, the line being written styled as it streams, tables that wrap inside their
//! cells, the edited code shown before it runs, and text blocks that are prose.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod pty;
mod terminal;

use std::time::Duration;

use oi_testkit::{Ending, Reply, Script, ScriptedServer};
use pty::Term;
use terminal::*;

/// The rows from the one holding the user's `message` to the end, redacted: what a turn
/// looks like.
fn turn_screen(s: &Setup, term: &Term, message: &str) -> String {
    let rows = term.rows();
    let from = rows
        .iter()
        .rposition(|row| row == &format!("> {message}"))
        .unwrap_or(0);
    let mut rows = rows[from..].to_vec();
    while rows.last().is_some_and(String::is_empty) {
        rows.pop();
    }
    s.redact(&rows.join("\n"))
}

/// Runs a turn that ends with `last` on the screen and returns the turn's rows.
fn turn(
    cols: u16,
    replies: Vec<Reply>,
    message: &str,
    extra: &[&str],
    last: &str,
) -> Option<(Setup, Term, String)> {
    let s = setup();
    let server = s.server(replies);
    let mut term = s.oi(&server, extra, cols)?;
    term.line(message);
    term.wait_for(last, WAIT);
    term.wait_prompt(WAIT);
    term.settle(Duration::from_millis(300), WAIT);
    let screen = turn_screen(&s, &term, message);
    Some((s, term, screen))
}

// ---------------------------------------------------------------------------------------------
// Item 2: one long output line flooded the screen (~700 rows of x's)
// ---------------------------------------------------------------------------------------------

#[test]
fn one_long_output_line_shows_its_first_and_last_rows_and_where_it_all_is() {
    if !have_python() {
        return;
    }
    for cols in WIDTHS {
        let Some((s, term, screen)) = turn(
            cols,
            vec![
                Reply::tool_call("python", "print('x' * 99990 + '0123456789')"),
                Reply::text("Printed."),
            ],
            "flood",
            &["-y"],
            "Printed.",
        ) else {
            return;
        };
        let rows: Vec<&str> = screen.lines().collect();
        let top = rows.iter().position(|r| r.contains("╭─ output")).unwrap();
        let bottom = top
            + rows[top..]
                .iter()
                .position(|r| r.starts_with("  ╰─"))
                .unwrap();
        assert!(
            bottom - top <= 40,
            "{cols}: the output panel takes {} rows:\n{screen}",
            bottom - top
        );
        assert!(
            screen.contains("0123456789"),
            "{cols}: its end is not shown:\n{screen}"
        );
        assert!(
            screen.contains(" rows of this line (9") && screen.contains("KB) not shown"),
            "{cols}: no count of what was left out:\n{screen}"
        );
        assert!(
            screen.contains("the whole output is in")
                && screen.contains("[WORK]/oi-outputs/output-1.txt"),
            "{cols}:\n{screen}"
        );
        for row in &rows[top + 1..bottom] {
            assert!(
                row.starts_with("  │ "),
                "{cols}: a row left the panel: {row:?}"
            );
        }
        let raw = term.raw();
        assert!(
            raw.len() < 30_000,
            "{cols}: {} bytes reached the terminal",
            raw.len()
        );
        let whole = std::fs::read_to_string(s.work.path().join("oi-outputs/output-1.txt")).unwrap();
        assert_eq!(whole.len(), 100_001);
        assert!(whole.ends_with("x0123456789\n"));
        insta::assert_snapshot!(format!("long_output_line_{cols}"), screen);
    }
}

// ---------------------------------------------------------------------------------------------
// Item 3: each soft line break of a paragraph was kept, so paragraphs were ragged
// ---------------------------------------------------------------------------------------------

const PARAGRAPHS: &str = "The log folder has grown to 2 GB over the last week;\nmost of it is old rotation files that nobody reads any more,\nand a few core dumps from March.\n\nI suggest removing the files older than thirty days\nand keeping the rest.";

#[test]
fn paragraphs_are_reflowed_to_the_width() {
    for cols in WIDTHS {
        let Some((_s, _term, screen)) = turn(
            cols,
            vec![Reply::text(PARAGRAPHS).chunked(7)],
            "why is my disk full",
            &[],
            "keeping the rest.",
        ) else {
            return;
        };
        assert_words_whole(&screen, PARAGRAPHS, cols);
        let rows: Vec<&str> = screen.lines().collect();
        let first = rows
            .iter()
            .position(|r| r.contains("The log folder"))
            .unwrap();
        let paragraph: Vec<&str> = rows[first..]
            .iter()
            .take_while(|r| !r.is_empty())
            .copied()
            .collect();
        // Every row is full: the next row's first word would not have fitted on it.
        for pair in paragraph.windows(2) {
            let next_word = pair[1].split_whitespace().next().unwrap();
            assert!(
                pair[0].chars().count() + 1 + next_word.chars().count() > cols as usize,
                "{cols}: {:?} could have taken {next_word:?}:\n{screen}",
                pair[0]
            );
        }
        let width = PARAGRAPHS.split("\n\n").next().unwrap().chars().count();
        assert!(
            paragraph.len() <= width.div_ceil(cols as usize - 2) + 1,
            "{cols}: {} rows:\n{screen}",
            paragraph.len()
        );
        insta::assert_snapshot!(format!("paragraphs_{cols}"), screen);
    }
}

// ---------------------------------------------------------------------------------------------
// Item 1: the line being written was raw Markdown and ran past the margin
// ---------------------------------------------------------------------------------------------

#[test]
fn the_line_being_written_is_styled_and_wrapped_as_it_streams() {
    let first = "Here is what I found in **your proj";
    for cols in WIDTHS {
        let s = setup();
        let server = s.server(vec![
            Reply::text_pieces([
                "I looked at every folder below the current directory, and the largest ones by far are the caches. ",
                first,
                "ect**, and what I suggest doing about it.",
            ])
            .ending(Ending::StallAfter(3, Duration::from_secs(3))),
        ]);
        let Some(mut term) = s.oi(&server, &[], cols) else {
            return;
        };
        term.line("look around");
        let screen = term.wait_for("your proj", WAIT);
        term.settle(Duration::from_millis(200), WAIT);
        let screen_now = term.screen();
        assert!(
            !screen_now.contains("**"),
            "{cols}: raw markers while streaming:\n{screen}"
        );
        let rows = term.rows();
        let at = rows.iter().position(|r| r.contains("I looked at")).unwrap();
        let end = at
            + rows[at..]
                .iter()
                .position(|r| r.contains("your proj"))
                .unwrap();
        for row in &rows[at..=end] {
            assert!(
                row.starts_with("  ") && row.chars().count() <= cols as usize,
                "{cols}: {row:?}"
            );
        }
        // `your proj` is already bold.
        let col = rows[end].find("your proj").unwrap();
        let col = rows[end][..col].chars().count() as u16;
        assert!(
            term.cell(end as u16, col).unwrap().bold(),
            "{cols}: not bold while streaming"
        );
        insta::assert_snapshot!(
            format!("streaming_{cols}"),
            turn_screen(&s, &term, "look around")
        );
        let screen = term.wait_for("doing about it.", WAIT);
        assert!(
            !screen.contains("**") && screen.contains("your project,"),
            "{cols}:\n{screen}"
        );
        assert_words_whole(
            &screen,
            "I looked at every folder below the current directory, and the largest ones by far are the caches. Here is what I found in your project, and what I suggest doing about it.",
            cols,
        );
    }
}

#[test]
fn a_long_paragraph_streams_without_rewriting_its_rows() {
    let sentence = "Each file below the log folder is older than a month and nobody reads it. ";
    let paragraph = sentence.repeat(16);
    let Some((_s, term, screen)) = turn(
        80,
        vec![Reply::text(paragraph.trim_end()).chunked(4)],
        "explain",
        &[],
        "nobody reads it.\n",
    ) else {
        return;
    };
    assert_words_whole(&screen, &paragraph, 80);
    // ~300 pieces over 16 rows: only the row that changed is drawn again each time.
    let raw = term.raw().len();
    assert!(raw < 40_000, "{raw} bytes reached the terminal");
}

// ---------------------------------------------------------------------------------------------
// Item 4: a table that did not fit fell apart
// ---------------------------------------------------------------------------------------------

const FOUR_COLUMNS: &str = "Here is the plan:\n\n| File | Size | Action | Reason |\n|---|---:|---|---|\n| logs/app.log | 2.1 GB | delete | rotated copies nobody reads since March |\n| cache/thumbs | 640 MB | keep | rebuilt on demand, slow to make again |\n| core.1234 | 1.2 GB | delete | a crash dump from an old version |\n";
const SEVEN_COLUMNS: &str = "| Host | OS | CPU | Memory | Disk | Uptime | Status |\n|---|---|---:|---:|---:|---|---|\n| build-01 | Ubuntu 24.04 | 16 | 64 GB | 2 TB | 41 days | healthy and idle |\n| web-frontend-02 | Debian 12 | 8 | 32 GB | 500 GB | 3 days | restarting after an update |\n";

/// The columns of the bars (`│`, `┼`) in a row.
fn bars(row: &str) -> Vec<usize> {
    row.chars()
        .enumerate()
        .filter(|(_, c)| matches!(c, '│' | '┼'))
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn tables_that_do_not_fit_wrap_inside_their_cells() {
    for (name, table, last, widths) in [
        ("table_4", FOUR_COLUMNS, "crash", &WIDTHS[..]),
        ("table_7", SEVEN_COLUMNS, "restarting", &[80u16, 120][..]),
    ] {
        for &cols in widths {
            let Some((_s, _term, screen)) = turn(
                cols,
                vec![Reply::text(table).chunked(11)],
                "plan",
                &[],
                last,
            ) else {
                return;
            };
            let rows: Vec<&str> = screen
                .lines()
                .filter(|r| r.contains('│') || r.contains('┼'))
                .collect();
            assert!(
                rows.iter().any(|r| r.contains('┼')),
                "{name} {cols}: no header rule:\n{screen}"
            );
            let first = bars(rows[0]);
            assert!(!first.is_empty());
            for row in &rows {
                assert_eq!(
                    bars(row),
                    first,
                    "{name} {cols}: unaligned {row:?}:\n{screen}"
                );
                assert!(row.chars().count() <= cols as usize);
            }
            insta::assert_snapshot!(format!("{name}_{cols}"), screen);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Item 5: `e` ran the edited code without showing it
// ---------------------------------------------------------------------------------------------

#[test]
fn edited_code_is_shown_before_it_runs() {
    if !have_python() {
        return;
    }
    for cols in WIDTHS {
        let s = setup();
        let server = s.server(vec![
            Reply::tool_call("python", "print(6 * 7 - 1)"),
            Reply::text("Done."),
        ]);
        let mut command = s.command(&["--api_base", &server.base_url(), "--api_key", "k"]);
        command.env("EDITOR", "sed -i s/.-.1//");
        let Some(mut term) = Term::spawn(command, cols, ROWS) else {
            return;
        };
        term.wait_prompt(WAIT);
        term.line("compute");
        term.wait_for("Would you like to run this code?", WAIT);
        term.line("e");
        term.wait_for("Done.", WAIT);
        term.wait_prompt(WAIT);
        term.settle(Duration::from_millis(300), WAIT);
        let screen = turn_screen(&s, &term, "compute");
        let edited = screen.find("as you edited it").expect(&screen);
        let code = screen[edited..].find("│ print(6 * 7)").expect(&screen) + edited;
        let output = screen.find("│ 42").expect(&screen);
        assert!(code < output, "{cols}:\n{screen}");
        insta::assert_snapshot!(format!("edited_{cols}"), screen);
    }
}

// ---------------------------------------------------------------------------------------------
// Item 6: a ```text example was run, and the model asked again ~268 times
// ---------------------------------------------------------------------------------------------

#[test]
fn a_text_block_in_text_mode_is_prose_and_not_run() {
    let reply = "The log line looks like this:\n\n```text\nERROR 2026-12-01 disk full\n```\n\nand the setting:\n\n```json\n{\"keep_days\": 30}\n```\n\nThat is all.";
    for cols in WIDTHS {
        let s = setup();
        let server = s.server(vec![Reply::text(reply), Reply::text("asked again")]);
        let Some(mut term) = s.oi(&server, &["--no_llm_supports_functions"], cols) else {
            return;
        };
        term.line("show me");
        term.wait_for("That is all.", WAIT);
        term.wait_prompt(WAIT);
        term.settle(Duration::from_millis(300), WAIT);
        let screen = turn_screen(&s, &term, "show me");
        assert!(
            !screen.contains("no output") && !screen.contains("Would you like"),
            "{screen}"
        );
        assert!(screen.contains("│ ERROR 2026-12-01 disk full"), "{screen}");
        assert!(screen.contains("│ {\"keep_days\": 30}"), "{screen}");
        assert_eq!(
            server.request_count(),
            1,
            "{cols}: the model was asked again"
        );
        insta::assert_snapshot!(format!("text_block_{cols}"), screen);
    }
}

#[test]
fn a_loop_without_progress_stops_and_says_so() {
    if !have_python() {
        return;
    }
    let s = setup();
    let server = s
        .runtime
        .block_on(ScriptedServer::start(Script::responder(|_| {
            Reply::tool_call("python", "print('same')")
        })))
        .unwrap();
    let Some(mut term) = s.oi(&server, &["-y"], 80) else {
        return;
    };
    term.line("go");
    let screen = term.wait_for("without progress", Duration::from_secs(60));
    term.wait_prompt(WAIT);
    assert!(screen.contains("oi stopped this turn"), "{screen}");
    assert!(
        server.request_count() <= 6,
        "{} requests",
        server.request_count()
    );
}

// ---------------------------------------------------------------------------------------------
// Item 7: the small things
// ---------------------------------------------------------------------------------------------

#[test]
fn the_start_says_the_model_and_info_gives_the_window_trimming_uses() {
    for cols in WIDTHS {
        let s = setup();
        let server = s.server(vec![]);
        let Some(mut term) = s.oi(&server, &["--model", "mystery-model"], cols) else {
            return;
        };
        let intro = term.screen();
        assert!(
            intro.contains("▌ Model set to mystery-model"),
            "{cols}:\n{intro}"
        );
        insta::assert_snapshot!(format!("intro_{cols}"), s.redact(&intro));
        term.line("%info");
        let screen = term.wait_for("Max tokens", WAIT);
        assert!(
            screen.contains("Context window: 8000 tokens (assumed"),
            "{cols}:\n{screen}"
        );
        assert!(!screen.contains("Context window: None"), "{screen}");
        term.send("\x04");
    }
}

/// (A build with the `local` feature has the model: the case does not exist there.)
#[cfg(not(feature = "local"))]
#[test]
fn local_in_a_build_without_the_model_says_so_at_start() {
    let s = setup();
    let Some(mut term) = Term::spawn(s.command(&["--local"]), 80, ROWS) else {
        return;
    };
    let screen = term.wait_for("built without the embedded local model", WAIT);
    assert!(!screen.contains("> look"), "{screen}");
    term.send("\x04");
}

#[test]
fn a_typed_word_is_not_taken_as_a_key() {
    let s = setup();
    let profile = s
        .home
        .path()
        .join(".config/open-interpreter/profiles/default.yaml");
    let Some(mut term) = Term::spawn(s.command(&[]), 80, ROWS) else {
        return;
    };
    term.wait_for("OpenAI API key (not shown as you type", WAIT);
    term.line("hello");
    let screen = term.wait_for("does not look like an OpenAI API key", WAIT);
    assert!(!screen.contains("Save the key"), "{screen}");
    term.line("");
    term.wait_for("No key given", WAIT);
    term.wait_prompt(WAIT);
    assert!(!profile.exists() || !std::fs::read_to_string(&profile).unwrap().contains("hello"));
    term.send("\x04");
}

#[test]
fn output_rows_break_between_words_and_the_question_is_indented() {
    if !have_python() {
        return;
    }
    let numbers: Vec<String> = (0..24)
        .map(|i| (1_000_000_007u64 * (i + 3)).to_string())
        .collect();
    for cols in WIDTHS {
        let s = setup();
        let server = s.server(vec![
            Reply::tool_call(
                "python",
                "print(' '.join(str(1000000007 * (i + 3)) for i in range(24)))",
            ),
            Reply::text("Listed."),
        ]);
        let Some(mut term) = s.oi(&server, &[], cols) else {
            return;
        };
        term.line("list");
        term.wait_for("Would you like to run this code?", WAIT);
        let rows = term.rows();
        assert!(
            rows.iter()
                .any(|r| r == "  Would you like to run this code? (y/n)"),
            "{cols}: {rows:#?}"
        );
        term.line("y");
        term.wait_for("Listed.", WAIT);
        term.wait_prompt(WAIT);
        term.settle(Duration::from_millis(300), WAIT);
        let screen = turn_screen(&s, &term, "list");
        assert!(
            screen.contains("\n  y\n"),
            "{cols}: the answer is not indented:\n{screen}"
        );
        assert_words_whole(&screen, &numbers.join(" "), cols);
        insta::assert_snapshot!(format!("words_and_question_{cols}"), screen);
    }
}

#[test]
fn ctrl_c_during_code_leaves_whole_frames() {
    if !have_python() {
        return;
    }
    for cols in WIDTHS {
        let s = setup();
        let server = s.server(vec![Reply::tool_call(
            "python",
            "import time\nprint('started', flush=True)\ntime.sleep(30)",
        )]);
        let Some(mut term) = s.oi(&server, &["-y"], cols) else {
            return;
        };
        term.line("wait");
        term.wait_for("│ started", WAIT);
        term.send("\x03");
        term.wait_for("Stopped.", WAIT);
        term.wait_prompt(WAIT);
        term.settle(Duration::from_millis(300), WAIT);
        let screen = turn_screen(&s, &term, "wait");
        let tops = screen.matches("╭─").count();
        let bottoms = screen.matches("╰─").count();
        assert_eq!(
            tops, bottoms,
            "{cols}: a frame without its top or foot:\n{screen}"
        );
        assert!(
            !screen.contains("^C"),
            "{cols}: the echo of CTRL-C is left:\n{screen}"
        );
        insta::assert_snapshot!(format!("ctrl_c_code_{cols}"), screen);
    }
}

#[test]
fn ctrl_c_while_code_streams_or_runs_silently_leaves_whole_frames() {
    if !have_python() {
        return;
    }
    let streaming = Reply::tool_call_pieces(
        "python",
        ["import time\nfor i in range(3):\n", "    print(i)\n"],
    )
    .ending(Ending::StallAfter(3, Duration::from_secs(30)));
    let silent = Reply::tool_call("python", "import time\ntime.sleep(30)");
    for (name, reply, shown) in [
        ("ctrl_c_streaming", streaming, "for i in range(3):"),
        ("ctrl_c_silent", silent, "Running python"),
    ] {
        let s = setup();
        let server = s.server(vec![reply]);
        let Some(mut term) = s.oi(&server, &["-y"], 80) else {
            return;
        };
        term.line("wait");
        term.wait_for(shown, WAIT);
        term.settle(Duration::from_millis(300), WAIT);
        term.send("\x03");
        term.wait_for("Stopped.", WAIT);
        term.wait_prompt(WAIT);
        term.settle(Duration::from_millis(300), WAIT);
        let screen = turn_screen(&s, &term, "wait");
        let tops = screen.matches("╭─").count();
        let bottoms = screen.matches("╰─").count();
        assert_eq!(
            tops, bottoms,
            "{name}: a frame without its top or foot:\n{screen}"
        );
        assert!(!screen.contains("^C"), "{name}:\n{screen}");
        insta::assert_snapshot!(name, screen);
    }
}
