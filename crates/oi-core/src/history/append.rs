//! Saving what a turn added: the file stays the original's format (one JSON list, no
//! spaces), and a save that only adds messages overwrites the closing `]` with `,` + the new
//! messages + `]` instead of writing the whole conversation again. A write torn by a crash
//! leaves a list without its end, which [`super::load`] detects and repairs.

use std::path::Path;

use super::HistoryError;
use crate::lmc::Message;

/// What a conversation file holds after a save, for the next save to append to it.
///
/// It keeps a copy of the messages written: the next save compares the conversation's start
/// with it (a comparison costs far less than writing the file again) and appends only when
/// the conversation was added to, not changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Saved {
    /// The file's name in its folder.
    pub filename: String,
    /// The messages it holds.
    messages: Vec<Message>,
    /// The file's length in bytes.
    pub len: u64,
}

impl Saved {
    /// The file `filename` as it is once `messages` were written to it, `len` bytes long.
    pub fn new(filename: &str, messages: Vec<Message>, len: u64) -> Self {
        Saved {
            filename: filename.to_owned(),
            messages,
            len,
        }
    }

    /// How many messages the file holds.
    pub fn count(&self) -> usize {
        self.messages.len()
    }

    /// The file once `new` messages were appended to it ([`append()`]), `len` bytes long now.
    pub fn extend(&mut self, new: impl IntoIterator<Item = Message>, len: u64) {
        self.messages.extend(new);
        self.len = len;
    }
}

fn json(dir: &Path, filename: &str, message: &Message) -> Result<Vec<u8>, HistoryError> {
    serde_json::to_vec(message).map_err(|e| HistoryError::Invalid {
        path: dir.join(filename),
        reason: e.to_string(),
    })
}

/// What to write over the closing `]` of the file `saved` describes so that it holds
/// `messages` (`,` + each new message + `]`; empty when there is nothing new), or `None` when
/// the file must be written whole: another file, an empty one, or the messages saved are no
/// longer the start of the conversation (it was edited, cut or replaced, not only added to).
pub fn tail(
    dir: &Path,
    saved: &Saved,
    filename: &str,
    messages: &[Message],
) -> Result<Option<Vec<u8>>, HistoryError> {
    let count = saved.count();
    if saved.filename != filename || count == 0 || !messages.starts_with(&saved.messages) {
        return Ok(None);
    }
    let new = &messages[count..];
    if new.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let mut tail = Vec::new();
    for message in new {
        tail.push(b',');
        tail.extend(json(dir, filename, message)?);
    }
    tail.push(b']');
    Ok(Some(tail))
}

/// Writes `tail` over the closing `]` of the file `saved` describes; its new length. Fails
/// (and writes nothing) when the file is not as `saved` says (another writer changed it):
/// the caller then writes it whole.
///
/// The write is not flushed to the disk (no `fsync`, as the original never flushes its
/// saves): a process that dies loses nothing written, and a machine that loses power may
/// lose the last appends or leave a torn end, which [`super::load`] repairs. The flush was
/// most of a save's CPU; whole saves still flush before their rename.
pub fn append(dir: &Path, saved: &Saved, tail: &[u8]) -> Result<u64, HistoryError> {
    let path = dir.join(&saved.filename);
    let io_error = |source| HistoryError::Io {
        action: "append to",
        path: path.clone(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    let file = options.open(&path).map_err(io_error)?;
    let len = file.metadata().map_err(io_error)?.len();
    if len != saved.len || len < 2 {
        return Err(io_error(std::io::Error::other(
            "the file changed since it was saved",
        )));
    }
    write_at(&file, tail, len - 1).map_err(io_error)?;
    Ok(len - 1 + tail.len() as u64)
}

#[cfg(unix)]
fn write_at(file: &std::fs::File, bytes: &[u8], at: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(bytes, at)
}

#[cfg(not(unix))]
fn write_at(mut file: &std::fs::File, bytes: &[u8], at: u64) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    file.seek(SeekFrom::Start(at))?;
    file.write_all(bytes)
}

/// The messages at the start of a torn list (`[m1,m2,{"ro…`, or trailing zeros after a
/// crash): every whole message before the tear; none for a file a session claimed and a
/// crash left empty (or zeros). `None` when `text` is no list at all.
pub fn whole_prefix(text: &str) -> Option<Vec<Message>> {
    let text = text.trim_start();
    if text
        .trim_matches(|c: char| c == '\0' || c.is_whitespace())
        .is_empty()
    {
        return Some(Vec::new());
    }
    let mut rest = text.strip_prefix('[')?;
    let mut messages = Vec::new();
    loop {
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Message>();
        let Some(Ok(message)) = values.next() else {
            break;
        };
        messages.push(message);
        rest = rest[values.byte_offset()..].trim_start();
        match rest.strip_prefix(',') {
            Some(after) => rest = after,
            None => break,
        }
    }
    Some(messages)
}
