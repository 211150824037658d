//! The note a user sees when trimming leaves older messages out of a request: said once per
//! conversation, as the first text of the model's reply (so the CLI, WebSocket clients and
//! saved conversations all show it), and never sent back to the model.

use oi_core::{Kind, Message, ModelRequest, Role};

use crate::capabilities::capabilities;
use crate::prompt::{Part, Prompt, PromptMessage, Speaker};

/// How every note starts (how a conversation that already has one is recognised).
pub const NOTE_PREFIX: &str = "> Note: oi left out the ";

/// The note for `left_out` messages under `request`'s settings.
pub fn note_text(left_out: usize, request: &ModelRequest) -> String {
    let window = capabilities(&request.llm).context_window;
    let count = if left_out == 1 {
        "oldest message".to_owned()
    } else {
        format!("{left_out} oldest messages")
    };
    format!(
        "{NOTE_PREFIX}{count} of this conversation, which no longer fits {}'s context window of {window} tokens (--context_window sets the window).\n\n",
        request.llm.model.trim()
    )
}

/// Whether the conversation already shows the note.
pub fn already_noted(messages: &[Message]) -> bool {
    messages.iter().any(|m| {
        m.role == Role::Assistant && m.kind == Kind::Message && m.text().contains(NOTE_PREFIX)
    })
}

/// The note to show before the reply to `request`, whose trimmed prompt is `prompt`: only
/// when messages were left out and the conversation does not show the note yet.
pub fn note_for(prompt: &Prompt, request: &ModelRequest) -> Option<String> {
    (prompt.left_out > 0 && !already_noted(&request.messages))
        .then(|| note_text(prompt.left_out, request))
}

/// `text` without oi's notes (each from its prefix through the blank line after it).
pub fn strip_notes(text: &str) -> Option<String> {
    if !text.contains(NOTE_PREFIX) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(NOTE_PREFIX) {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        rest = after.find("\n\n").map_or("", |end| &after[end + 2..]);
    }
    out.push_str(rest);
    Some(out)
}

/// Takes oi's notes out of the assistant messages of `messages` (the model never sees them).
pub fn strip_from_prompt(messages: &mut [PromptMessage]) {
    for message in messages
        .iter_mut()
        .filter(|m| m.speaker == Speaker::Assistant)
    {
        for part in &mut message.parts {
            if let Part::Text(text) = part {
                if let Some(stripped) = strip_notes(text) {
                    *text = stripped;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_recognised_and_stripped() {
        let request = ModelRequest {
            messages: vec![Message::user("hi")],
            languages: Vec::new(),
            llm: oi_core::LlmSettings::default(),
            templates: oi_core::Settings::default().templates(),
            tools: Vec::new(),
        };
        let note = note_text(3, &request);
        assert!(note.starts_with(NOTE_PREFIX) && note.contains("3 oldest messages"));
        assert!(!already_noted(&request.messages));
        let reply = format!("{note}The answer is 42.");
        assert!(already_noted(&[Message::assistant(reply.clone())]));
        assert_eq!(strip_notes(&reply).as_deref(), Some("The answer is 42."));
        assert_eq!(strip_notes("plain"), None);
    }
}
