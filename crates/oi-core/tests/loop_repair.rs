//! The repair step for small local models (issue 28), in process: a scripted model and a
//! recording computer. After an error the next request says so (a hidden note, not kept in
//! the conversation); a reply without code after an error gets one retry, not a loop; a
//! block that only prints a typed-in value gets a note; the same error again is no progress;
//! other models see none of it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use oi_core::{Message, Role};
use oi_testkit::{ModelReply, RecordingComputer, RunOutput};

mod loop_support;
use loop_support::*;

const TRACE: &str = "Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\nNameError: name 'prics' is not defined\n";

fn local(s: &mut oi_core::Settings) {
    s.llm.model = "local".to_owned();
}

/// The request's hidden note: its last message when that is the user's ("" when not).
fn last_user_text(request: &oi_core::ModelRequest) -> String {
    let last = request.messages.last().unwrap();
    if last.role == Role::User {
        last.text().to_owned()
    } else {
        String::new()
    }
}

#[tokio::test]
async fn after_an_error_the_next_request_quotes_it_and_a_codeless_reply_gets_one_retry() {
    let (oi, model, computer) = setup(
        [
            ModelReply::code("python", "print(sum(prics))"),
            ModelReply::text("The code has an error."),
            ModelReply::text("Sorry, I cannot fix it."),
            ModelReply::text("never asked"),
        ],
        RecordingComputer::new().with_outputs([RunOutput::text(TRACE)]),
        local,
    );
    let seen = drive(oi.chat("total the prices"), |_| panic!("auto_run")).await;
    assert!(seen.complete, "{:?}", seen.error);
    // The run, the reply that gave up, one retry; then the turn ends.
    assert_eq!(model.request_count(), 3);
    assert_eq!(computer.runs(), vec![run("python", "print(sum(prics))")]);
    let requests = model.requests();
    for request in &requests[1..] {
        let note = last_user_text(request);
        assert!(
            note.contains("NameError: name 'prics' is not defined")
                && note.contains("corrected code"),
            "{note}"
        );
    }
    // The notes were sent, not kept.
    assert!(
        oi.messages()
            .iter()
            .all(|m| !m.text().contains("corrected code")),
        "{:?}",
        oi.messages()
    );
}

#[tokio::test]
async fn a_fixed_block_after_the_note_runs_and_the_turn_ends_with_the_answer() {
    let (oi, model, computer) = setup(
        [
            ModelReply::code("python", "print(sum(prics))"),
            ModelReply::code("python", "print(sum(prices))"),
            ModelReply::text("The total is 27."),
        ],
        RecordingComputer::new().with_outputs([RunOutput::text(TRACE), RunOutput::text("27\n")]),
        local,
    );
    let seen = drive(oi.chat("total the prices"), |_| panic!("auto_run")).await;
    assert!(seen.complete, "{:?}", seen.error);
    assert_eq!(model.request_count(), 3);
    assert_eq!(computer.runs().len(), 2);
    // No note after the block that worked.
    assert!(!last_user_text(&model.requests()[2]).contains("corrected code"));
    assert_eq!(
        oi.messages().last(),
        Some(&Message::assistant("The total is 27."))
    );
}

#[tokio::test]
async fn a_block_that_prints_a_typed_in_value_gets_a_note() {
    let (oi, model, _computer) = setup(
        [
            ModelReply::code("python", "print(20)"),
            ModelReply::code(
                "python",
                "a, b = 1, 1\nfor _ in range(18):\n    a, b = b, a + b\nprint(b)",
            ),
            ModelReply::text("It is 6765."),
        ],
        RecordingComputer::new().with_outputs([RunOutput::text("20\n"), RunOutput::text("6765\n")]),
        local,
    );
    let seen = drive(oi.chat("the 20th Fibonacci number?"), |_| {
        panic!("auto_run")
    })
    .await;
    assert!(seen.complete, "{:?}", seen.error);
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert!(last_user_text(&requests[1]).contains("typed in yourself"));
    assert!(!last_user_text(&requests[2]).contains("typed in yourself"));
}

#[tokio::test]
async fn the_same_error_from_changing_code_stops_the_turn() {
    let replies = (0..10).map(|i| ModelReply::code("python", &format!("print(sum(prics)) # {i}")));
    let (oi, model, computer) = setup(
        replies,
        RecordingComputer::new().with_outputs((0..10).map(|_| RunOutput::text(TRACE))),
        local,
    );
    let seen = drive(oi.chat("total the prices"), |_| panic!("auto_run")).await;
    assert!(seen.complete, "{:?}", seen.error);
    // The first error, then four more of the same: stopped, and said so.
    assert_eq!(model.request_count(), 5);
    assert_eq!(computer.runs().len(), 5);
    let said = seen
        .chunks
        .iter()
        .filter_map(|c| c.text())
        .collect::<String>();
    assert!(said.contains("without progress"), "{said}");
}

#[tokio::test]
async fn other_models_get_no_repair_step() {
    let (oi, model, _computer) = setup(
        [
            ModelReply::code("python", "print(sum(prics))"),
            ModelReply::text("The code has an error."),
            ModelReply::text("never asked"),
        ],
        RecordingComputer::new().with_outputs([RunOutput::text(TRACE)]),
        |s| s.llm.model = "gpt-4o".to_owned(),
    );
    let seen = drive(oi.chat("total the prices"), |_| panic!("auto_run")).await;
    assert!(seen.complete, "{:?}", seen.error);
    assert_eq!(model.request_count(), 2);
    assert!(
        model.requests()[1]
            .messages
            .iter()
            .all(|m| !m.text().contains("corrected code"))
    );
}

#[tokio::test]
async fn the_same_block_printing_the_same_output_again_ends_the_turn() {
    let (oi, model, computer) = setup(
        [
            ModelReply::code("python", "print(sum(range(5)))"),
            ModelReply::code("python", "print(sum(range(5)))"),
            ModelReply::text("never asked"),
        ],
        RecordingComputer::new().with_outputs([RunOutput::text("10\n"), RunOutput::text("10\n")]),
        local,
    );
    let seen = drive(oi.chat("sum 0..4"), |_| panic!("auto_run")).await;
    assert!(seen.complete, "{:?}", seen.error);
    // The repeat ran (its output is the answer) and nothing more was asked.
    assert_eq!(model.request_count(), 2);
    assert_eq!(computer.runs().len(), 2);
    let said = seen
        .chunks
        .iter()
        .filter_map(|c| c.text())
        .collect::<String>();
    assert!(!said.contains("without progress"), "{said}");
}

/// A workspace holding `notes.txt`, and the settings that use it for the local model.
fn workspace_with_notes() -> (tempfile::TempDir, impl FnOnce(&mut oi_core::Settings)) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "a\nb\nc\n").unwrap();
    let path = dir.path().to_path_buf();
    (dir, move |s: &mut oi_core::Settings| {
        local(s);
        s.computer.sandbox.workspace = path;
    })
}

#[tokio::test]
async fn a_reply_about_a_file_no_code_opened_gets_one_request_to_open_it() {
    let (_dir, adjust) = workspace_with_notes();
    let (oi, model, computer) = setup(
        [
            ModelReply::text("The file notes.txt has 10 lines."),
            ModelReply::code("python", "print(len(open('notes.txt').readlines()))"),
            ModelReply::text("It has 3 lines."),
            ModelReply::text("never asked"),
        ],
        RecordingComputer::new().with_outputs([RunOutput::text("3\n")]),
        adjust,
    );
    let seen = drive(oi.chat("How many lines does notes.txt have?"), |_| {
        panic!("auto_run")
    })
    .await;
    assert!(seen.complete, "{:?}", seen.error);
    assert_eq!(model.request_count(), 3);
    assert_eq!(computer.runs().len(), 1);
    let requests = model.requests();
    let note = last_user_text(&requests[1]);
    assert!(note.contains("You have not opened notes.txt"), "{note}");
    assert!(!last_user_text(&requests[2]).contains("not opened"));
    // Sent, not kept.
    assert!(
        oi.messages()
            .iter()
            .all(|m| !m.text().contains("not opened"))
    );
}

#[tokio::test]
async fn the_request_to_open_a_file_comes_once_and_only_for_the_local_model() {
    let (_dir, adjust) = workspace_with_notes();
    let (oi, model, _computer) = setup(
        [
            ModelReply::text("notes.txt has 10 lines."),
            ModelReply::text("Still, notes.txt has 10 lines."),
            ModelReply::text("never asked"),
        ],
        RecordingComputer::new(),
        adjust,
    );
    let seen = drive(oi.chat("How many lines does notes.txt have?"), |_| {
        panic!("auto_run")
    })
    .await;
    assert!(seen.complete, "{:?}", seen.error);
    assert_eq!(model.request_count(), 2);

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "a\n").unwrap();
    let path = dir.path().to_path_buf();
    let (oi, model, _computer) = setup(
        [
            ModelReply::text("notes.txt has 10 lines."),
            ModelReply::text("never asked"),
        ],
        RecordingComputer::new(),
        move |s| {
            s.llm.model = "gpt-4o".to_owned();
            s.computer.sandbox.workspace = path;
        },
    );
    let seen = drive(oi.chat("How many lines does notes.txt have?"), |_| {
        panic!("auto_run")
    })
    .await;
    assert!(seen.complete, "{:?}", seen.error);
    assert_eq!(model.request_count(), 1);
}

#[tokio::test]
async fn an_error_whose_cause_is_known_gets_how_to_fix_it_in_the_note_and_the_retry() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let missing = "Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\nFileNotFoundError: [Errno 2] No such file or directory: 'out/numbers.txt'\n";
    let (oi, model, _computer) = setup(
        [
            ModelReply::code("python", "open('out/numbers.txt', 'w').write('1')"),
            ModelReply::text("I could not write the file."),
            ModelReply::text("Sorry."),
        ],
        RecordingComputer::new().with_outputs([RunOutput::text(missing)]),
        move |s: &mut oi_core::Settings| {
            local(s);
            s.computer.sandbox.workspace = path;
        },
    );
    let seen = drive(oi.chat("write 1 into out/numbers.txt"), |_| {
        panic!("auto_run")
    })
    .await;
    assert!(seen.complete, "{:?}", seen.error);
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let expected = "The code failed with this error: FileNotFoundError: [Errno 2] No such file or directory: 'out/numbers.txt'\nThe folder out does not exist yet: create it first (os.makedirs(\"out\", exist_ok=True) in Python, mkdir -p \"out\" in the shell).\nReply with the corrected code in one code block.";
    // The note after the run, and the same note again in the one retry.
    assert_eq!(last_user_text(&requests[1]), expected);
    assert_eq!(last_user_text(&requests[2]), expected);
}

#[tokio::test]
async fn the_same_block_failing_the_same_way_again_ends_the_turn_and_says_so() {
    let replies = (0..6).map(|_| ModelReply::code("python", "print('interpreter'.reverse())"));
    let error = "AttributeError: 'str' object has no attribute 'reverse'";
    let (oi, model, computer) = setup(
        replies,
        RecordingComputer::new().with_outputs(
            (1..=6).map(|i| RunOutput::text(&format!("  File \"<cell {i}>\", line 1\n{error}\n"))),
        ),
        local,
    );
    let seen = drive(oi.chat("Reverse the string 'interpreter'."), |_| {
        panic!("auto_run")
    })
    .await;
    assert!(seen.complete, "{:?}", seen.error);
    // The block, the note with how to fix it, the same block again: stopped.
    assert_eq!(model.request_count(), 2);
    assert_eq!(computer.runs().len(), 2);
    let note = last_user_text(&model.requests()[1]);
    assert!(note.contains("text[::-1]"), "{note}");
    let said = seen
        .chunks
        .iter()
        .filter_map(|c| c.text())
        .collect::<String>();
    assert!(
        said.ends_with(&format!(
            "oi stopped this turn: the model sent code that had already failed, and it failed the same way again ({error}). Send a message to go on."
        )),
        "{said}"
    );
}

#[tokio::test]
async fn a_typed_in_answer_to_a_task_about_a_file_is_told_to_read_the_file() {
    let (_dir, adjust) = workspace_with_notes();
    let (oi, model, _computer) = setup(
        [
            ModelReply::code("python", "print(\"Hello, World!\")"),
            ModelReply::code("python", "print(len(open('notes.txt').readlines()))"),
            ModelReply::text("It has 3 lines."),
        ],
        RecordingComputer::new()
            .with_outputs([RunOutput::text("Hello, World!\n"), RunOutput::text("3\n")]),
        adjust,
    );
    let seen = drive(oi.chat("How many lines does notes.txt have?"), |_| {
        panic!("auto_run")
    })
    .await;
    assert!(seen.complete, "{:?}", seen.error);
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        last_user_text(&requests[1]),
        "That code only printed a value you typed in yourself; it did not open notes.txt. Reply with code that reads notes.txt and does what the task asks."
    );
}

/// The 1.5B model's loop in count-py-files: a block missing a parenthesis, the fixed block
/// (printing the answer), the broken one again, the fixed one again, … for 120 s.
#[tokio::test]
async fn a_loop_of_two_blocks_is_stopped_when_a_block_comes_back() {
    let broken = "print(len([f for f in os.listdir('.') if f.endswith('.py')])";
    let fixed = "print(len([f for f in os.listdir('.') if f.endswith('.py')]))";
    let error = "SyntaxError: '(' was never closed";
    let replies =
        (0..10).map(|i| ModelReply::code("python", if i % 2 == 0 { broken } else { fixed }));
    let outputs = (1..=10).map(|i| {
        if i % 2 == 1 {
            RunOutput::text(&format!("  File \"<cell {i}>\", line 1\n{error}\n"))
        } else {
            RunOutput::text("11\n")
        }
    });
    let (oi, model, computer) = setup(
        replies,
        RecordingComputer::new().with_outputs(outputs),
        local,
    );
    let seen = drive(oi.chat("How many .py files are in this folder?"), |_| {
        panic!("auto_run")
    })
    .await;
    assert!(seen.complete, "{:?}", seen.error);
    // broken, fixed (11), broken again: the same failure as the first, stopped.
    assert_eq!(model.request_count(), 3);
    assert_eq!(computer.runs().len(), 3);
    let said = seen
        .chunks
        .iter()
        .filter_map(|c| c.text())
        .collect::<String>();
    assert!(said.contains("11"), "{said}");
    assert!(said.contains("had already failed"), "{said}");
}

#[tokio::test]
async fn a_block_of_the_turn_printing_the_same_output_again_ends_the_turn() {
    let replies = [
        ModelReply::code("python", "print(6765)"),
        ModelReply::code("python", "x = 1\nprint(x)"),
        ModelReply::code("python", "print(6765)"),
        ModelReply::text("never asked"),
    ];
    let outputs = [
        RunOutput::text("6765\n"),
        RunOutput::text("1\n"),
        RunOutput::text("6765\n"),
    ];
    let (oi, model, computer) = setup(
        replies,
        RecordingComputer::new().with_outputs(outputs),
        local,
    );
    let seen = drive(oi.chat("the 20th Fibonacci number?"), |_| {
        panic!("auto_run")
    })
    .await;
    assert!(seen.complete, "{:?}", seen.error);
    assert_eq!(model.request_count(), 3);
    assert_eq!(computer.runs().len(), 3);
}
