//! The conversation as chat-template messages: Open Interpreter's text-mode conversion
//! (spec b.6, with the execution instructions appended and trimming), flattened to strings.

use oi_core::ModelRequest;
use serde_json::Value;

use crate::convert::Mode;
use crate::local_model::LOCAL_MODEL;
use crate::request::request_body;

/// One message for the chat template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatTurn {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

/// The text-mode messages of `request`, trimmed to `request.llm.context_window`.
pub fn chat_turns(request: &ModelRequest) -> Vec<ChatTurn> {
    let body = request_body(request, LOCAL_MODEL, Mode::Text);
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Vec::new();
    };
    messages
        .iter()
        .filter_map(|m| {
            let role = m.get("role").and_then(Value::as_str)?;
            Some(ChatTurn {
                role: role.to_owned(),
                content: flatten(m.get("content")?),
            })
        })
        .collect()
}

/// A content string, or the text parts of a part list (images become a short note: the
/// embedded model reads no images).
fn flatten(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|part| match part.get("type").and_then(Value::as_str) {
                Some("text") => part
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                _ => "[an image the model cannot see]".to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use oi_core::{LlmSettings, Message, Settings};

    use super::*;

    #[test]
    fn text_mode_with_instructions() {
        let settings = Settings::default();
        let request = ModelRequest {
            messages: vec![
                Message::new(oi_core::Role::System, oi_core::Kind::Message, "sys"),
                Message::user("hi"),
                Message::code("python", "print(1)"),
                Message::console_output("1"),
            ],
            languages: vec!["python".into()],
            llm: LlmSettings {
                model: "local".into(),
                ..LlmSettings::default()
            },
            templates: settings.templates(),
        };
        let turns = chat_turns(&request);
        let roles: Vec<&str> = turns.iter().map(|t| t.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        assert!(turns[0].content.starts_with("sys\nTo execute code"));
        assert_eq!(turns[2].content, "```python\nprint(1)\n```");
        assert!(turns[3].content.starts_with("Code output: 1"));
    }
}
