//! The SSE reading of oi-llm, rebuilt from its public parts (`read_events` in
//! crates/oi-llm/src/sse.rs is crate-private): `eventsource_stream` over the body's bytes cut
//! anywhere (even inside a UTF-8 sequence), each `data:` trimmed, `[DONE]` ends, JSON parsed,
//! `choices[0].delta` fed to `ToolCallReader` (tool mode) and its `content` to `TextDecoder`
//! (text mode). Never panics, and the events do not depend on how the bytes were cut.
#![no_main]

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use libfuzzer_sys::fuzz_target;
use oi_fuzz::{byte_pieces, split_cuts};
use oi_llm::text_mode::TextDecoder;
use oi_llm::tool_stream::ToolCallReader;
use serde_json::Value;

/// The events (event, data, id) up to the first error, and whether an error ended them.
fn events(pieces: Vec<Bytes>) -> (Vec<(String, String, String)>, bool) {
    let stream = futures::stream::iter(pieces.into_iter().map(Ok::<Bytes, std::io::Error>));
    futures::executor::block_on(async move {
        let mut events = Box::pin(stream.eventsource());
        let mut out = Vec::new();
        while let Some(event) = events.next().await {
            match event {
                Ok(e) => out.push((e.event, e.data, e.id)),
                Err(_) => return (out, true),
            }
        }
        (out, false)
    })
}

/// What oi does with the events: as `read_events` plus the openai decoder.
fn decode(events: &[(String, String, String)]) {
    let mut tools = ToolCallReader::new();
    let mut text = TextDecoder::new();
    for (_, data, _) in events {
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
    let whole = events(vec![Bytes::copy_from_slice(body)]);
    let cut = events(
        byte_pieces(body, &cuts)
            .into_iter()
            .map(Bytes::copy_from_slice)
            .collect(),
    );
    assert_eq!(
        cut, whole,
        "SSE events depend on how the body is cut: {cuts:?}"
    );
    decode(&whole.0);
});
