//! The JSON body of a Messages request, written from the provider-neutral prompt (spec b.6,
//! trimming b.7), so both wires see the same conversation: the system text becomes the
//! top-level `system`, tool calls become `tool_use` blocks and results `tool_result` blocks
//! with matching ids, images become base64 `image` blocks, and same-speaker neighbours merge
//! (the API wants user and assistant turns to alternate, starting with the user).

use oi_core::ModelRequest;
use serde_json::{Map, Value, json};

use crate::convert::Mode;
use crate::prompt::{Image, Part, Prompt, Speaker, ToolSpec};

/// `max_tokens` when neither the settings nor the capability table give one.
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// The Messages body for `request`, sent to `model`, with `max_tokens` as given.
pub fn messages_body(request: &ModelRequest, model: &str, mode: Mode, max_tokens: u64) -> Value {
    let prompt = Prompt::build(request, mode);
    let mut turns: Vec<(Speaker, Vec<Value>)> = Vec::new();
    for message in &prompt.messages {
        let blocks: Vec<Value> = message.parts.iter().filter_map(block).collect();
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == message.speaker => existing.extend(blocks),
            _ => turns.push((message.speaker, blocks)),
        }
    }
    if turns
        .first()
        .is_some_and(|(speaker, _)| *speaker == Speaker::Assistant)
    {
        turns.insert(0, (Speaker::User, vec![text_block("Continue.")]));
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(speaker, blocks)| {
            let role = match speaker {
                Speaker::User => "user",
                Speaker::Assistant => "assistant",
            };
            json!({ "role": role, "content": content(blocks) })
        })
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": max_tokens,
        "messages": messages,
        "stream": true,
        "temperature": request.llm.temperature,
    });
    if !prompt.system.is_empty() {
        body["system"] = Value::String(prompt.system.clone());
    }
    if !prompt.tools.is_empty() {
        body["tools"] = Value::Array(prompt.tools.iter().map(tool).collect());
    }
    body
}

/// One string block is sent as a plain string, as people write it.
fn content(blocks: Vec<Value>) -> Value {
    if let [only] = blocks.as_slice() {
        if only["type"] == "text" {
            return only["text"].clone();
        }
    }
    Value::Array(blocks)
}

fn text_block(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

/// One part as a content block; blank text is left out.
fn block(part: &Part) -> Option<Value> {
    match part {
        Part::Text(text) => (!text.trim().is_empty()).then(|| text_block(text)),
        Part::Image(image) => Some(image_block(image)),
        Part::ToolCall(call) => {
            let input = serde_json::from_str::<Value>(&call.arguments)
                .ok()
                .filter(Value::is_object)
                .unwrap_or_else(|| json!({ "code": call.arguments }));
            Some(json!({
                "type": "tool_use",
                "id": call.id,
                "name": call.name,
                "input": input,
            }))
        }
        Part::ToolResult(result) => {
            let mut block = Map::new();
            block.insert("type".into(), "tool_result".into());
            block.insert("tool_use_id".into(), result.call_id.clone().into());
            if !result.content.is_empty() {
                block.insert("content".into(), result.content.clone().into());
            }
            Some(Value::Object(block))
        }
    }
}

/// A data URL as a base64 source; any other URL as a URL source.
fn image_block(image: &Image) -> Value {
    match image.data() {
        Some((media_type, data)) => json!({
            "type": "image",
            "source": { "type": "base64", "media_type": media_type, "data": data },
        }),
        None => json!({ "type": "image", "source": { "type": "url", "url": image.url } }),
    }
}

/// A tool as an Anthropic tool.
fn tool(tool: &ToolSpec) -> Value {
    json!({
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.parameters,
    })
}
