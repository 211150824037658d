//! The JSON body of a chat-completions request (spec b.9, with temperature always sent).

use oi_core::ModelRequest;
use serde_json::{Value, json};

use crate::capabilities::supports_vision;
use crate::convert::{Mode, to_openai_messages};
use crate::schema::execute_tool;
use crate::trim::trim_messages;

/// Stop sequences sent for local models (`"local"` in the model name), as the original.
pub const LOCAL_STOP: [&str; 3] = ["<|assistant|>", "<|end|>", "<|eot_id|>"];

/// The request body for `request`, sent to `model` (the name as the server knows it).
pub fn request_body(request: &ModelRequest, model: &str, mode: Mode) -> Value {
    let mut messages = to_openai_messages(
        &request.messages,
        &request.templates,
        mode,
        supports_vision(&request.llm),
    );
    if mode == Mode::Text && !request.llm.execution_instructions.is_empty() {
        let system = messages.iter_mut().find(|m| m["role"] == "system");
        if let Some(content) = system.and_then(|m| m.get_mut("content")) {
            if let Some(text) = content.as_str() {
                *content = Value::String(format!("{text}\n{}", request.llm.execution_instructions));
            }
        }
    }
    let messages = trim_messages(messages, &request.llm);
    let mut body = json!({
        "model": model,
        "messages": messages,
        "stream": true,
        "temperature": request.llm.temperature,
    });
    if let Some(max_tokens) = request.llm.max_tokens.filter(|t| *t > 0) {
        body["max_tokens"] = json!(max_tokens);
    }
    if mode == Mode::Tools {
        body["tools"] = json!([execute_tool(&request.languages)]);
    }
    if model.contains("local") {
        body["stop"] = json!(LOCAL_STOP);
    }
    body
}
