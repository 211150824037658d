//! The JSON body of a Messages request, built from the OpenAI-shaped conversion (spec b.6,
//! trimming b.7) so both wires see the same conversation: the system message becomes the
//! top-level `system`, tool calls become `tool_use` blocks and outputs `tool_result` blocks
//! with matching ids, images become base64 `image` blocks, and same-role neighbours merge
//! (the API wants user and assistant turns to alternate, starting with the user).

use oi_core::ModelRequest;
use serde_json::{Map, Value, json};

use crate::convert::Mode;
use crate::request::request_body;

/// `max_tokens` when neither the settings nor the capability table give one.
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// The Messages body for `request`, sent to `model`, with `max_tokens` as given.
pub fn messages_body(request: &ModelRequest, model: &str, mode: Mode, max_tokens: u64) -> Value {
    let openai = request_body(request, model, mode);
    let mut system = Vec::new();
    let mut turns: Vec<(String, Vec<Value>)> = Vec::new();
    for message in openai["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or("user");
        if role == "system" {
            if let Some(text) = message["content"].as_str().filter(|t| !t.is_empty()) {
                system.push(text.to_owned());
            }
            continue;
        }
        let (role, blocks) = blocks(role, message);
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role.to_owned(), blocks)),
        }
    }
    if turns.first().is_some_and(|(role, _)| role == "assistant") {
        turns.insert(0, ("user".to_owned(), vec![text_block("Continue.")]));
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, blocks)| json!({ "role": role, "content": content(blocks) }))
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": max_tokens,
        "messages": messages,
        "stream": true,
        "temperature": request.llm.temperature,
    });
    if !system.is_empty() {
        body["system"] = Value::String(system.join("\n\n"));
    }
    if let Some(tools) = openai["tools"].as_array() {
        let tools: Vec<Value> = tools.iter().map(tool).collect();
        body["tools"] = Value::Array(tools);
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

/// The role and content blocks of one OpenAI-shaped message.
fn blocks(role: &str, message: &Value) -> (&'static str, Vec<Value>) {
    let mut out = Vec::new();
    match role {
        "tool" => {
            let mut result = Map::new();
            result.insert("type".into(), "tool_result".into());
            result.insert("tool_use_id".into(), message["tool_call_id"].clone());
            if let Some(text) = message["content"].as_str().filter(|t| !t.is_empty()) {
                result.insert("content".into(), text.into());
            }
            ("user", vec![Value::Object(result)])
        }
        "assistant" => {
            push_content(&message["content"], &mut out);
            for call in message["tool_calls"].as_array().into_iter().flatten() {
                let arguments = call["function"]["arguments"].as_str().unwrap_or("");
                let input = serde_json::from_str::<Value>(arguments)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({ "code": arguments }));
                out.push(json!({
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "input": input,
                }));
            }
            ("assistant", out)
        }
        _ => {
            push_content(&message["content"], &mut out);
            ("user", out)
        }
    }
}

fn push_content(content: &Value, out: &mut Vec<Value>) {
    match content {
        Value::String(text) if !text.trim().is_empty() => out.push(text_block(text)),
        Value::Array(parts) => {
            for part in parts {
                match part["type"].as_str() {
                    Some("text") => {
                        if let Some(text) = part["text"].as_str().filter(|t| !t.trim().is_empty()) {
                            out.push(text_block(text));
                        }
                    }
                    Some("image_url") => {
                        if let Some(url) = part["image_url"]["url"].as_str() {
                            out.push(image_block(url));
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// A data URL as a base64 source; any other URL as a URL source.
fn image_block(url: &str) -> Value {
    let parsed = url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"));
    match parsed {
        Some((media_type, data)) => json!({
            "type": "image",
            "source": { "type": "base64", "media_type": media_type, "data": data },
        }),
        None => json!({ "type": "image", "source": { "type": "url", "url": url } }),
    }
}

/// An OpenAI `tools` entry as an Anthropic tool.
fn tool(openai: &Value) -> Value {
    let function = &openai["function"];
    json!({
        "name": function["name"],
        "description": function["description"],
        "input_schema": function["parameters"],
    })
}
