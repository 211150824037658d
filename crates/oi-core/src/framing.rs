//! Start/end flag framing and message storage, exactly as Open Interpreter's
//! `_respond_and_store` (spec a.3).
//!
//! The respond loop produces raw chunks; the [`Framer`] stores them into the conversation and
//! returns what consumers see: the chunk wrapped in `start`/`end` flags around each run of one
//! role/type(/format).

use crate::lmc::{Chunk, Content, Kind, Message, Role};
use crate::truncate::truncate_output;

/// What a run of chunks shares; console runs carry no format.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FlagBase {
    role: Role,
    kind: Kind,
    format: Option<String>,
}

impl FlagBase {
    fn flag(&self, end: bool) -> Chunk {
        Chunk::flag(self.role, self.kind, self.format.as_deref(), end)
    }

    fn covers(&self, chunk: &Chunk, kind: Kind) -> bool {
        self.role == chunk.role
            && self.kind == kind
            && (self.format.is_none() || self.format == chunk.format)
    }
}

/// Options of the framer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FramerOptions {
    /// Characters of console output kept in storage.
    pub max_output: usize,
    /// The computer API is imported into the code's session: the truncation notice may point
    /// at `computer.ai.summarize`.
    pub add_scrollbars: bool,
}

/// Turns raw chunks into framed chunks and stored messages.
#[derive(Debug, Clone)]
pub struct Framer {
    options: FramerOptions,
    open: Option<FlagBase>,
}

fn is_ephemeral(chunk: &Chunk, kind: Kind) -> bool {
    chunk.has_format("active_line") || kind == Kind::Review
}

impl Framer {
    /// A framer with no run open.
    pub fn new(options: FramerOptions) -> Self {
        Framer {
            options,
            open: None,
        }
    }

    /// Stores `chunk` into `messages` and returns the chunks to pass on.
    pub fn push(&mut self, chunk: Chunk, messages: &mut Vec<Message>) -> Vec<Chunk> {
        let mut out = Vec::new();
        let Some(kind) = chunk.kind else {
            return out;
        };
        if chunk.text() == Some("") {
            return out;
        }
        if chunk.has_format("active_line")
            && chunk.content == Some(Content::Null)
            && messages.last().map(|m| m.role) != Some(Role::Computer)
        {
            messages.push(Message::console_output(""));
        }
        let same_run = self
            .open
            .as_ref()
            .is_some_and(|base| base.covers(&chunk, kind));
        if same_run {
            if !is_ephemeral(&chunk, kind) {
                append_or_push(messages, &chunk, kind);
            }
        } else {
            out.extend(self.close());
            let base = FlagBase {
                role: chunk.role,
                kind,
                format: if kind == Kind::Console {
                    None
                } else {
                    chunk.format.clone()
                },
            };
            out.push(base.flag(false));
            self.open = Some(base);
            if !is_ephemeral(&chunk, kind) {
                messages.push(message_from(&chunk, kind));
            }
        }
        let is_output = kind == Kind::Console && chunk.has_format("output");
        out.push(chunk);
        if is_output {
            if let Some(last) = messages.last_mut() {
                if let Content::Text(text) = &last.content {
                    last.content = Content::Text(truncate_output(
                        text,
                        self.options.max_output,
                        self.options.add_scrollbars,
                    ));
                }
            }
        }
        out
    }

    /// Closes the open run, if any (call at the end of a turn).
    pub fn close(&mut self) -> Option<Chunk> {
        self.open.take().map(|base| base.flag(true))
    }
}

fn message_from(chunk: &Chunk, kind: Kind) -> Message {
    Message {
        role: chunk.role,
        kind,
        format: chunk.format.clone(),
        content: chunk.content.clone().unwrap_or_default(),
        recipient: chunk.recipient,
    }
}

/// Appends the chunk's text to the last message when it is of the same role/type/format,
/// otherwise stores the chunk as a new message (spec a.3 step 6).
fn append_or_push(messages: &mut Vec<Message>, chunk: &Chunk, kind: Kind) {
    if let Some(last) = messages.last_mut() {
        let matches = last.role == chunk.role
            && last.kind == kind
            && (last.format.is_none() || last.format == chunk.format);
        if matches {
            if let (Content::Text(stored), Some(Content::Text(more))) =
                (&mut last.content, &chunk.content)
            {
                stored.push_str(more);
                return;
            }
        }
    }
    messages.push(message_from(chunk, kind));
}
