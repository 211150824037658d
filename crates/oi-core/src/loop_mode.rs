//! Loop mode (spec b.10): after a reply without code, the turn goes on with the hidden loop
//! message until a reply says one of the loop breakers.

use crate::lmc::{Content, Kind, Message, Role};
use crate::settings::Settings;
use crate::state::Shared;

/// Whether to go on with the hidden loop message. Tidies the stored conversation the way the
/// original does when it goes on: the loop messages out, the assistant's messages merged.
pub(crate) fn continue_loop(settings: &Settings, shared: &Shared) -> bool {
    if !settings.loop_mode {
        return false;
    }
    let mut messages = shared.messages();
    let Some(last) = messages.last() else {
        return false;
    };
    if last.role != Role::Assistant {
        return false;
    }
    let text = last.text();
    if settings
        .loop_breakers
        .iter()
        .any(|breaker| text.contains(breaker.as_str()))
    {
        return false;
    }
    messages.retain(|m| m.text() != settings.loop_message);
    let mut merged: Vec<Message> = Vec::with_capacity(messages.len());
    for message in messages.drain(..) {
        let mergeable = |m: &Message| m.role == Role::Assistant && m.kind == Kind::Message;
        match merged.last_mut() {
            Some(prev) if mergeable(prev) && mergeable(&message) => {
                let joined = format!("{}\n{}", prev.text(), message.text());
                prev.content = Content::Text(joined);
            }
            _ => merged.push(message),
        }
    }
    *messages = merged;
    true
}
