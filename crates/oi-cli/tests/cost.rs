//! Cost that users see, through the real `oi` binary and the scripted model server over
//! HTTP reporting usage: the line `oi -v` prints after a turn, `%tokens` and `%info` with the
//! last turn's and the session's tokens and cost, and a model of unknown price said to be so.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod oi_common;
use oi_common::{OpenAiEndpoint as Setup, text};
use oi_testkit::Reply;

fn setup(replies: Vec<Reply>) -> Setup {
    Setup::start(replies)
}

fn oi(setup: &Setup, args: &[&str], stdin: &str) -> std::process::Output {
    setup.oi(args, stdin)
}

#[test]
fn verbose_prints_the_turns_tokens_and_cost_without_a_budget() {
    // gpt-4o: $2.50 per million prompt tokens, $10 per million reply tokens.
    // 2 200 prompt + 110 reply tokens = $0.0055 + $0.0011.
    let s = setup(vec![
        Reply::tool_call("python", "print(6*7)").with_usage(1_000, 100),
        Reply::text("It is 42.").with_usage(1_200, 10),
    ]);
    let out = oi(&s, &["-v", "-y", "--model", "gpt-4o", "what is 6*7?"], "");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("42"), "{stdout}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("[usage]"))
        .unwrap_or_else(|| panic!("no usage line: {stderr}"));
    assert_eq!(
        line,
        "[usage] this turn: 2 requests, 2200 prompt + 110 reply tokens, $0.0066; \
         this session: 2 requests, 2200 prompt + 110 reply tokens, $0.0066"
    );
    // Without max_budget, the usage was asked for all the same.
    for request in s.server.requests() {
        assert_eq!(
            request.body.pointer("/stream_options/include_usage"),
            Some(&serde_json::Value::Bool(true))
        );
    }
}

#[test]
fn without_verbose_no_usage_line_is_printed() {
    let s = setup(vec![Reply::text("Hi.").with_usage(10, 2)]);
    let out = oi(&s, &["-y", "--model", "gpt-4o", "hello"], "");
    assert!(
        !text(&out.stderr).contains("[usage]"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn an_unknown_price_is_said_to_be_unknown_with_its_tokens() {
    let s = setup(vec![Reply::text("Hi.").with_usage(321, 7)]);
    let out = oi(
        &s,
        &["-v", "-y", "--model", "openai/mystery-model", "hello"],
        "",
    );
    let stderr = text(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("[usage]"))
        .unwrap_or_else(|| panic!("no usage line: {stderr}"));
    assert!(
        line.starts_with("[usage] this turn: 1 request, 321 prompt + 7 reply tokens, cost unknown"),
        "{line}"
    );
}

#[test]
fn tokens_and_info_show_the_last_turn_and_the_session() {
    let s = setup(vec![
        Reply::text("One.").with_usage(400, 20),
        Reply::text("Two.").with_usage(500, 30),
    ]);
    let out = oi(
        &s,
        &["-y", "--model", "gpt-4o"],
        "first\nsecond\n%tokens\n%info\n",
    );
    let stdout = text(&out.stdout);
    // The last turn: 500 * 2.5e-6 + 30 * 1e-5 = $0.00155; the session: 900 + 50.
    assert!(
        stdout.contains("Last turn: 1 request, 500 prompt + 30 reply tokens, $0.0015"),
        "{stdout}"
    );
    assert!(
        stdout.contains("This session: 2 requests, 900 prompt + 50 reply tokens, $0.0027"),
        "{stdout}"
    );
    assert_eq!(
        stdout.matches("This session: 2 requests").count(),
        2,
        "%tokens and %info both say it: {stdout}"
    );
}
