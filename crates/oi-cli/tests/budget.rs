//! `--max_budget` through the real `oi` binary and the scripted model server over HTTP: the
//! usage the server reports is priced from the model table, the session stops before the
//! request that would go over, a model of unknown price is refused before anything is sent,
//! and a server that reports no usage is counted with the tokenizer.

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
fn the_session_stops_once_the_reported_usage_spends_the_budget() {
    // gpt-4o: $2.50 per million prompt tokens, $10 per million reply tokens.
    // 400 000 prompt tokens + 1 000 reply tokens = $1.01 > $0.50.
    let s = setup(vec![
        Reply::tool_call("python", "print(6*7)").with_usage(400_000, 1_000),
        Reply::text("never sent"),
    ]);
    let out = oi(
        &s,
        &[
            "-y",
            "--model",
            "gpt-4o",
            "--max_budget",
            "0.5",
            "what is 6*7?",
        ],
        "",
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(stdout.contains("42"), "the code ran: {stdout}");
    let all = format!("{stdout}{stderr}");
    assert!(
        all.contains("Max budget exceeded") && all.contains("$1.0100") && all.contains("$0.5000"),
        "the budget error names what was spent: {all}"
    );
    assert!(!out.status.success(), "a spent budget is a failure");
    let requests = s.server.requests();
    assert_eq!(requests.len(), 1, "nothing sent after the budget was spent");
    assert_eq!(
        requests[0].body["stream_options"],
        serde_json::json!({ "include_usage": true })
    );
}

#[test]
fn a_model_of_unknown_price_is_refused_before_anything_is_sent() {
    let s = setup(vec![Reply::text("never sent")]);
    let out = oi(
        &s,
        &[
            "--model",
            "openai/brand-new-model",
            "--max_budget",
            "1",
            "hello",
        ],
        "",
    );
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        all.contains("does not know what the model 'openai/brand-new-model' costs")
            && all.contains("Unset max_budget"),
        "{all}"
    );
    assert!(!out.status.success());
    assert_eq!(s.server.requests().len(), 0);
}

#[test]
fn without_usage_from_the_server_the_request_is_counted_with_the_tokenizer() {
    // The server ignores stream_options: oi counts the prompt and the reply itself. A long
    // reply at gpt-4o's $10 per million reply tokens spends a tiny budget at once.
    let long_reply = "word ".repeat(2_000);
    let s = setup(vec![Reply::text(long_reply), Reply::text("never sent")]);
    let out = oi(
        &s,
        &["--model", "gpt-4o", "--max_budget", "0.001"],
        "hello\nhello again\n",
    );
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(all.contains("Max budget exceeded"), "{all}");
    assert_eq!(s.server.requests().len(), 1);
}

#[test]
fn local_servers_cost_nothing_so_any_budget_holds() {
    let s = setup(vec![
        Reply::text("one").with_usage(10_000_000, 10_000_000),
        Reply::text("two"),
    ]);
    let base = s.server.base_url();
    let out = oi(
        &s,
        &[
            "--api_base",
            &base,
            "--model",
            "openai/anything",
            "--max_budget",
            "0.01",
        ],
        "hello\nhello again\n",
    );
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(all.contains("two"), "{all}");
    assert!(!all.contains("Max budget"), "{all}");
    assert_eq!(s.server.requests().len(), 2);
}
