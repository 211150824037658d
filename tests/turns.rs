//! Whole turns through the real core, provider and computer, against the scripted model over
//! real HTTP. Each scenario snapshots the chunk stream and the stored conversation.

mod common;

use common::{drain, json_lines, setup, stored};
use oi_core::{ApprovalRequest, Message};
use oi_testkit::{Reply, Script};

fn approve(request: ApprovalRequest) {
    request.approve();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_reply() {
    let (server, oi) = setup(
        Script::new([Reply::text("Hello, World!").chunked(3)]),
        true,
        |_| {},
    )
    .await;
    let chunks = drain(
        oi.chat("Please reply with just the words Hello, World!"),
        approve,
    )
    .await;
    insta::assert_snapshot!("plain_reply_chunks", common::wire(&chunks));
    let turn_messages = &oi.messages()[1..];
    assert_eq!(turn_messages, [Message::assistant("Hello, World!")]);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_code_block_tool_mode() {
    let script = Script::new([
        Reply::tool_call("python", "print(239023*79043)")
            .with_text_before("Let me compute that.")
            .chunked(3),
        Reply::text("The result is 18893094989.").chunked(5),
    ]);
    let (server, oi) = setup(script, true, |_| {}).await;
    let chunks = drain(oi.chat("compute 239023*79043"), approve).await;
    insta::assert_snapshot!("tool_mode_chunks", common::wire(&chunks));
    insta::assert_snapshot!("tool_mode_messages", stored(&oi));
    insta::assert_snapshot!(
        "tool_mode_second_request",
        common::sent_messages(&server, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_code_block_text_mode() {
    let script = Script::new([
        Reply::text(
            "Let me compute that.\n```python\nprint(239023*79043)\n```\nIgnored after the block.",
        )
        .chunked(2),
        Reply::text("The result is 18893094989.").chunked(5),
    ]);
    let (server, oi) = setup(script, false, |_| {}).await;
    let chunks = drain(oi.chat("compute 239023*79043"), approve).await;
    insta::assert_snapshot!("text_mode_chunks", common::wire(&chunks));
    insta::assert_snapshot!("text_mode_messages", stored(&oi));
    insta::assert_snapshot!(
        "text_mode_second_request",
        common::sent_messages(&server, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_approve() {
    let script = Script::new([
        Reply::tool_call("python", "print('ran')"),
        Reply::text("Done."),
    ]);
    let (_server, oi) = setup(script, true, |s| s.auto_run = false).await;
    let chunks = drain(oi.chat("run something"), |turn| turn.approve()).await;
    insta::assert_snapshot!("approve_chunks", common::wire(&chunks));
    insta::assert_snapshot!("approve_messages", stored(&oi));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_decline() {
    let script = Script::new([
        Reply::tool_call("python", "print('ran')"),
        Reply::text("never asked"),
    ]);
    let (server, oi) = setup(script, true, |s| s.auto_run = false).await;
    let chunks = drain(oi.chat("run something"), ApprovalRequest::decline).await;
    insta::assert_snapshot!("decline_chunks", common::wire(&chunks));
    insta::assert_snapshot!("decline_messages", stored(&oi));
    assert_eq!(server.requests().len(), 1, "a declined block ends the turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_edit_runs_the_edited_code() {
    let script = Script::new([
        Reply::tool_call("python", "print('original')"),
        Reply::text("Done."),
    ]);
    let (_server, oi) = setup(script, true, |s| s.auto_run = false).await;
    drain(oi.chat("run something"), |turn| {
        turn.edit("print('edited')")
    })
    .await;
    let messages = oi.messages();
    assert_eq!(messages[1], Message::code("python", "print('edited')"));
    assert_eq!(messages[2], Message::console_output("edited\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loop_mode_goes_on_until_a_breaker() {
    let script = Script::new([
        Reply::text("Working on it."),
        Reply::text("The task is done."),
    ]);
    let (server, oi) = setup(script, true, |s| s.loop_mode = true).await;
    let chunks = drain(oi.chat("do the task"), approve).await;
    insta::assert_snapshot!("loop_chunks", common::wire(&chunks));
    insta::assert_snapshot!("loop_messages", stored(&oi));
    insta::assert_snapshot!("loop_second_request", common::sent_messages(&server, 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_language_twice_ends_the_turn() {
    let script = Script::new([
        Reply::tool_call("cobol", "DISPLAY 'HI'."),
        Reply::tool_call("cobol", "DISPLAY 'HI'."),
        Reply::text("never asked"),
    ]);
    let (server, oi) = setup(script, true, |_| {}).await;
    let chunks = drain(oi.chat("say hi in cobol"), approve).await;
    insta::assert_snapshot!("unsupported_chunks", common::wire(&chunks));
    insta::assert_snapshot!("unsupported_messages", stored(&oi));
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn empty_code_is_reported_to_the_model() {
    let script = Script::new([Reply::tool_call("python", "  \n"), Reply::text("Sorry.")]);
    let (_server, oi) = setup(script, true, |_| {}).await;
    let chunks = drain(oi.chat("run nothing"), approve).await;
    insta::assert_snapshot!("empty_code_chunks", common::wire(&chunks));
    insta::assert_snapshot!("empty_code_messages", stored(&oi));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_output_is_truncated_to_max_output() {
    let script = Script::new([
        Reply::tool_call("python", "print('ab' * 40)"),
        Reply::text("Long."),
    ]);
    let (_server, oi) = setup(script, true, |s| s.max_output = 20).await;
    let chunks = drain(oi.chat("print a lot"), approve).await;
    let streamed: String = chunks
        .iter()
        .filter(|c| c.has_format("output"))
        .filter_map(|c| c.text())
        .collect();
    assert_eq!(
        streamed,
        format!("{}\n", "ab".repeat(40)),
        "streamed output is whole"
    );
    insta::assert_snapshot!("truncated_messages", stored(&oi));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hallucinated_code_is_repaired_before_running() {
    let cases = [
        ("10+12executeexecute\n", "22\n"),
        (
            "  {\n  \"language\": \"python\",\n  \"code\": \"10+12\"\n}  ",
            "22\n",
        ),
        (
            "functions.execute({\"language\": \"python\", \"code\": \"10+12\"})",
            "22\n",
        ),
        (
            "{language: \"python\", code: \"print('hello')\" }",
            "hello\n",
        ),
    ];
    let script = Script::new(cases.iter().map(|_| Reply::text("ok")));
    let (server, oi) = setup(script, true, |_| {}).await;
    let mut repaired = Vec::new();
    for (code, expected) in cases {
        oi.set_messages(vec![Message::user("hi"), Message::code("python", code)]);
        drain(oi.respond(), approve).await;
        let messages = oi.messages();
        assert_eq!(
            messages[2],
            Message::console_output(expected),
            "for {code:?}"
        );
        repaired.push(messages[1].clone());
    }
    insta::assert_snapshot!("hallucination_repaired_code", json_lines(&repaired));
    assert_eq!(
        server.requests().len(),
        4,
        "the model is asked only after the code ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_blocks_become_messages() {
    let script = Script::new([
        Reply::tool_call("markdown", "# Plan\n1. compute"),
        Reply::text("Now computing."),
    ]);
    let (_server, oi) = setup(script, true, |_| {}).await;
    drain(oi.chat("plan it"), approve).await;
    let messages = oi.messages();
    assert_eq!(
        messages[1..],
        [
            Message::assistant("```\n# Plan\n1. compute\n```"),
            Message::assistant("Now computing.")
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_model_is_a_clear_error_and_keeps_the_conversation() {
    let (server, oi) = setup(Script::new([]), true, |_| {}).await;
    let base = server.base_url();
    drop(server);
    let mut turn = oi.chat("hello?");
    let mut error = None;
    while let Some(event) = futures::StreamExt::next(&mut turn).await {
        if let oi_core::TurnEvent::Error(e) = event {
            error = Some(e.to_string());
        }
    }
    let error = error.expect("an error");
    assert!(
        error.contains("could not reach the model server"),
        "{error}"
    );
    assert!(error.contains(base.trim_end_matches("/v1")), "{error}");
    assert_eq!(oi.messages(), [Message::user("hello?")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_turn_stops_running_code() {
    let script = Script::new([
        Reply::tool_call(
            "python",
            "import time\nprint('start', flush=True)\ntime.sleep(600)",
        ),
        Reply::text("x"),
    ]);
    let (_server, oi) = setup(script, true, |_| {}).await;
    let mut turn = oi.chat("sleep");
    let started = std::time::Instant::now();
    let mut seen = String::new();
    while let Some(event) = futures::StreamExt::next(&mut turn).await {
        let oi_core::TurnEvent::Chunk(chunk) = event else {
            continue;
        };
        if chunk.has_format("output") {
            seen.push_str(chunk.text().unwrap_or(""));
        }
        if seen.contains("start") {
            break;
        }
    }
    assert!(seen.contains("start"), "the code started: {seen:?}");
    drop(turn);
    let policy = oi.settings().computer;
    let out = oi.computer().run("python", "print('next')", &policy);
    let collected: Vec<_> = futures::StreamExt::collect(out).await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "stopped promptly"
    );
    let text: String = collected
        .iter()
        .filter_map(|o| o.content.as_text().map(str::to_owned))
        .collect();
    assert!(text.contains("next"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hard_deny_holds_even_with_auto_run() {
    // Harmless if it ever ran: the device does not exist.
    let code = "mkfs.ext4 /dev/oi-test-no-such-device";
    let script = Script::new([
        Reply::tool_call("shell", code),
        Reply::tool_call("shell", code),
        Reply::text("never asked"),
    ]);
    let (server, oi) = setup(script, true, |s| s.auto_run = true).await;
    let chunks = drain(oi.chat("format something"), approve).await;
    assert!(
        chunks
            .iter()
            .all(|c| c.kind != Some(oi_core::Kind::Confirmation))
    );
    insta::assert_snapshot!("hard_deny_messages", stored(&oi));
    assert_eq!(
        server.requests().len(),
        2,
        "the same blocked code twice ends the turn"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_rules_skip_the_question_and_deny_rules_win() {
    let script = Script::new([
        Reply::tool_call("shell", "echo allowed"),
        Reply::tool_call("shell", "echo denied-by-rule"),
        Reply::text("ok"),
    ]);
    let (_server, oi) = setup(script, true, |s| {
        s.auto_run = false;
        s.allow = vec!["echo ".into()];
        s.deny = vec!["denied-by-rule".into()];
    })
    .await;
    let chunks = drain(oi.chat("echo things"), |_| {
        panic!("nothing should be asked")
    })
    .await;
    assert!(
        chunks
            .iter()
            .all(|c| c.kind != Some(oi_core::Kind::Confirmation))
    );
    let messages = oi.messages();
    assert_eq!(messages[2], Message::console_output("allowed\n"));
    assert!(
        messages[4]
            .text()
            .contains("matches the deny rule `denied-by-rule`"),
        "{:?}",
        messages[4]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_run_runs_nothing_even_with_auto_run() {
    let script = Script::new([
        Reply::tool_call("python", "print('ran')"),
        Reply::tool_call("python", "print('ran')"),
        Reply::text("x"),
    ]);
    let (_server, oi) = setup(script, true, |s| {
        s.auto_run = true;
        s.approval_policy = oi_core::ApprovalPolicy::NeverRun;
    })
    .await;
    drain(oi.chat("run"), approve).await;
    let outputs: Vec<String> = oi
        .messages()
        .iter()
        .filter(|m| m.kind == oi_core::Kind::Console)
        .map(|m| m.text().to_owned())
        .collect();
    assert_eq!(
        outputs,
        vec!["oi did not run this code: the approval policy is never-run."; 2]
    );
}
