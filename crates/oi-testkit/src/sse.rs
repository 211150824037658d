//! The OpenAI chat-completions wire: streamed chunks and whole completions.

use serde_json::{Value, json};

use crate::reply::{Cut, ToolCall};

/// The `created` timestamp of every object (fixed so that snapshots are stable).
const CREATED: u64 = 1_700_000_000;

/// Builds the objects of one reply.
pub(crate) struct Wire<'a> {
    /// The completion id (`chatcmpl-…`).
    pub id: String,
    /// The model name echoed back.
    pub model: &'a str,
}

impl Wire<'_> {
    fn chunk(&self, delta: Value, finish_reason: Option<&str>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.model,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish_reason }],
        })
    }

    /// The streamed chunks of an assistant reply, in order (without `[DONE]`).
    pub fn chunks(
        &self,
        text: Option<&str>,
        text_pieces: Option<&[String]>,
        tool_calls: &[ToolCall],
        cut: &Cut,
    ) -> Vec<Value> {
        let mut out = vec![self.chunk(json!({ "role": "assistant", "content": "" }), None)];
        let text_parts = match (text_pieces, text) {
            (Some(pieces), _) => pieces.to_vec(),
            (None, Some(text)) => split(text, cut),
            (None, None) => Vec::new(),
        };
        for part in text_parts {
            out.push(self.chunk(json!({ "content": part }), None));
        }
        for (index, call) in tool_calls.iter().enumerate() {
            let first = json!({ "tool_calls": [{
                "index": index,
                "id": call_id(index),
                "type": "function",
                "function": { "name": call.name, "arguments": "" },
            }]});
            out.push(self.chunk(first, None));
            let parts = match &call.pieces {
                Some(pieces) => pieces.clone(),
                None => split(&call.arguments, cut),
            };
            for part in parts {
                let delta = json!({ "tool_calls": [{ "index": index, "function": { "arguments": part } }] });
                out.push(self.chunk(delta, None));
            }
        }
        let finish = if tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        out.push(self.chunk(json!({}), Some(finish)));
        out
    }

    /// The last chunk when the request asked for usage (`stream_options.include_usage`): no
    /// choices, only `usage`.
    pub fn usage_chunk(&self, (prompt, reply): (u64, u64)) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.model,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": reply,
                "total_tokens": prompt + reply,
            },
        })
    }

    /// The whole `chat.completion` object of an assistant reply (non-streaming requests).
    pub fn completion(&self, text: Option<&str>, tool_calls: &[ToolCall]) -> Value {
        let mut message = json!({ "role": "assistant", "content": text });
        if !tool_calls.is_empty() {
            let calls: Vec<Value> = tool_calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    json!({
                        "id": call_id(index),
                        "type": "function",
                        "function": { "name": call.name, "arguments": call.arguments },
                    })
                })
                .collect();
            message["tool_calls"] = Value::Array(calls);
        }
        let finish = if tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        json!({
            "id": self.id,
            "object": "chat.completion",
            "created": CREATED,
            "model": self.model,
            "choices": [{ "index": 0, "message": message, "finish_reason": finish }],
            "usage": { "prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0 },
        })
    }
}

/// The id of the tool call at `index`.
fn call_id(index: usize) -> String {
    format!("call_{}", index + 1)
}

/// Cuts `text` as `cut` says (never inside a character).
pub(crate) fn split(text: &str, cut: &Cut) -> Vec<String> {
    match cut {
        Cut::Whole => {
            if text.is_empty() {
                Vec::new()
            } else {
                vec![text.to_owned()]
            }
        }
        Cut::Chars(n) => {
            let n = (*n).max(1);
            let chars: Vec<char> = text.chars().collect();
            chars
                .chunks(n)
                .map(|piece| piece.iter().collect())
                .collect()
        }
    }
}

/// One SSE `data:` event.
pub(crate) fn data_event(payload: &str) -> String {
    format!("data: {payload}\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_by_chars_not_bytes() {
        assert_eq!(split("héllo", &Cut::Chars(2)), vec!["hé", "ll", "o"]);
        assert_eq!(split("", &Cut::Whole), Vec::<String>::new());
        assert_eq!(split("abc", &Cut::Chars(0)), vec!["a", "b", "c"]);
    }
}
