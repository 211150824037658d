//! A hostile model server against the real `oi` binary: a reply that never ends (text, or
//! code that grows forever in small pieces — which used to cost quadratic time), one 16 MiB
//! line, an endless body of empty chunks, on the OpenAI and the Anthropic wire. Each run ends
//! with an error naming the limit and how to raise it, in bounded time and memory (peak RSS
//! read from /proc while it runs), and a session goes on with the next turn.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod hostile;

use std::time::Duration;

use hostile::{Measured, run_measured, setup};
use oi_testkit::{Ending, Reply, Script};

/// Generous for a debug build; the attacks ran for minutes (or forever) before.
const TIME_LIMIT: Duration = Duration::from_secs(60);
const MAX_SECONDS: u64 = 30;
/// Peak memory allowed: the reply limit is 4 MiB; before, oi grew to 1.3 GB in 10 s.
const MAX_RSS_KIB: u64 = 256 * 1024;

fn assert_bounded(out: &Measured) {
    assert!(
        out.elapsed < Duration::from_secs(MAX_SECONDS),
        "took {:?}: {out:?}",
        out.elapsed
    );
    assert!(
        out.peak_rss_kib > 0 && out.peak_rss_kib < MAX_RSS_KIB,
        "peak RSS {} KiB",
        out.peak_rss_kib
    );
    eprintln!(
        "measured: {:?}, peak RSS {} KiB",
        out.elapsed, out.peak_rss_kib
    );
}

fn one_shot(s: &hostile::Setup, base: &str, extra: &[&str]) -> Measured {
    let mut args = vec!["--api_base", base, "--api_key", "k", "--plain"];
    args.extend_from_slice(extra);
    args.push("hi");
    run_measured(s.command(&args), "", TIME_LIMIT)
}

#[test]
fn an_endless_text_reply_stops_at_the_reply_limit() {
    let s = setup();
    let server = s.server(Script::new([
        Reply::text("x".repeat(1000)).ending(Ending::Endless)
    ]));
    let out = one_shot(&s, &server.base_url(), &[]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("more than 4 MiB of text and code")
            && out.stderr.contains("OI_MAX_REPLY_BYTES"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.len() < (4 << 20) + 4096, "{}", out.stdout.len());
    assert!(
        out.stdout.len() > 1 << 20,
        "the reply streamed until the limit"
    );
    assert_bounded(&out);
}

#[test]
fn endless_code_in_small_pieces_stops_at_the_reply_limit_in_linear_time() {
    let s = setup();
    let pieces = [
        "{\"language\": \"python\", \"code\": \"".to_owned(),
        "y".repeat(64),
    ];
    let server = s.server(Script::new([
        Reply::tool_call_pieces("execute", pieces).ending(Ending::Endless)
    ]));
    let out = one_shot(&s, &server.base_url(), &["-y"]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("more than 4 MiB of text and code"),
        "{}",
        out.stderr
    );
    assert!(
        !out.stdout.contains("```output"),
        "code from a reply that never completed ran"
    );
    assert_bounded(&out);
}

#[test]
fn one_16_mib_line_is_refused_at_the_line_limit() {
    let s = setup();
    let server = s.server(Script::new([Reply::text("a".repeat(16 << 20))]));
    let out = one_shot(&s, &server.base_url(), &[]);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("longer than 4 MiB") && out.stderr.contains("OI_MAX_SSE_LINE_BYTES"),
        "{}",
        out.stderr
    );
    assert_bounded(&out);
}

#[test]
fn an_endless_body_without_content_stops_at_the_body_limit() {
    let s = setup();
    let server = s.server(Script::new([
        Reply::text_pieces([""]).ending(Ending::Endless)
    ]));
    let mut command = s.command(&[
        "--api_base",
        &server.base_url(),
        "--api_key",
        "k",
        "--plain",
        "hi",
    ]);
    command.env("OI_MAX_REPLY_BODY_BYTES", "8MiB");
    let out = run_measured(command, "", TIME_LIMIT);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("more than 8 MiB for one reply")
            && out.stderr.contains("OI_MAX_REPLY_BODY_BYTES"),
        "{}",
        out.stderr
    );
    assert_bounded(&out);
}

#[test]
fn an_endless_anthropic_reply_stops_at_the_reply_limit() {
    let s = setup();
    let server = s.server(Script::new([
        Reply::text("x".repeat(1000)).ending(Ending::Endless)
    ]));
    let base = server.base_url();
    let out = run_measured(
        s.command(&[
            "-m",
            "anthropic/claude-scripted",
            "--api_base",
            &base,
            "--plain",
            "hi",
        ]),
        "",
        TIME_LIMIT,
    );
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr.contains("more than 4 MiB of text and code"),
        "{}",
        out.stderr
    );
    assert_eq!(server.requests()[0].path, "/v1/messages");
    assert_bounded(&out);
}

#[test]
fn after_an_endless_reply_the_partial_text_is_kept_and_the_next_turn_works() {
    let s = setup();
    let server = s.server(Script::new([
        Reply::text("x".repeat(1000)).ending(Ending::Endless),
        Reply::text("still here"),
    ]));
    let base = server.base_url();
    let out = run_measured(
        s.command(&["--api_base", &base, "--api_key", "k", "--plain"]),
        "first\nsecond\n",
        TIME_LIMIT,
    );
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(
        out.stderr.contains("more than 4 MiB of text and code"),
        "{}",
        out.stderr
    );
    assert!(
        out.stdout.contains("still here"),
        "{}\n{}",
        out.stderr,
        &out.stdout[out.stdout.len().saturating_sub(300)..]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().unwrap();
    let kept = messages
        .iter()
        .find(|m| m["role"] == "assistant")
        .and_then(|m| m["content"].as_str())
        .unwrap();
    assert!(
        kept.starts_with("xxx") && kept.len() <= 4 << 20,
        "{}",
        kept.len()
    );
    assert_eq!(messages.last().unwrap()["content"], "second");
    assert_bounded(&out);
}

#[test]
fn a_limit_that_is_not_a_size_is_a_clear_error() {
    let s = setup();
    let server = s.server(Script::new([Reply::text("never sent")]));
    let mut command = s.command(&[
        "--api_base",
        &server.base_url(),
        "--api_key",
        "k",
        "--plain",
        "hi",
    ]);
    command.env("OI_MAX_REPLY_BYTES", "lots");
    let out = run_measured(command, "", TIME_LIMIT);
    assert_eq!(out.code, Some(1), "{out:?}");
    assert!(
        out.stderr
            .contains("OI_MAX_REPLY_BYTES is `lots`, which is not a size"),
        "{}",
        out.stderr
    );
    assert!(server.requests().is_empty());
}
