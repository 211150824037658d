//! The soak's model: a scripted OpenAI-compatible server that answers what each client asks.
//!
//! A soak message reads `soak KIND NONCE [ARGS…]`; the reply depends on the kind, and every
//! answer names the nonce, so a client can tell its answer from anything else it receives.

use oi_testkit::{Ending, Reply, Script};
use serde_json::Value;

/// Lines printed by the flood (each 1 000 characters with its newline).
pub const FLOOD_LINES: usize = 300;

/// The slow code: 20 ticks, 50 ms apart.
const TICKS: &str =
    "import time\nfor i in range(20):\n    print('tick', i, flush=True)\n    time.sleep(0.05)";

/// The code that runs silently for a while (a client closes while it runs).
pub const NAP: &str = "import time\ntime.sleep(2)";

/// The code that waits (for a `stop`).
const SLEEP: &str = "print('sleeping', flush=True)\nimport time\ntime.sleep(30)";

/// The answer to `soak text NONCE`: about 20 pieces of 4 characters.
pub fn text_answer(nonce: &str) -> String {
    format!("answer {nonce}: the quick brown fox jumps over the lazy dog.")
}

/// The code a compute turn runs.
pub fn compute_code(a: u64, b: u64) -> String {
    format!("print({a}*{b})")
}

/// The final answer of a compute turn.
pub fn compute_answer(nonce: &str, a: u64, b: u64) -> String {
    format!("result {nonce} {}", a * b)
}

/// The flood's code: 300 numbered lines of 1 000 characters.
pub fn flood_code() -> String {
    format!("for i in range({FLOOD_LINES}):\n    print('%06d' % i + 'x' * 993)")
}

/// What the flood prints.
pub fn flood_output() -> String {
    (0..FLOOD_LINES)
        .map(|i| format!("{i:06}{}\n", "x".repeat(993)))
        .collect()
}

/// The code an approval turn asks to run, and what it prints.
pub fn approve_code(nonce: &str) -> String {
    format!("print('approved-{nonce}')")
}

/// The final answer after code of `kind` ran.
pub fn after_code(kind: &str, nonce: &str) -> String {
    format!("{kind} done {nonce}")
}

/// The soak message of `kind`, with its nonce and arguments.
pub fn message(kind: &str, nonce: &str, args: &str) -> String {
    format!("soak {kind} {nonce} {args}").trim_end().to_owned()
}

/// The text of the last user message of a chat request, and whether code output follows it.
fn last_user(body: &Value) -> (String, bool) {
    let Some(messages) = body["messages"].as_array() else {
        return (String::new(), false);
    };
    let after_code = messages.last().is_some_and(|m| m["role"] == "tool");
    let text = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    (text, after_code)
}

/// The reply to one request.
fn reply(body: &Value) -> Reply {
    let (text, ran_code) = last_user(body);
    let words: Vec<&str> = text.split_whitespace().collect();
    let (kind, nonce) = match words.as_slice() {
        ["soak", kind, nonce, ..] => (*kind, *nonce),
        _ => return Reply::text("I only speak soak."),
    };
    let number = |i: usize| {
        words
            .get(i)
            .and_then(|w| w.parse::<u64>().ok())
            .unwrap_or(1)
    };
    if ran_code {
        return match kind {
            "compute" => Reply::text(compute_answer(nonce, number(3), number(4))).chunked(6),
            _ => Reply::text(after_code(kind, nonce)).chunked(6),
        };
    }
    match kind {
        "text" => Reply::text(text_answer(nonce)).chunked(4),
        "slowtext" => Reply::text(text_answer(nonce))
            .chunked(4)
            .ending(Ending::StallAfter(5, std::time::Duration::from_millis(800))),
        "compute" => Reply::tool_call("python", &compute_code(number(3), number(4))),
        "sleep" => Reply::tool_call("python", SLEEP),
        "nap" => Reply::tool_call("python", NAP),
        "ticks" => Reply::tool_call("python", TICKS),
        "flood" => Reply::tool_call("python", &flood_code()),
        "approve" => Reply::tool_call("python", &approve_code(nonce)),
        "fault400" => Reply::status(
            400,
            r#"{"error": {"message": "soak: a model error", "type": "invalid_request_error"}}"#,
        ),
        "faultdrop" => Reply::text(text_answer(nonce))
            .chunked(4)
            .ending(Ending::DropAfter(4)),
        _ => Reply::text(format!("unknown soak kind {kind}")),
    }
}

/// The soak's script: replies computed from each request, requests not kept.
pub fn script() -> Script {
    Script::responder(reply).without_recording()
}
