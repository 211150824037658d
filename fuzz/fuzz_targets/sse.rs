//! The SSE reading of oi-llm, rebuilt from its public parts (`read_events` in
//! crates/oi-llm/src/sse.rs is crate-private): `oi_llm::sse_events::EventParser` over the body's
//! bytes cut anywhere (even inside a line, a `\r\n` or a UTF-8 sequence), each `data:`
//! trimmed, `[DONE]` ends, JSON parsed, `choices[0].delta` fed to `ToolCallReader` (tool mode)
//! and its `content` to `TextDecoder` (text mode). Never panics, the events do not depend on
//! how the bytes were cut, and no event or held line is longer than the parser's limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oi_fuzz::{byte_pieces, split_cuts};
use oi_llm::sse_events::{EventParser, SseError};
use oi_llm::text_mode::TextDecoder;
use oi_llm::tool_stream::ToolCallReader;
use serde_json::Value;

/// A small line limit, so that the fuzzer reaches it.
const MAX_LINE: usize = 256;

/// The events (event, data) up to the first error, and the error.
fn events(pieces: &[&[u8]]) -> (Vec<(String, String)>, Option<SseError>) {
    let mut parser = EventParser::new(MAX_LINE);
    let mut found = Vec::new();
    let mut error = None;
    for piece in pieces {
        error = parser.push_into(piece, &mut found).err();
        assert!(parser.held_bytes() <= 2 * MAX_LINE, "held over the limit");
        if error.is_some() {
            break;
        }
    }
    let out = found
        .into_iter()
        .inspect(|event| assert!(event.data.len() <= MAX_LINE, "an event over the limit"))
        .map(|event| (event.event, event.data))
        .collect();
    (out, error)
}

/// What oi does with the events: as `read_events` plus the openai decoder.
fn decode(events: &[(String, String)]) {
    let mut tools = ToolCallReader::new();
    let mut text = TextDecoder::new();
    for (_, data) in events {
        let data = data.trim();
        if data.is_empty() {
            continue;
        }
        if data == "[DONE]" {
            break;
        }
        let Ok(chunk) = serde_json::from_str::<Value>(data) else {
            break;
        };
        let Some(delta) = chunk.pointer("/choices/0/delta") else {
            continue;
        };
        let _ = tools.push(delta);
        if let Some(content) = delta.get("content").and_then(Value::as_str) {
            let _ = text.push(content);
        }
    }
    let _ = tools.finish();
    let _ = text.finish();
}

fuzz_target!(|data: &[u8]| {
    let (cuts, body) = split_cuts(data);
    let whole = events(&[body]);
    let cut = events(&byte_pieces(body, &cuts));
    assert_eq!(
        cut, whole,
        "SSE events depend on how the body is cut: {cuts:?}"
    );
    decode(&whole.0);
});
