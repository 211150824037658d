//! Tool-mode streaming: `oi_llm::partial_json::parse_partial` and `ToolCallReader`.
//!
//! - `parse_partial` never panics on any text, and on complete JSON agrees with serde_json.
//! - The code of an `execute` call whose JSON arguments are streamed cut anywhere comes out
//!   whole and in order: the concatenated code deltas equal the code that was sent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oi_core::ModelDelta;
use oi_fuzz::{normalise, split_cuts, str_pieces};
use oi_llm::partial_json::parse_partial;
use oi_llm::tool_stream::ToolCallReader;
use serde_json::{Value, json};

fuzz_target!(|data: &[u8]| {
    let (cuts, payload) = split_cuts(data);
    let Ok(text) = std::str::from_utf8(payload) else {
        return;
    };

    // 1. parse_partial on arbitrary text, and against serde_json on complete JSON.
    let partial = parse_partial(text);
    if let Ok(full) = serde_json::from_str::<Value>(text) {
        assert_eq!(
            partial,
            Some(full),
            "parse_partial disagrees with serde_json"
        );
    }

    // 2. Streamed execute arguments with this text as code.
    let arguments = json!({"language": "python", "code": text}).to_string();
    let mut reader = ToolCallReader::new();
    let mut out = Vec::new();
    for (i, piece) in str_pieces(&arguments, &cuts).into_iter().enumerate() {
        let mut function = json!({ "arguments": piece });
        if i == 0 {
            function["name"] = json!("execute");
        }
        let delta = json!({"tool_calls": [{"index": 0, "function": function}]});
        out.extend(reader.push(&delta));
    }
    out.extend(reader.finish());
    let expected = if text.is_empty() {
        Vec::new()
    } else {
        vec![ModelDelta::Code {
            language: "python".to_owned(),
            code: text.to_owned(),
        }]
    };
    assert_eq!(
        normalise(out),
        expected,
        "streamed code was lost or changed"
    );
});
