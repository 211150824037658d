//! A saved conversation shown again as it looked when it happened: each message is turned
//! back into the chunks of a turn and drawn by the same renderer (messages as Markdown, code
//! and output in their panels); the user's messages follow a `> ` like the prompt.

use oi_core::{Chunk, Content, Kind, Message, Role};

use crate::sanitize::clean;
use crate::turn::Renderer;

/// The text that shows `messages` with `renderer`.
pub fn show(messages: &[Message], renderer: &mut Renderer) -> String {
    let mut out = String::new();
    for (i, message) in messages.iter().enumerate() {
        if message.role == Role::User {
            out.push_str(&renderer.finish_turn());
            if message.kind == Kind::Message {
                for line in clean(message.text()).lines() {
                    out.push_str(&format!("\n> {line}"));
                }
                out.push_str("\n\n");
            }
            continue;
        }
        for chunk in chunks(message) {
            out.push_str(&renderer.render(&chunk));
        }
        let ran = messages
            .get(i + 1)
            .is_some_and(|next| next.kind == Kind::Console);
        if message.kind == Kind::Code && !ran {
            renderer.not_run();
        }
    }
    out.push_str(&renderer.finish_turn());
    out
}

/// The start flag, the content and the end flag of `message`.
fn chunks(message: &Message) -> Vec<Chunk> {
    let format = match (message.role, message.kind) {
        (Role::Computer, Kind::Console) => None,
        _ => message.format.as_deref(),
    };
    let mut content = Chunk::new(
        message.role,
        message.kind,
        message.format.as_deref(),
        message.content.clone(),
    );
    if message.kind == Kind::Console {
        content.format = Some("output".to_owned());
        if !matches!(content.content, Some(Content::Text(_))) {
            return Vec::new();
        }
    }
    vec![
        Chunk::flag(message.role, message.kind, format, false),
        content,
        Chunk::flag(message.role, message.kind, format, true),
    ]
}
