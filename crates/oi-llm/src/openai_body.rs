//! The OpenAI chat-completions wire: the prompt as `messages`, and the JSON body of a request
//! (spec b.9, with temperature always sent).

use oi_core::ModelRequest;
use serde_json::{Value, json};

use crate::convert::Mode;
use crate::prompt::{Part, Prompt, PromptMessage, Speaker, ToolSpec};

/// Stop sequences sent for local models (`"local"` in the model name), as the original.
pub const LOCAL_STOP: [&str; 3] = ["<|assistant|>", "<|end|>", "<|eot_id|>"];

/// The request body for `request`, sent to `model` (the name as the server knows it).
pub fn request_body(request: &ModelRequest, model: &str, mode: Mode) -> Value {
    let prompt = Prompt::build(request, mode);
    openai_body(&prompt, model, request)
}

/// The request body for `prompt`, sent to `model`, with `request`'s sampling settings.
pub fn openai_body(prompt: &Prompt, model: &str, request: &ModelRequest) -> Value {
    let system = Some(prompt.system.as_str()).filter(|s| !s.is_empty());
    let mut body = json!({
        "model": model,
        "messages": openai_messages(system, &prompt.messages),
        "stream": true,
        "temperature": request.llm.temperature,
    });
    if let Some(max_tokens) = request.llm.max_tokens.filter(|t| *t > 0) {
        body["max_tokens"] = json!(max_tokens);
    }
    if !prompt.tools.is_empty() {
        body["tools"] = Value::Array(prompt.tools.iter().map(openai_tool).collect());
    }
    if model.contains("local") {
        body["stop"] = json!(LOCAL_STOP);
    }
    // The usage of a streamed reply comes only when asked for; ask only when it is counted,
    // since older servers refuse the field.
    if request.llm.max_budget.is_some() {
        body["stream_options"] = json!({ "include_usage": true });
    }
    body
}

/// A tool as an OpenAI `tools` entry.
fn openai_tool(tool: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    })
}

/// The conversation as OpenAI chat messages, after the system message if there is one.
pub fn openai_messages(system: Option<&str>, messages: &[PromptMessage]) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    if let Some(system) = system {
        out.push(json!({ "role": "system", "content": system }));
    }
    for message in messages {
        write_message(message, &mut out);
    }
    out
}

fn role(speaker: Speaker) -> &'static str {
    match speaker {
        Speaker::User => "user",
        Speaker::Assistant => "assistant",
    }
}

/// One prompt message as OpenAI messages: tool results become `tool` messages, tool calls an
/// assistant message with `tool_calls`, images a list of content parts.
fn write_message(message: &PromptMessage, out: &mut Vec<Value>) {
    if let Some(text) = message.as_text() {
        out.push(json!({ "role": role(message.speaker), "content": text }));
        return;
    }
    let mut calls = Vec::new();
    let mut content = Vec::new();
    for part in &message.parts {
        match part {
            Part::ToolResult(result) => out.push(json!({
                "role": "tool",
                "tool_call_id": result.call_id,
                "content": result.content,
            })),
            Part::ToolCall(call) => calls.push(json!({
                "id": call.id,
                "type": "function",
                "function": { "name": call.name, "arguments": call.arguments },
            })),
            Part::Text(text) => content.push(json!({ "type": "text", "text": text })),
            Part::Image(image) => content.push(json!({
                "type": "image_url",
                "image_url": { "url": image.url, "detail": "low" },
            })),
        }
    }
    if !calls.is_empty() {
        let text: String = message
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        out.push(json!({ "role": "assistant", "content": text, "tool_calls": calls }));
    } else if !content.is_empty() {
        out.push(json!({ "role": role(message.speaker), "content": content }));
    }
}
