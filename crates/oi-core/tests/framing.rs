//! Flag framing against the spec's concrete stream (spec a.4), chunk for chunk. (The
//! confirmation chunk between the code's `end` and the console's `start` is the respond
//! loop's approval request, shown on the wire: see `loop_decisions.rs`.)

#![allow(clippy::unwrap_used)]

use oi_core::framing::{Framer, FramerOptions};
use oi_core::{Chunk, Message};

fn frame(raw: Vec<Chunk>) -> (Vec<serde_json::Value>, Vec<Message>) {
    let mut framer = Framer::new(FramerOptions {
        max_output: 2800,
        add_scrollbars: false,
    });
    let mut messages = vec![Message::user("What's 34/24?")];
    let mut out = Vec::new();
    for chunk in raw {
        out.extend(framer.push(chunk, &mut messages));
    }
    out.extend(framer.close());
    let json = out
        .iter()
        .map(|c| serde_json::to_value(c).unwrap())
        .collect();
    (json, messages)
}

fn spec_raw_turn() -> Vec<Chunk> {
    vec![
        Chunk::assistant_message("Let me"),
        Chunk::assistant_message(" compute that."),
        Chunk::assistant_code("python", "print(34"),
        Chunk::assistant_code("python", " / 24)"),
        Chunk::active_line(Some(1)),
        Chunk::console_output("1.4166666666666667\n"),
        Chunk::active_line(None),
        Chunk::assistant_message(""),
        Chunk::assistant_message("The result is about 1.42."),
    ]
}

#[test]
fn reproduces_the_spec_stream_exactly() {
    let (chunks, messages) = frame(spec_raw_turn());
    let expected: Vec<serde_json::Value> = serde_json::from_str(
        r#"[
{"role": "assistant", "type": "message", "start": true},
{"role": "assistant", "type": "message", "content": "Let me"},
{"role": "assistant", "type": "message", "content": " compute that."},
{"role": "assistant", "type": "message", "end": true},
{"role": "assistant", "type": "code", "format": "python", "start": true},
{"role": "assistant", "type": "code", "format": "python", "content": "print(34"},
{"role": "assistant", "type": "code", "format": "python", "content": " / 24)"},
{"role": "assistant", "type": "code", "format": "python", "end": true},
{"role": "computer", "type": "console", "start": true},
{"role": "computer", "type": "console", "format": "active_line", "content": 1},
{"role": "computer", "type": "console", "format": "output", "content": "1.4166666666666667\n"},
{"role": "computer", "type": "console", "format": "active_line", "content": null},
{"role": "computer", "type": "console", "end": true},
{"role": "assistant", "type": "message", "start": true},
{"role": "assistant", "type": "message", "content": "The result is about 1.42."},
{"role": "assistant", "type": "message", "end": true}
]"#,
    )
    .unwrap();
    assert_eq!(chunks, expected);
    let expected_messages: Vec<Message> = Message::list_from_json(
        r#"[
 {"role": "user", "type": "message", "content": "What's 34/24?"},
 {"role": "assistant", "type": "message", "content": "Let me compute that."},
 {"role": "assistant", "type": "code", "format": "python", "content": "print(34 / 24)"},
 {"role": "computer", "type": "console", "format": "output", "content": "1.4166666666666667\n"},
 {"role": "assistant", "type": "message", "content": "The result is about 1.42."}
]"#,
    )
    .unwrap();
    assert_eq!(messages, expected_messages);
}

#[test]
fn silent_code_still_gets_an_empty_output_message() {
    let raw = vec![
        Chunk::assistant_code("python", "x = 1"),
        Chunk::active_line(Some(1)),
        Chunk::active_line(None),
    ];
    let (_, messages) = frame(raw);
    assert_eq!(messages.last(), Some(&Message::console_output("")));
}

#[test]
fn stored_output_is_truncated_but_streamed_output_is_not() {
    let mut framer = Framer::new(FramerOptions {
        max_output: 5,
        add_scrollbars: false,
    });
    let mut messages = vec![Message::code("python", "print('x'*12)")];
    let out = framer.push(Chunk::console_output("xxxxxxxxxxxx\n"), &mut messages);
    assert_eq!(out[1], Chunk::console_output("xxxxxxxxxxxx\n"));
    let stored = messages.last().unwrap().text().to_owned();
    assert_eq!(
        stored,
        format!("{}xxxx\n", oi_core::truncate::truncation_notice(5, false))
    );
}

#[test]
fn lmc_json_round_trips_and_rejects_unknown_fields() {
    for json in [
        r#"{"role":"computer","type":"console","format":"active_line","content":null}"#,
        r#"{"role":"computer","type":"console","format":"active_line","content":3}"#,
        r#"{"role":"user","start":true}"#,
        r#"{"role":"assistant","type":"code","format":"python","end":true}"#,
        r#"{"role":"computer","type":"code","format":"html","content":"<b>hi</b>","recipient":"user"}"#,
        r#"{"role":"computer","type":"confirmation","format":"execution","content":{"type":"code","format":"python","content":"1"}}"#,
        r#"{"role":"user","type":"image","format":"base64.png","content":"iVBOR"}"#,
    ] {
        let chunk = Chunk::from_json(json).unwrap();
        assert_eq!(chunk.to_json(), json);
    }
    let error =
        Chunk::from_json(r#"{"role":"user","type":"message","content":"x","colour":"red"}"#)
            .unwrap_err();
    assert!(
        error.to_string().contains("unknown field `colour`"),
        "{error}"
    );
    let error =
        Chunk::from_json(r#"{"role":"user","type":"telepathy","content":"x"}"#).unwrap_err();
    assert!(error.to_string().contains("telepathy"), "{error}");
    let error =
        Message::from_json(r#"{"role":"robot","type":"message","content":"x"}"#).unwrap_err();
    assert!(error.to_string().contains("robot"), "{error}");
}
