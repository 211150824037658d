//! Server-sent events from a byte stream, in linear time and bounded memory.
//!
//! [`EventParser`] is fed the body's bytes as they arrive, cut anywhere (even inside a line, a
//! `\r\n` pair or a UTF-8 sequence), and returns the events they complete, following the
//! HTML event-stream rules that model servers use: lines end with `\n`, `\r\n` or `\r`; a
//! leading byte-order mark is skipped; `data:` lines are joined with `\n`; `event:` names the
//! event; comments (`:`) and other fields are ignored; a blank line dispatches the event; an
//! event left open when the body ends is dropped.
//!
//! Every byte is looked at a bounded number of times (nothing is re-scanned when more bytes
//! of a long line arrive), and one line — or one event's joined data — longer than the limit
//! given to [`EventParser::new`] is an error instead of an ever-growing buffer.

use std::fmt;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `event:` name (`message` when none was given).
    pub event: String,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Why the bytes are not a usable event stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseError {
    /// One line is longer than the limit.
    LineTooLong {
        /// The limit, in bytes.
        limit: usize,
    },
    /// One event's data is longer than the limit.
    EventTooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// A line is not UTF-8.
    NotUtf8 {
        /// The line's number (1-based).
        line: u64,
    },
}

impl fmt::Display for SseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SseError::LineTooLong { limit } => write!(
                f,
                "one line of the event stream is longer than {} (the limit for one line)",
                human_bytes(*limit as u64)
            ),
            SseError::EventTooLarge { limit } => write!(
                f,
                "one event of the event stream carries more than {} of data (the limit for one line or event)",
                human_bytes(*limit as u64)
            ),
            SseError::NotUtf8 { line } => {
                write!(f, "line {line} of the event stream is not UTF-8 text")
            }
        }
    }
}

impl std::error::Error for SseError {}

/// `bytes` for people: `4 MiB`, `512 KiB`, `100 bytes`.
pub fn human_bytes(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    const GIB: u64 = 1024 * MIB;
    for (unit, name) in [(GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")] {
        if bytes >= unit && bytes % unit == 0 {
            return format!("{} {name}", bytes / unit);
        }
        if bytes >= unit {
            return format!("{:.1} {name}", bytes as f64 / unit as f64);
        }
    }
    format!("{bytes} bytes")
}

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// An incremental, capped event-stream parser.
#[derive(Debug, Clone)]
pub struct EventParser {
    max_line: usize,
    /// Bytes of the current, not yet complete line.
    line: Vec<u8>,
    /// The previous byte was a `\r` (a `\n` right after it ends nothing more).
    after_cr: bool,
    /// Whether the start of the body (and a possible byte-order mark) is behind us.
    started: bool,
    /// Complete lines so far (for error messages).
    lines: u64,
    /// The event being assembled.
    name: String,
    data: String,
    has_data: bool,
}

impl EventParser {
    /// A parser at the start of a body; lines (and one event's data) longer than
    /// `max_line_bytes` are errors.
    pub fn new(max_line_bytes: usize) -> Self {
        EventParser {
            max_line: max_line_bytes,
            line: Vec::new(),
            after_cr: false,
            started: false,
            lines: 0,
            name: String::new(),
            data: String::new(),
            has_data: false,
        }
    }

    /// Feeds the next bytes; returns the events they complete, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Event>, SseError> {
        let mut events = Vec::new();
        self.push_into(bytes, &mut events)?;
        Ok(events)
    }

    /// Feeds the next bytes and appends the events they complete to `events` — also those
    /// completed before an error, so that what is read does not depend on how the body was cut.
    pub fn push_into(&mut self, bytes: &[u8], events: &mut Vec<Event>) -> Result<(), SseError> {
        let mut rest = bytes;
        while !rest.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if rest[0] == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.extend_line(&rest[..end])?;
                    self.after_cr = rest[end] == b'\r';
                    rest = &rest[end + 1..];
                    if let Some(event) = self.end_line()? {
                        events.push(event);
                    }
                }
                None => {
                    self.extend_line(rest)?;
                    rest = &[];
                }
            }
        }
        Ok(())
    }

    /// Adds bytes to the current line, refusing a line over the limit.
    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + bytes.len() > self.max_line {
            return Err(SseError::LineTooLong {
                limit: self.max_line,
            });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    /// The current line is complete: interpret it.
    fn end_line(&mut self) -> Result<Option<Event>, SseError> {
        let raw = std::mem::take(&mut self.line);
        self.lines += 1;
        let mut bytes = raw.as_slice();
        if !self.started {
            self.started = true;
            bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
        }
        let text =
            std::str::from_utf8(bytes).map_err(|_| SseError::NotUtf8 { line: self.lines })?;
        if text.is_empty() {
            return Ok(self.dispatch());
        }
        if text.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text, ""),
        };
        match field {
            "data" => {
                if self.data.len() + value.len() + 1 > self.max_line {
                    return Err(SseError::EventTooLarge {
                        limit: self.max_line,
                    });
                }
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => value.clone_into(&mut self.name),
            _ => {}
        }
        Ok(None)
    }

    /// A blank line: the event so far, if it has data.
    fn dispatch(&mut self) -> Option<Event> {
        let mut data = std::mem::take(&mut self.data);
        let name = std::mem::take(&mut self.name);
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        data.pop();
        let event = if name.is_empty() {
            "message".to_owned()
        } else {
            name
        };
        Some(Event { event, data })
    }

    /// Bytes held for an incomplete line or event (for memory accounting).
    pub fn held_bytes(&self) -> usize {
        self.line.len() + self.data.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(pieces: &[&[u8]], limit: usize) -> Result<Vec<(String, String)>, SseError> {
        let mut parser = EventParser::new(limit);
        let mut out = Vec::new();
        for piece in pieces {
            out.extend(parser.push(piece)?.into_iter().map(|e| (e.event, e.data)));
        }
        Ok(out)
    }

    fn message(data: &str) -> (String, String) {
        ("message".to_owned(), data.to_owned())
    }

    #[test]
    fn fields_comments_and_line_endings() {
        let body: &[u8] = b"\xEF\xBB\xBF: hello\r\ndata: a\rdata:b\n\nevent: x\ndata: {\"y\": 1}\nid: 7\nretry: 10\n\ndata\n\n: only a comment\n\ndata: cut";
        assert_eq!(
            events(&[body], 100).unwrap(),
            vec![
                message("a\nb"),
                ("x".to_owned(), "{\"y\": 1}".to_owned()),
                message("")
            ]
        );
    }

    #[test]
    fn cuts_anywhere_give_the_same_events() {
        let body: &[u8] = "data: é1\r\n\r\ndata: 2\r\rdata: three\n\n".as_bytes();
        let whole = events(&[body], 100).unwrap();
        assert_eq!(whole, vec![message("é1"), message("2"), message("three")]);
        for cut in 0..body.len() {
            let (a, b) = body.split_at(cut);
            assert_eq!(events(&[a, b], 100).unwrap(), whole, "cut at {cut}");
        }
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(events(&bytes, 100).unwrap(), whole);
    }

    #[test]
    fn long_lines_and_events_are_refused() {
        assert_eq!(
            events(&[b"data: 0123456789"], 10),
            Err(SseError::LineTooLong { limit: 10 })
        );
        assert_eq!(
            events(&[b"data: 0123\n", b"data: 0123\n", b"data: 0123\n"], 10),
            Err(SseError::EventTooLarge { limit: 10 })
        );
        assert!(events(&[b"data: 012\n\n"], 10).is_ok());
        let mut parser = EventParser::new(10);
        let mut found = Vec::new();
        let error = parser.push_into(b"data: 1\n\ndata: 0123456789\n", &mut found);
        assert_eq!(error, Err(SseError::LineTooLong { limit: 10 }));
        assert_eq!(found.len(), 1, "the event before the long line is kept");
        assert_eq!(
            events(&[b"data: ok\n\ndata: \xff\n\n"], 10),
            Err(SseError::NotUtf8 { line: 3 })
        );
    }

    #[test]
    fn one_16_mib_line_takes_linear_time() {
        // eventsource-stream 0.2 re-parsed the whole buffer for every piece: 7.8 s for this
        // input in a release build, four times as long for each doubling.
        let mut body = b"data: {\"choices\":[{\"delta\":{\"content\":\"".to_vec();
        body.extend(std::iter::repeat_n(b'a', 16 << 20));
        body.extend(b"\"}}]}\n\n");
        let started = std::time::Instant::now();
        let mut parser = EventParser::new(32 << 20);
        let mut found = Vec::new();
        for piece in body.chunks(4096) {
            found.extend(parser.push(piece).unwrap());
        }
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].data.len(), body.len() - 8);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn sizes_for_people() {
        assert_eq!(human_bytes(4 << 20), "4 MiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(100), "100 bytes");
    }
}
