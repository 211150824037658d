//! LMC history → the provider-neutral prompt messages (spec b.6, `convert_to_openai_messages`
//! plus the tool-mode `process_messages`), with the listed bugs fixed: text-mode merging always
//! uses `"\n"`, and unknown kinds or console formats are skipped instead of crashing.

use oi_core::tools::called;
use oi_core::{Kind, Message, OfferedTool, OutputSender, Recipient, Role, Templates};

use crate::images::{IMAGE_DROPPED_NOTE, image_parts};
pub use crate::prompt::Mode;
use crate::prompt::{Part, PromptMessage, Speaker, ToolCall, ToolResult};
use crate::schema::EXECUTE;

/// The arguments of the synthetic call placed before an output with no code before it.
pub const ORPHAN_ARGUMENTS: &str =
    "# Automated tool call to fetch more output, triggered by the user.";

/// Tool-mode content for an output that was empty.
pub const NO_OUTPUT: &str = "No output";

/// One converted message before tool pairing / text merging.
#[derive(Debug)]
enum Item {
    /// System text.
    System(String),
    /// A text message.
    Text { speaker: Speaker, text: String },
    /// A message of several parts (an image and its note).
    Parts(Vec<Part>),
    /// Tool mode: a call of the named tool (`execute`, or an offered one) with these JSON
    /// arguments.
    Call { name: String, arguments: String },
    /// Tool mode: the output of the call before it.
    Result(String),
}

fn speaker(role: Role) -> Option<Speaker> {
    match role {
        Role::User | Role::Computer => Some(Speaker::User),
        Role::Assistant => Some(Speaker::Assistant),
        Role::System | Role::Server => None,
    }
}

/// Converts history: the system text (from system messages) and the messages. `vision` says
/// whether images are sent. In tool mode a code block that calls one of `tools` (still
/// offered) becomes a call of that tool; any other block, a call of `execute`.
pub fn to_prompt_messages(
    messages: &[Message],
    templates: &Templates,
    tools: &[OfferedTool],
    mode: Mode,
    vision: bool,
) -> (Option<String>, Vec<PromptMessage>) {
    let last_user = messages
        .iter()
        .rposition(|m| m.role == Role::User && m.kind == Kind::Message);
    let mut system: Option<String> = None;
    let mut items = Vec::new();
    let kept = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.recipient.is_none_or(|r| r == Recipient::Assistant));
    let context = Context {
        templates,
        tools,
        mode,
        vision,
    };
    for (i, message) in kept {
        match convert_one(message, Some(i) == last_user, &context) {
            Some(Item::System(text)) => match &mut system {
                Some(joined) => {
                    joined.push('\n');
                    joined.push_str(&text);
                }
                None => system = Some(text),
            },
            Some(item) => items.push(item),
            None => {}
        }
    }
    let messages = match mode {
        Mode::Tools => pair_tool_calls(items),
        Mode::Text => merge_text(items),
    };
    (system, messages)
}

/// What every message's conversion reads.
struct Context<'a> {
    templates: &'a Templates,
    tools: &'a [OfferedTool],
    mode: Mode,
    vision: bool,
}

fn convert_one(message: &Message, last_user: bool, context: &Context<'_>) -> Option<Item> {
    let Context {
        templates,
        tools,
        mode,
        vision,
    } = *context;
    let text = message.text();
    match message.kind {
        Kind::Message => {
            if message.role == Role::System {
                return Some(Item::System(text.trim().to_owned()));
            }
            let speaker = speaker(message.role)?;
            let text = if message.role == Role::User
                && (last_user || templates.always_apply_user_message_template)
            {
                templates.user_message_template.replace("{content}", text)
            } else {
                text.to_owned()
            };
            Some(Item::Text {
                speaker,
                text: text.trim().to_owned(),
            })
        }
        Kind::Code => {
            let language = message.format.as_deref().unwrap_or("");
            match mode {
                Mode::Tools => {
                    if let Some((tool, arguments)) = called(tools, language, text) {
                        return Some(Item::Call {
                            name: tool.name.clone(),
                            arguments: serde_json::Value::Object(arguments).to_string(),
                        });
                    }
                    // As Python's `json.dumps({"language": …, "code": …})` writes it.
                    let quote = |s: &str| serde_json::Value::String(s.to_owned()).to_string();
                    Some(Item::Call {
                        name: EXECUTE.to_owned(),
                        arguments: format!(
                            "{{\"language\": {}, \"code\": {}}}",
                            quote(language),
                            quote(text)
                        ),
                    })
                }
                Mode::Text => Some(Item::Text {
                    speaker: Speaker::Assistant,
                    text: format!("```{language}\n{text}\n```").trim().to_owned(),
                }),
            }
        }
        Kind::Console if message.format.as_deref() == Some("output") => {
            let blank = text.trim().is_empty();
            match (mode, templates.code_output_sender) {
                (Mode::Tools, _) => {
                    let content = if blank { NO_OUTPUT } else { text };
                    Some(Item::Result(content.trim().to_owned()))
                }
                (Mode::Text, OutputSender::User) => {
                    let content = if blank {
                        templates.empty_code_output_template.clone()
                    } else {
                        templates.code_output_template.replace("{content}", text)
                    };
                    Some(Item::Text {
                        speaker: Speaker::User,
                        text: content.trim().to_owned(),
                    })
                }
                (Mode::Text, OutputSender::Assistant) => Some(Item::Text {
                    speaker: Speaker::Assistant,
                    text: format!("\n```output\n{text}\n```").trim().to_owned(),
                }),
            }
        }
        Kind::Image => {
            if message.format.as_deref() == Some("description") {
                let speaker = speaker(message.role)?;
                return Some(Item::Text {
                    speaker,
                    text: text.trim().to_owned(),
                });
            }
            if !vision {
                return Some(Item::Text {
                    speaker: Speaker::User,
                    text: IMAGE_DROPPED_NOTE.to_owned(),
                });
            }
            image_parts(message, templates.shrink_images).map(Item::Parts)
        }
        Kind::File => Some(Item::Text {
            speaker: Speaker::User,
            text: text.trim().to_owned(),
        }),
        _ => None,
    }
}

fn call_message(id: &str, name: &str, arguments: &str) -> PromptMessage {
    PromptMessage {
        speaker: Speaker::Assistant,
        parts: vec![Part::ToolCall(ToolCall {
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: arguments.to_owned(),
        })],
    }
}

fn result_message(id: &str, content: String) -> PromptMessage {
    PromptMessage {
        speaker: Speaker::User,
        parts: vec![Part::ToolResult(ToolResult {
            call_id: id.to_owned(),
            content,
        })],
    }
}

/// Tool mode: every call gets the result that follows it (or an empty one); every result
/// gets a call before it.
fn pair_tool_calls(items: Vec<Item>) -> Vec<PromptMessage> {
    let mut out = Vec::new();
    let mut last_id = 0;
    let mut items = items.into_iter().peekable();
    while let Some(item) = items.next() {
        match item {
            Item::Text { speaker, text } => out.push(PromptMessage::text(speaker, text)),
            Item::Parts(parts) => out.push(PromptMessage {
                speaker: Speaker::User,
                parts,
            }),
            Item::Call { name, arguments } => {
                last_id += 1;
                let id = format!("toolu_{last_id}");
                out.push(call_message(&id, &name, &arguments));
                let content = match items.next_if(|next| matches!(next, Item::Result(_))) {
                    Some(Item::Result(content)) => content,
                    _ => String::new(),
                };
                out.push(result_message(&id, content));
            }
            Item::Result(content) => {
                last_id += 1;
                let id = format!("toolu_{last_id}");
                out.push(call_message(&id, EXECUTE, ORPHAN_ARGUMENTS));
                out.push(result_message(&id, content));
            }
            Item::System(_) => {}
        }
    }
    out
}

/// Text mode: consecutive text messages of one speaker become one, joined with `"\n"`.
fn merge_text(items: Vec<Item>) -> Vec<PromptMessage> {
    let mut out: Vec<PromptMessage> = Vec::new();
    let mut open: Option<(Speaker, String)> = None;
    for item in items {
        match item {
            Item::Text { speaker, text } => match &mut open {
                Some((open_speaker, joined)) if *open_speaker == speaker => {
                    joined.push('\n');
                    joined.push_str(&text);
                }
                _ => {
                    if let Some((s, t)) = open.take() {
                        out.push(PromptMessage::text(s, t));
                    }
                    open = Some((speaker, text));
                }
            },
            Item::Parts(parts) => {
                if let Some((s, t)) = open.take() {
                    out.push(PromptMessage::text(s, t));
                }
                out.push(PromptMessage {
                    speaker: Speaker::User,
                    parts,
                });
            }
            // Calls and results only exist in tool mode.
            Item::Call { .. } | Item::Result(_) | Item::System(_) => {}
        }
    }
    if let Some((s, t)) = open.take() {
        out.push(PromptMessage::text(s, t));
    }
    out
}

#[cfg(test)]
mod tests {
    use oi_core::Settings;
    use serde_json::{Value, json};

    use super::*;
    use crate::openai_body::openai_messages;

    fn templates() -> Templates {
        Settings::default().templates()
    }

    /// The conversion as the OpenAI wire writes it (no system message here).
    fn to_openai_messages(
        messages: &[Message],
        templates: &Templates,
        mode: Mode,
        vision: bool,
    ) -> Vec<Value> {
        let (_, converted) = to_prompt_messages(messages, templates, &[], mode, vision);
        openai_messages(None, &converted)
    }

    #[test]
    fn missing_results_and_orphans_are_paired() {
        let messages = vec![
            Message::code("python", "a"),
            Message::code("python", "b"),
            Message::console_output("x"),
            Message::console_output("y"),
        ];
        let out = to_openai_messages(&messages, &templates(), Mode::Tools, false);
        let ids: Vec<String> = out
            .iter()
            .map(|m| {
                m.get("tool_call_id")
                    .or_else(|| m["tool_calls"][0].get("id"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned()
            })
            .collect();
        assert_eq!(
            ids,
            [
                "toolu_1", "toolu_1", "toolu_2", "toolu_2", "toolu_3", "toolu_3"
            ]
        );
        assert_eq!(out[1]["content"], "");
        assert_eq!(out[3]["content"], "x");
        assert_eq!(
            out[4]["tool_calls"][0]["function"]["arguments"],
            ORPHAN_ARGUMENTS
        );
        assert_eq!(out[5]["content"], "y");
    }

    #[test]
    fn templates_recipients_and_skipped_kinds() {
        let mut t = templates();
        t.user_message_template = "<{content}>".to_owned();
        let mut hidden = Message::console_output("hidden");
        hidden.recipient = Some(Recipient::User);
        let messages = vec![
            Message::user(" first "),
            Message::assistant("ok"),
            hidden,
            Message::new(Role::Assistant, Kind::Error, "boom"),
            Message::new(Role::User, Kind::File, "/tmp/a.txt"),
            Message::user("second"),
        ];
        let out = to_openai_messages(&messages, &t, Mode::Text, false);
        assert_eq!(
            out,
            vec![
                json!({"role": "user", "content": "first"}),
                json!({"role": "assistant", "content": "ok"}),
                json!({"role": "user", "content": "/tmp/a.txt\n<second>"}),
            ]
        );
        t.always_apply_user_message_template = true;
        let out = to_openai_messages(&messages[..1], &t, Mode::Tools, false);
        assert_eq!(out, vec![json!({"role": "user", "content": "< first >"})]);
    }

    #[test]
    fn assistant_output_sender_merges_into_the_turn() {
        let mut t = templates();
        t.code_output_sender = OutputSender::Assistant;
        let messages = vec![
            Message::code("python", "print(1)"),
            Message::console_output("1\n"),
        ];
        let out = to_openai_messages(&messages, &t, Mode::Text, false);
        assert_eq!(
            out,
            vec![
                json!({"role": "assistant", "content": "```python\nprint(1)\n```\n```output\n1\n\n```"})
            ]
        );
    }

    #[test]
    fn images_need_vision() {
        let image = Message::new(Role::User, Kind::Image, "AAAA").with_format("base64.png");
        let described = Message::new(Role::User, Kind::Image, "a cat").with_format("description");
        let messages = vec![Message::user("look"), image, described];
        let without = to_openai_messages(&messages, &templates(), Mode::Text, false);
        assert_eq!(
            without,
            vec![json!({"role": "user", "content": format!("look\n{IMAGE_DROPPED_NOTE}\na cat")})]
        );
        let with = to_openai_messages(&messages, &templates(), Mode::Text, true);
        assert_eq!(with.len(), 3);
        assert_eq!(
            with[1]["content"][0]["image_url"]["url"],
            "data:image/png;base64,AAAA"
        );
    }
}
