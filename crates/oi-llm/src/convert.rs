//! LMC history → OpenAI chat messages (spec b.6, `convert_to_openai_messages` plus the
//! tool-mode `process_messages`), with the listed bugs fixed: text-mode merging always uses
//! `"\n"`, and unknown kinds or console formats are skipped instead of crashing.

use oi_core::{Kind, Message, OutputSender, Recipient, Role, Templates};
use serde_json::{Value, json};

use crate::images::{IMAGE_DROPPED_NOTE, image_message};
use crate::schema::EXECUTE;

/// How code travels: as `execute` tool calls or as fenced blocks in text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Tool calls of `execute`.
    Tools,
    /// Fenced code blocks.
    Text,
}

/// The arguments of the synthetic call placed before an output with no code before it.
pub const ORPHAN_ARGUMENTS: &str =
    "# Automated tool call to fetch more output, triggered by the user.";

/// Tool-mode content for an output that was empty.
pub const NO_OUTPUT: &str = "No output";

/// One converted message before tool pairing / text merging.
#[derive(Debug)]
enum Item {
    /// A string message.
    Text { role: &'static str, text: String },
    /// A message whose content is a list of parts (images).
    Parts(Value),
    /// Tool mode: a call of `execute` with these JSON arguments.
    Call(String),
    /// Tool mode: the output of the call before it.
    Result(String),
}

fn role_name(role: Role) -> Option<&'static str> {
    match role {
        Role::User | Role::Computer => Some("user"),
        Role::Assistant => Some("assistant"),
        Role::System => Some("system"),
        Role::Server => None,
    }
}

/// Converts history for an OpenAI-compatible request. `vision` says whether images are sent.
pub fn to_openai_messages(
    messages: &[Message],
    templates: &Templates,
    mode: Mode,
    vision: bool,
) -> Vec<Value> {
    let last_user = messages
        .iter()
        .rposition(|m| m.role == Role::User && m.kind == Kind::Message);
    let items: Vec<Item> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.recipient.is_none_or(|r| r == Recipient::Assistant))
        .filter_map(|(i, m)| convert_one(m, Some(i) == last_user, templates, mode, vision))
        .collect();
    match mode {
        Mode::Tools => pair_tool_calls(items),
        Mode::Text => merge_text(items),
    }
}

fn convert_one(
    message: &Message,
    last_user: bool,
    templates: &Templates,
    mode: Mode,
    vision: bool,
) -> Option<Item> {
    let text = message.text();
    match message.kind {
        Kind::Message => {
            let role = role_name(message.role)?;
            let text = if message.role == Role::User
                && (last_user || templates.always_apply_user_message_template)
            {
                templates.user_message_template.replace("{content}", text)
            } else {
                text.to_owned()
            };
            Some(Item::Text {
                role,
                text: text.trim().to_owned(),
            })
        }
        Kind::Code => {
            let language = message.format.as_deref().unwrap_or("");
            match mode {
                Mode::Tools => {
                    // As Python's `json.dumps({"language": …, "code": …})` writes it.
                    let quote = |s: &str| Value::String(s.to_owned()).to_string();
                    Some(Item::Call(format!(
                        "{{\"language\": {}, \"code\": {}}}",
                        quote(language),
                        quote(text)
                    )))
                }
                Mode::Text => Some(Item::Text {
                    role: "assistant",
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
                        role: "user",
                        text: content.trim().to_owned(),
                    })
                }
                (Mode::Text, OutputSender::Assistant) => Some(Item::Text {
                    role: "assistant",
                    text: format!("\n```output\n{text}\n```").trim().to_owned(),
                }),
            }
        }
        Kind::Image => {
            if message.format.as_deref() == Some("description") {
                let role = role_name(message.role)?;
                return Some(Item::Text {
                    role,
                    text: text.trim().to_owned(),
                });
            }
            if !vision {
                return Some(Item::Text {
                    role: "user",
                    text: IMAGE_DROPPED_NOTE.to_owned(),
                });
            }
            image_message(message).map(Item::Parts)
        }
        Kind::File => Some(Item::Text {
            role: "user",
            text: text.trim().to_owned(),
        }),
        _ => None,
    }
}

fn tool_call_message(id: &str, arguments: &str) -> Value {
    json!({
        "role": "assistant",
        "content": "",
        "tool_calls": [{ "id": id, "type": "function", "function": { "name": EXECUTE, "arguments": arguments } }],
    })
}

fn tool_result_message(id: &str, content: &str) -> Value {
    json!({ "role": "tool", "tool_call_id": id, "content": content })
}

/// Tool mode: every call gets the result that follows it (or an empty one); every result
/// gets a call before it.
fn pair_tool_calls(items: Vec<Item>) -> Vec<Value> {
    let mut out = Vec::new();
    let mut last_id = 0;
    let mut items = items.into_iter().peekable();
    while let Some(item) = items.next() {
        match item {
            Item::Text { role, text } => out.push(json!({ "role": role, "content": text })),
            Item::Parts(value) => out.push(value),
            Item::Call(arguments) => {
                last_id += 1;
                let id = format!("toolu_{last_id}");
                out.push(tool_call_message(&id, &arguments));
                let content = match items.peek() {
                    Some(Item::Result(_)) => match items.next() {
                        Some(Item::Result(content)) => content,
                        _ => String::new(),
                    },
                    _ => String::new(),
                };
                out.push(tool_result_message(&id, &content));
            }
            Item::Result(content) => {
                last_id += 1;
                let id = format!("toolu_{last_id}");
                out.push(tool_call_message(&id, ORPHAN_ARGUMENTS));
                out.push(tool_result_message(&id, &content));
            }
        }
    }
    out
}

/// Text mode: consecutive string messages of one role become one, joined with `"\n"`.
fn merge_text(items: Vec<Item>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut open: Option<(&'static str, String)> = None;
    for item in items {
        match item {
            Item::Text { role, text } => match &mut open {
                Some((open_role, joined)) if *open_role == role => {
                    joined.push('\n');
                    joined.push_str(&text);
                }
                _ => {
                    if let Some((r, t)) = open.take() {
                        out.push(json!({ "role": r, "content": t }));
                    }
                    open = Some((role, text));
                }
            },
            Item::Parts(value) => {
                if let Some((r, t)) = open.take() {
                    out.push(json!({ "role": r, "content": t }));
                }
                out.push(value);
            }
            // Calls and results only exist in tool mode.
            Item::Call(_) | Item::Result(_) => {}
        }
    }
    if let Some((r, t)) = open.take() {
        out.push(json!({ "role": r, "content": t }));
    }
    out
}

#[cfg(test)]
mod tests {
    use oi_core::Settings;

    use super::*;

    fn templates() -> Templates {
        Settings::default().templates()
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
