//! Pieces of text waiting together are sent as few chunks as they can be, each one a frame a
//! client accepts.
//!
//! A model that answers in a burst (a local model, a cached reply, a scripted server) makes
//! hundreds of small `content` chunks in a few milliseconds, and a turn that ran while no
//! client was connected leaves thousands waiting. Sent one frame each, they fill a client's
//! receive queue before it reads them: Python's `websockets` stops reading the socket when
//! more than 16 frames wait unread (`max_queue`), and a client that then closes never sees the
//! server's answer to its close (it waits its whole `close_timeout` and ends 1006). LMC
//! content chunks are pieces of one text that clients join, so consecutive pieces of the same
//! message, code or console output in one batch are joined into one chunk, and a running line
//! (`active_line`) that a later one in the batch replaces, with only output between them, is
//! left out: the same text, far fewer frames. The writer waits a few milliseconds after a
//! piece of text for the pieces that follow it (http/ws.rs, `gather`), never after anything
//! else.
//!
//! Every text piece stays under [`MAX_PIECE_BYTES`] as JSON (its text escaped): pieces that
//! would pass it are not joined, and a single piece larger than that (a 2 MB answer in one
//! piece, a 2 MB block of code) is cut into several, on character boundaries, so no frame is
//! larger than a client accepts (Python's `websockets` refuses frames over 1 MiB with 1009).

use oi_core::{Chunk, Content, Kind};

use crate::outgoing::Outgoing;

/// The most a text piece's content may take as JSON: half of the 1 MiB a frame may have in
/// Python's `websockets`, leaving room for the chunk's other keys.
pub const MAX_PIECE_BYTES: usize = 512 * 1024;

/// Joins consecutive text pieces of the same run in `batch`, leaves out running lines a later
/// one replaces, and cuts pieces too large for one frame (see the module docs).
pub fn coalesce(batch: Vec<Outgoing>) -> Vec<Outgoing> {
    let tagged = batch.into_iter().map(|out| (out, ())).collect();
    coalesce_tagged(tagged)
        .into_iter()
        .map(|(out, ())| out)
        .collect()
}

/// [`coalesce`] for items that each carry a tag (a replay's log numbers): a joined piece
/// carries the largest tag of the pieces it holds, a cut piece its whole's.
pub fn coalesce_tagged<T: Copy + Ord>(batch: Vec<(Outgoing, T)>) -> Vec<(Outgoing, T)> {
    let batch = without_replaced_lines(batch);
    let mut joined: Vec<(Outgoing, T)> = Vec::with_capacity(batch.len());
    for (out, tag) in batch {
        if let Some((last, last_tag)) = joined.last_mut()
            && joinable(last)
            && joinable(&out)
            && same_run(&last.chunk, &out.chunk)
            && let (Some(Content::Text(text)), Some(Content::Text(more))) =
                (last.chunk.content.as_mut(), out.chunk.content.as_ref())
            && json_len(text) + json_len(more) <= MAX_PIECE_BYTES
        {
            text.push_str(more);
            *last_tag = (*last_tag).max(tag);
            continue;
        }
        if joinable(&out) {
            joined.extend(cut(out).into_iter().map(|piece| (piece, tag)));
        } else {
            joined.push((out, tag));
        }
    }
    joined
}

/// The bytes `text` takes inside a JSON string (quotes, backslashes and control characters
/// escaped).
pub fn json_len(text: &str) -> usize {
    text.bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum()
}

/// `out` as pieces of at most [`MAX_PIECE_BYTES`] as JSON each (itself when it fits).
fn cut(out: Outgoing) -> Vec<Outgoing> {
    let Some(Content::Text(text)) = out.chunk.content.as_ref() else {
        return vec![out];
    };
    if json_len(text) <= MAX_PIECE_BYTES {
        return vec![out];
    }
    let mut pieces = Vec::new();
    let (mut from, mut size) = (0, 0);
    for (at, c) in text.char_indices() {
        let mut buffer = [0u8; 4];
        let len = json_len(c.encode_utf8(&mut buffer));
        if size + len > MAX_PIECE_BYTES {
            pieces.push(&text[from..at]);
            (from, size) = (at, 0);
        }
        size += len;
    }
    pieces.push(&text[from..]);
    pieces
        .into_iter()
        .map(|piece| {
            let mut part = out.clone();
            part.chunk.content = Some(Content::Text(piece.to_owned()));
            part
        })
        .collect()
}

/// `batch` without the running lines that a later running line of the same block replaces
/// with only output (or other running lines) between them.
fn without_replaced_lines<T>(batch: Vec<(Outgoing, T)>) -> Vec<(Outgoing, T)> {
    let mut kept: Vec<(Outgoing, T)> = Vec::with_capacity(batch.len());
    // Walking back: whether a running line comes later with only output before it.
    let mut replaced_later = false;
    for (out, tag) in batch.into_iter().rev() {
        if is_running_line(&out) {
            if replaced_later {
                continue;
            }
            replaced_later = true;
        } else if !joinable(&out) || out.chunk.kind != Some(Kind::Console) {
            replaced_later = false;
        }
        kept.push((out, tag));
    }
    kept.reverse();
    kept
}

/// A plain running line (`active_line`) chunk.
fn is_running_line(out: &Outgoing) -> bool {
    let chunk = &out.chunk;
    chunk.kind == Some(Kind::Console)
        && chunk.format.as_deref() == Some("active_line")
        && !chunk.start
        && !chunk.end
        && out.answers.is_none()
        && out.usage.is_none()
        && out.failure.is_none()
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
    fn a_joined_chunk_stays_under_the_cap_and_a_large_piece_is_cut() {
        let big = "x".repeat(MAX_PIECE_BYTES / 2 + 1);
        let batch = vec![
            piece(Kind::Console, Some("output"), &big),
            piece(Kind::Console, Some("output"), &big),
            piece(Kind::Console, Some("output"), "tail"),
        ];
        assert_eq!(
            coalesce(batch),
            vec![
                piece(Kind::Console, Some("output"), &big),
                piece(Kind::Console, Some("output"), &format!("{big}tail")),
            ]
        );
        // One piece of 2 MB (quotes count twice, as JSON writes them) comes out in pieces
        // that each fit, and join back to it.
        let huge = "ab\"é".repeat(400_000);
        let pieces = coalesce(vec![piece(Kind::Message, None, &huge)]);
        let texts: Vec<&str> = pieces
            .iter()
            .map(|p| match p.chunk.content.as_ref() {
                Some(Content::Text(t)) => t.as_str(),
                _ => panic!("{p:?}"),
            })
            .collect();
        assert_eq!(texts.concat(), huge);
        assert!(texts.len() >= 4, "{}", texts.len());
        assert!(texts.iter().all(|t| json_len(t) <= MAX_PIECE_BYTES));
        let frame = serde_json::to_string(&pieces[0].chunk).unwrap();
        assert!(frame.len() < 1 << 20, "{}", frame.len());
    }

    #[test]
    fn a_running_line_replaced_later_is_left_out_and_the_output_between_joined() {
        let line = |n: &str| {
            Outgoing::plain(Chunk::new(
                Role::Computer,
                Kind::Console,
                Some("active_line"),
                n,
            ))
        };
        let out = |t: &str| piece(Kind::Console, Some("output"), t);
        let end = Outgoing::plain(Chunk::flag(Role::Computer, Kind::Console, None, true));
        let batch = vec![
            line("1"),
            out("a\n"),
            line("2"),
            out("b\n"),
            line("3"),
            end.clone(),
            line("1"),
        ];
        assert_eq!(
            coalesce(batch),
            vec![out("a\nb\n"), line("3"), end, line("1")]
        );
    }

    #[test]
    fn images_and_lone_running_lines_stay_apart() {
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
        let batch = vec![line.clone(), image.clone(), image, line];
        assert_eq!(coalesce(batch.clone()), batch);
    }
}
