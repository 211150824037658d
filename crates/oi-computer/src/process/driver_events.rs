//! The events a language driver reports on its session's output pipe (a run started or is
//! done, the line now running, rich output), and the parser that splits them
//! from the text the code prints.
//!
//! Events are framed as `\x1eOI<nonce><json>\n`; the frame may start mid-line. Everything else
//! is text, which is decoded as UTF-8 and forwarded as soon as it arrives (only an incomplete
//! UTF-8 sequence or a possible start of a frame is held back). The `@@@` markers that code
//! may print in that text are another thing, read later: `output_markers.rs`.

use serde::Deserialize;

/// The longest event body accepted before the frame is treated as plain text.
const MAX_EVENT: usize = 64 * 1024 * 1024;

/// An event a driver reports.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct Event {
    /// `start`, `done`, `line` or `rich` (others are ignored).
    pub ev: String,
    /// The run id (`start`, `done`).
    #[serde(default)]
    pub id: u64,
    /// The line number (`line`).
    #[serde(default)]
    pub n: u64,
    /// The exit status (`done` of a shell run).
    #[serde(default)]
    pub status: Option<i64>,
    /// `image` or `code` (`rich`).
    #[serde(default)]
    pub kind: Option<String>,
    /// `base64.png`, `html`, … (`rich`).
    #[serde(default)]
    pub format: Option<String>,
    /// The payload (`rich`).
    #[serde(default)]
    pub data: Option<String>,
}

/// A piece of parsed output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Raw output text.
    Text(String),
    /// A framed event.
    Event(Event),
}

/// An incremental parser for one session's output.
#[derive(Debug)]
pub(crate) struct EventParser {
    /// `\x1eOI<nonce>`: how a frame starts.
    frame_start: Vec<u8>,
    buf: Vec<u8>,
}

impl EventParser {
    /// A parser for frames that start with `\x1eOI<nonce>`.
    pub(crate) fn new(nonce: &str) -> Self {
        let mut frame_start = b"\x1eOI".to_vec();
        frame_start.extend_from_slice(nonce.as_bytes());
        EventParser {
            frame_start,
            buf: Vec::new(),
        }
    }

    /// Feeds bytes; returns the complete pieces found so far.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<Piece> {
        self.buf.extend_from_slice(bytes);
        let mut pieces = Vec::new();
        let mut text: Vec<u8> = Vec::new();
        let mut pos = 0;
        loop {
            let rest = &self.buf[pos..];
            match find(rest, &self.frame_start) {
                Some(at) => {
                    text.extend_from_slice(&rest[..at]);
                    let body_start = at + self.frame_start.len();
                    match rest[body_start..].iter().position(|&b| b == b'\n') {
                        Some(len) => {
                            let body = &rest[body_start..body_start + len];
                            match serde_json::from_slice::<Event>(body) {
                                Ok(event) => {
                                    flush_text(&mut text, &mut pieces);
                                    pieces.push(Piece::Event(event));
                                }
                                Err(_) => text.extend_from_slice(&rest[at..body_start + len + 1]),
                            }
                            pos += body_start + len + 1;
                        }
                        None if rest.len() - body_start > MAX_EVENT => {
                            text.extend_from_slice(&rest[at..]);
                            pos = self.buf.len();
                            break;
                        }
                        None => {
                            pos += at;
                            break;
                        }
                    }
                }
                None => {
                    let keep = partial_suffix(rest, &self.frame_start);
                    text.extend_from_slice(&rest[..rest.len() - keep]);
                    pos += rest.len() - keep;
                    break;
                }
            }
        }
        self.buf.drain(..pos);
        // Hold back an incomplete UTF-8 sequence at the end of the text, if the text is what
        // ends the buffer.
        let held = if self.buf.is_empty() {
            incomplete_utf8_tail(&text)
        } else {
            0
        };
        let tail = text.split_off(text.len() - held);
        flush_text(&mut text, &mut pieces);
        if !tail.is_empty() {
            let mut buf = tail;
            buf.append(&mut self.buf);
            self.buf = buf;
        }
        pieces
    }

    /// Everything still held back, as text (at end of stream).
    pub(crate) fn finish(&mut self) -> Option<String> {
        if self.buf.is_empty() {
            return None;
        }
        let text = String::from_utf8_lossy(&self.buf).into_owned();
        self.buf.clear();
        Some(text)
    }
}

fn flush_text(text: &mut Vec<u8>, pieces: &mut Vec<Piece>) {
    if !text.is_empty() {
        pieces.push(Piece::Text(String::from_utf8_lossy(text).into_owned()));
        text.clear();
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    let first = needle[0];
    let mut start = 0;
    while let Some(i) = haystack[start..].iter().position(|&b| b == first) {
        let at = start + i;
        if haystack[at..].starts_with(needle) {
            return Some(at);
        }
        if haystack.len() - at < needle.len() {
            return None;
        }
        start = at + 1;
    }
    None
}

/// The length of the longest suffix of `data` that is a proper prefix of `frame_start`.
fn partial_suffix(data: &[u8], frame_start: &[u8]) -> usize {
    let max = frame_start.len().saturating_sub(1).min(data.len());
    (1..=max)
        .rev()
        .find(|&k| data[data.len() - k..] == frame_start[..k])
        .unwrap_or(0)
}

/// The number of bytes at the end of `data` that start a UTF-8 sequence not yet complete.
fn incomplete_utf8_tail(data: &[u8]) -> usize {
    match std::str::from_utf8(data) {
        Ok(_) => 0,
        Err(e) if e.error_len().is_none() => data.len() - e.valid_up_to(),
        Err(_) => {
            // Invalid bytes earlier; only look at the last few bytes.
            let start = data.len().saturating_sub(3);
            for i in start..data.len() {
                if let Err(e) = std::str::from_utf8(&data[i..]) {
                    if e.error_len().is_none() && e.valid_up_to() == 0 {
                        return data.len() - i;
                    }
                }
            }
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(pieces: &[Piece]) -> String {
        pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Text(t) => Some(t.as_str()),
                Piece::Event(_) => None,
            })
            .collect()
    }

    #[test]
    fn splits_events_mid_line() {
        let mut p = EventParser::new("abc");
        let out = p.feed(b"hello\x1eOIabc{\"ev\":\"done\",\"id\":3}\nafter");
        assert_eq!(out.len(), 3);
        assert_eq!(out[0], Piece::Text("hello".into()));
        assert!(matches!(&out[1], Piece::Event(e) if e.ev == "done" && e.id == 3));
        assert_eq!(out[2], Piece::Text("after".into()));
    }

    #[test]
    fn byte_by_byte() {
        let mut p = EventParser::new("n1");
        let input = "héllo\x1eOIn1{\"ev\":\"line\",\"n\":7}\nwörld\x1eOIn2 not a marker".as_bytes();
        let mut all = Vec::new();
        for b in input {
            all.extend(p.feed(std::slice::from_ref(b)));
        }
        if let Some(rest) = p.finish() {
            all.push(Piece::Text(rest));
        }
        assert_eq!(texts(&all), "héllowörld\x1eOIn2 not a marker");
        assert!(
            all.iter()
                .any(|p| matches!(p, Piece::Event(e) if e.ev == "line" && e.n == 7))
        );
    }

    #[test]
    fn bad_json_is_text() {
        let mut p = EventParser::new("x");
        let out = p.feed(b"\x1eOIx{nope\n");
        assert_eq!(texts(&out), "\x1eOIx{nope\n");
    }
}
