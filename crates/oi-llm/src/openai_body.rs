//! The OpenAI chat-completions wire: the prompt as `messages`, and the JSON body of a request
//! (spec b.9, with temperature always sent).
//!
//! The body is a view that borrows the prompt and is written straight to JSON text
//! ([`openai_body_json`]): no `serde_json::Value` tree of the conversation is built for a
//! request (that tree, a map and a copy of every string per message, cost more than the rest
//! of a long conversation's turn). [`openai_body`] gives the same body as a `Value`, to read.

use oi_core::ModelRequest;
use serde::Serialize;
use serde_json::Value;

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
    serde_json::to_value(body(prompt, model, request, true)).unwrap_or(Value::Null)
}

/// [`openai_body`] as the JSON text that is sent, written without building a `Value`;
/// without `stream_options` when `ask_usage` is false (for a server that refused it).
pub fn openai_body_json(
    prompt: &Prompt,
    model: &str,
    request: &ModelRequest,
    ask_usage: bool,
) -> Vec<u8> {
    // Writing borrowed strings and numbers into a Vec cannot fail.
    serde_json::to_vec(&body(prompt, model, request, ask_usage)).unwrap_or_default()
}

/// The conversation as OpenAI chat messages, after the system message if there is one.
pub fn openai_messages(system: Option<&str>, messages: &[PromptMessage]) -> Vec<Value> {
    wire_messages(system, messages)
        .iter()
        .map(|message| serde_json::to_value(message).unwrap_or(Value::Null))
        .collect()
}

/// A request body, borrowing the prompt.
#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    stream: bool,
    temperature: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stop: Option<[&'static str; 3]>,
    /// The usage of a streamed reply comes only when asked for. Always asked (users see
    /// tokens and cost); a server that refuses the field is asked again without it
    /// ([`crate::openai`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

fn body<'a>(
    prompt: &'a Prompt,
    model: &'a str,
    request: &ModelRequest,
    ask_usage: bool,
) -> Body<'a> {
    let system = Some(prompt.system.as_str()).filter(|s| !s.is_empty());
    Body {
        model,
        messages: wire_messages(system, &prompt.messages),
        stream: true,
        temperature: request.llm.temperature,
        max_tokens: request.llm.max_tokens.filter(|t| *t > 0),
        tools: prompt.tools.iter().map(wire_tool).collect(),
        stop: model.contains("local").then_some(LOCAL_STOP),
        stream_options: ask_usage.then_some(StreamOptions {
            include_usage: true,
        }),
    }
}

/// A tool as an OpenAI `tools` entry.
#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionSpec<'a>,
}

#[derive(Serialize)]
struct WireFunctionSpec<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

fn wire_tool(tool: &ToolSpec) -> WireTool<'_> {
    WireTool {
        kind: "function",
        function: WireFunctionSpec {
            name: &tool.name,
            description: &tool.description,
            parameters: &tool.parameters,
        },
    }
}

/// One OpenAI chat message.
#[derive(Serialize)]
#[serde(untagged)]
enum WireMessage<'a> {
    /// `{"role", "content": "…"}`.
    Text {
        role: &'static str,
        content: &'a str,
    },
    /// A tool result: `{"role": "tool", "tool_call_id", "content"}`.
    ToolResult {
        role: &'static str,
        tool_call_id: &'a str,
        content: &'a str,
    },
    /// The assistant's tool calls, with its text.
    Calls {
        role: &'static str,
        content: String,
        tool_calls: Vec<WireCall<'a>>,
    },
    /// Text and images as content parts.
    Parts {
        role: &'static str,
        content: Vec<WirePart<'a>>,
    },
}

#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum WirePart<'a> {
    #[serde(rename = "text")]
    Text { text: &'a str },
    #[serde(rename = "image_url")]
    Image { image_url: WireImage<'a> },
}

#[derive(Serialize)]
struct WireImage<'a> {
    url: &'a str,
    detail: &'static str,
}

fn wire_messages<'a>(
    system: Option<&'a str>,
    messages: &'a [PromptMessage],
) -> Vec<WireMessage<'a>> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    if let Some(system) = system {
        out.push(WireMessage::Text {
            role: "system",
            content: system,
        });
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
fn write_message<'a>(message: &'a PromptMessage, out: &mut Vec<WireMessage<'a>>) {
    if let Some(text) = message.as_text() {
        out.push(WireMessage::Text {
            role: role(message.speaker),
            content: text,
        });
        return;
    }
    let mut calls = Vec::new();
    let mut content = Vec::new();
    for part in &message.parts {
        match part {
            Part::ToolResult(result) => out.push(WireMessage::ToolResult {
                role: "tool",
                tool_call_id: &result.call_id,
                content: &result.content,
            }),
            Part::ToolCall(call) => calls.push(WireCall {
                id: &call.id,
                kind: "function",
                function: WireFunction {
                    name: &call.name,
                    arguments: &call.arguments,
                },
            }),
            Part::Text(text) => content.push(WirePart::Text { text }),
            Part::Image(image) => content.push(WirePart::Image {
                image_url: WireImage {
                    url: &image.url,
                    detail: "low",
                },
            }),
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
        out.push(WireMessage::Calls {
            role: "assistant",
            content: text,
            tool_calls: calls,
        });
    } else if !content.is_empty() {
        out.push(WireMessage::Parts {
            role: role(message.speaker),
            content,
        });
    }
}
