//! The Anthropic Messages wire (`POST /v1/messages`): streamed events and whole messages.

use serde_json::{Value, json};

use crate::reply::{Cut, ToolCall};
use crate::sse::split;

/// Builds the events of one reply.
pub(crate) struct AnthropicWire<'a> {
    /// The message id (`msg_…`).
    pub id: String,
    /// The model name echoed back.
    pub model: &'a str,
}

/// One SSE event with a name.
pub(crate) fn named_event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

impl AnthropicWire<'_> {
    /// The streamed events of an assistant reply, as `(name, data)`, without `message_stop`.
    pub fn events(
        &self,
        text: Option<&str>,
        text_pieces: Option<&[String]>,
        tool_calls: &[ToolCall],
        cut: &Cut,
        (input_tokens, output_tokens): (u64, u64),
    ) -> Vec<(String, Value)> {
        let mut out = vec![
            event(
                "message_start",
                json!({ "message": {
                    "id": self.id, "type": "message", "role": "assistant", "model": self.model,
                    "content": [], "stop_reason": null, "stop_sequence": null,
                    "usage": { "input_tokens": input_tokens, "output_tokens": 0 },
                }}),
            ),
            event("ping", json!({})),
        ];
        let text_parts = match (text_pieces, text) {
            (Some(pieces), _) => pieces.to_vec(),
            (None, Some(text)) => split(text, cut),
            (None, None) => Vec::new(),
        };
        let mut index = 0;
        if !text_parts.is_empty() {
            out.push(event(
                "content_block_start",
                json!({ "index": index, "content_block": { "type": "text", "text": "" } }),
            ));
            for part in text_parts {
                out.push(event(
                    "content_block_delta",
                    json!({ "index": index, "delta": { "type": "text_delta", "text": part } }),
                ));
            }
            out.push(event("content_block_stop", json!({ "index": index })));
            index += 1;
        }
        for (n, call) in tool_calls.iter().enumerate() {
            out.push(event(
                "content_block_start",
                json!({ "index": index, "content_block": {
                    "type": "tool_use", "id": tool_use_id(n), "name": call.name, "input": {},
                }}),
            ));
            let parts = match &call.pieces {
                Some(pieces) => pieces.clone(),
                None => split(&call.arguments, cut),
            };
            for part in parts {
                out.push(event(
                    "content_block_delta",
                    json!({ "index": index, "delta": { "type": "input_json_delta", "partial_json": part } }),
                ));
            }
            out.push(event("content_block_stop", json!({ "index": index })));
            index += 1;
        }
        let stop = if tool_calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        };
        out.push(event(
            "message_delta",
            json!({ "delta": { "stop_reason": stop, "stop_sequence": null }, "usage": { "output_tokens": output_tokens } }),
        ));
        out
    }

    /// The whole message of an assistant reply (non-streaming requests).
    pub fn message(&self, text: Option<&str>, tool_calls: &[ToolCall]) -> Value {
        let mut content: Vec<Value> = text
            .filter(|t| !t.is_empty())
            .map(|t| json!({ "type": "text", "text": t }))
            .into_iter()
            .collect();
        for (n, call) in tool_calls.iter().enumerate() {
            let input: Value = serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}));
            content.push(json!({ "type": "tool_use", "id": tool_use_id(n), "name": call.name, "input": input }));
        }
        let stop = if tool_calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        };
        json!({
            "id": self.id, "type": "message", "role": "assistant", "model": self.model,
            "content": content, "stop_reason": stop, "stop_sequence": null,
            "usage": { "input_tokens": 0, "output_tokens": 0 },
        })
    }
}

/// The final event.
pub(crate) fn message_stop() -> String {
    named_event("message_stop", &json!({ "type": "message_stop" }))
}

/// An Anthropic error body.
pub(crate) fn error_body(kind: &str, message: &str) -> Value {
    json!({ "type": "error", "error": { "type": kind, "message": message } })
}

fn event(name: &str, mut data: Value) -> (String, Value) {
    if let Some(object) = data.as_object_mut() {
        object.insert("type".to_owned(), Value::String(name.to_owned()));
    }
    (name.to_owned(), data)
}

fn tool_use_id(n: usize) -> String {
    format!("toolu_scripted_{}", n + 1)
}
