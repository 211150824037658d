//! Pieces of text waiting together are sent as one chunk.
//!
//! A model that answers in a burst (a local model, a cached reply, a scripted server) makes
//! hundreds of small `content` chunks in a few milliseconds. Sent one frame each, they fill a
//! client's receive queue before it reads them: Python's `websockets` stops reading the socket
//! when more than 16 frames wait unread (`max_queue`), and a client that then closes never
//! sees the server's answer to its close (it waits its whole `close_timeout` and ends 1006).
//! LMC content chunks are pieces of one text that clients join, so consecutive pieces of the
//! same message, code or console output that are already waiting in one batch are joined into
//! one chunk: the same text, fewer frames. The writer waits a few milliseconds after a piece
//! of text for the pieces that follow it (http/ws.rs, `gather`), never after anything else.
//! A joined chunk stays under [`MAX_JOINED_BYTES`], so joining never makes a frame larger than
//! a client accepts (Python's `websockets` refuses frames over 1 MiB with 1009) when its pieces
//! were each small enough.

use oi_core::{Chunk, Content, Kind};

use crate::outgoing::Outgoing;

/// The most text one joined chunk carries: pieces that would take it past this stay apart.
pub const MAX_JOINED_BYTES: usize = 64 * 1024;

/// Joins consecutive text pieces of the same run in `batch` (see the module docs).
pub fn coalesce(batch: Vec<Outgoing>) -> Vec<Outgoing> {
    let mut joined: Vec<Outgoing> = Vec::with_capacity(batch.len());
    for out in batch {
        if let Some(last) = joined.last_mut()
            && joinable(last)
            && joinable(&out)
            && same_run(&last.chunk, &out.chunk)
            && let (Some(Content::Text(text)), Some(Content::Text(more))) =
                (last.chunk.content.as_mut(), out.chunk.content.as_ref())
            && text.len() + more.len() <= MAX_JOINED_BYTES
        {
            text.push_str(more);
            continue;
        }
        joined.push(out);
    }
    joined
}

/// Whether `out` is a piece of streaming text that a following piece may join.
pub fn is_text_piece(out: &Outgoing) -> bool {
    joinable(out)
}

/// A plain text piece of a message, code, or console output (no flag, nothing it answers).
fn joinable(out: &Outgoing) -> bool {
    let chunk = &out.chunk;
    let text_run = match chunk.kind {
        Some(Kind::Message | Kind::Code) => true,
        Some(Kind::Console) => chunk.format.as_deref() == Some("output"),
        _ => false,
    };
    text_run
        && !chunk.start
        && !chunk.end
        && out.answers.is_none()
        && out.usage.is_none()
        && out.failure.is_none()
        && matches!(chunk.content, Some(Content::Text(_)))
}

/// Whether two chunks are pieces of the same run.
fn same_run(a: &Chunk, b: &Chunk) -> bool {
    a.role == b.role && a.kind == b.kind && a.format == b.format && a.recipient == b.recipient
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use oi_core::Role;

    use super::*;

    fn piece(kind: Kind, format: Option<&str>, text: &str) -> Outgoing {
        Outgoing::plain(Chunk::new(Role::Assistant, kind, format, text))
    }

    #[test]
    fn pieces_of_one_run_are_joined_and_nothing_else() {
        let start = Outgoing::plain(Chunk::flag(Role::Assistant, Kind::Message, None, true));
        let batch = vec![
            start.clone(),
            piece(Kind::Message, None, "Hel"),
            piece(Kind::Message, None, "lo"),
            piece(Kind::Code, Some("python"), "print("),
            piece(Kind::Code, Some("python"), "1)"),
            piece(Kind::Code, Some("shell"), "ls"),
            Outgoing::complete(None),
            piece(Kind::Message, None, "again"),
        ];
        assert_eq!(
            coalesce(batch),
            vec![
                start,
                piece(Kind::Message, None, "Hello"),
                piece(Kind::Code, Some("python"), "print(1)"),
                piece(Kind::Code, Some("shell"), "ls"),
                Outgoing::complete(None),
                piece(Kind::Message, None, "again"),
            ]
        );
    }

    #[test]
    fn a_joined_chunk_stays_under_the_cap() {
        let big = "x".repeat(MAX_JOINED_BYTES / 2 + 1);
        let batch = vec![
            piece(Kind::Console, Some("output"), &big),
            piece(Kind::Console, Some("output"), &big),
            piece(Kind::Console, Some("output"), "tail"),
        ];
        let joined = coalesce(batch);
        assert_eq!(
            joined,
            vec![
                piece(Kind::Console, Some("output"), &big),
                piece(Kind::Console, Some("output"), &format!("{big}tail")),
            ]
        );
    }

    #[test]
    fn images_and_running_lines_stay_apart() {
        let image = Outgoing::plain(Chunk::new(
            Role::Computer,
            Kind::Image,
            Some("base64.png"),
            "AAAA",
        ));
        let line = Outgoing::plain(Chunk::new(
            Role::Computer,
            Kind::Console,
            Some("active_line"),
            "1",
        ));
        let batch = vec![image.clone(), image, line.clone(), line];
        assert_eq!(coalesce(batch.clone()), batch);
    }
}
