//! The conversation as chat-template messages: Open Interpreter's text-mode conversion
//! (spec b.6, with the execution instructions appended and trimming), flattened to strings.

use oi_core::ModelRequest;

use crate::convert::Mode;
use crate::prompt::{Part, Prompt, Speaker};

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
    let prompt = Prompt::build(request, Mode::Text);
    let mut turns = Vec::with_capacity(prompt.messages.len() + 1);
    if !prompt.system.is_empty() {
        turns.push(ChatTurn {
            role: "system".to_owned(),
            content: prompt.system,
        });
    }
    for message in prompt.messages {
        let role = match message.speaker {
            Speaker::User => "user",
            Speaker::Assistant => "assistant",
        };
        turns.push(ChatTurn {
            role: role.to_owned(),
            content: flatten(&message.parts),
        });
    }
    turns
}

/// The text of the parts (images become a short note: the embedded model reads no images).
fn flatten(parts: &[Part]) -> String {
    parts
        .iter()
        .map(|part| match part {
            Part::Text(text) => text.as_str(),
            Part::ToolResult(result) => result.content.as_str(),
            Part::ToolCall(call) => call.arguments.as_str(),
            Part::Image(_) => "[an image the model cannot see]",
        })
        .collect::<Vec<_>>()
        .join("\n")
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
            tools: Vec::new(),
        };
        let turns = chat_turns(&request);
        let roles: Vec<&str> = turns.iter().map(|t| t.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        assert!(turns[0].content.starts_with("sys\nTo execute code"));
        assert_eq!(turns[2].content, "```python\nprint(1)\n```");
        assert!(turns[3].content.starts_with("Code output: 1"));
    }
}
