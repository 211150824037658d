//! Sessions kept on disk when there is no store: one file per session with a conversation,
//! `DIR/<id>.json` = `{"id": ID, "settings": {...}, "messages": [...]}` (the settings as the
//! store keeps them: [`crate::sessions::store_link::snapshot`], credentials removed), written
//! atomically (a temporary file, then a rename) when a turn ends or parks and when the
//! session shuts down, and read back when the server starts ([`SessionFiles::load_all`]).
//! A file that is not such a record (garbage, a name that is not a valid id, an id that is
//! not its name) is skipped with a warning and left where it is.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use oi_core::{Message, Settings};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::async_interpreter::AsyncInterpreter;
use crate::sessions::valid_id;

/// What a reopened conversation ends with: the interpreter's variables and programs did not
/// survive the restart.
pub const RESTART_NOTE: &str = "[oi] The server restarted: this conversation was reopened \
     from its saved file; variables and running programs from before are gone.";

/// The largest session file read back (bigger ones are skipped).
const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// A session's file as it is written: its id, its settings and its messages.
#[derive(serde::Serialize)]
struct Record<'a> {
    id: &'a str,
    settings: &'a RawValue,
    messages: &'a RawValue,
}

/// A session read back from its file.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedSession {
    /// Its id (the file's name).
    pub id: String,
    /// Its conversation.
    pub messages: Vec<Message>,
    /// Its settings as written: only their data is taken (settings_adopt.rs, reopen.rs).
    pub settings: Option<Settings>,
}

/// Why a session could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SessionFileError {
    /// The conversation or settings could not be encoded.
    #[error("cannot encode session {0}: {1}")]
    Encode(String, String),
    /// The file could not be written or removed.
    #[error(transparent)]
    Write(#[from] oi_core::history::HistoryError),
}

/// The folder of session files.
#[derive(Debug)]
pub struct SessionFiles {
    dir: PathBuf,
    /// Held while a session is read and written: a later write never loses to an earlier one.
    writing: Mutex<()>,
}

impl SessionFiles {
    /// Session files in `dir` (created on the first write).
    pub fn new(dir: PathBuf) -> Self {
        SessionFiles {
            dir,
            writing: Mutex::new(()),
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn file_name(id: &str) -> Option<String> {
        valid_id(id).then(|| format!("{id}.json"))
    }

    /// Writes session `id` as `interpreter` has it now; a session with no message has no
    /// file (one left from before, e.g. before a reset, is removed).
    pub fn save(&self, id: &str, interpreter: &AsyncInterpreter) -> Result<(), SessionFileError> {
        let Some(name) = Self::file_name(id) else {
            return Ok(());
        };
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        if interpreter.interpreter().message_count() == 0 {
            return self.remove_locked(&name);
        }
        let encode = |e: String| SessionFileError::Encode(id.to_owned(), e);
        let snapshot = crate::sessions::store_link::snapshot(interpreter, false)
            .map_err(|e| encode(e.to_string()))?;
        // The texts are written as they are (checked, not parsed into values and written
        // again: a long conversation is the largest thing a turn writes).
        let raw = |text: String| RawValue::from_string(text).map_err(|e| encode(e.to_string()));
        let record = Record {
            id,
            settings: &raw(snapshot.settings)?,
            messages: &raw(snapshot.messages)?,
        };
        let json = serde_json::to_vec(&record).map_err(|e| encode(e.to_string()))?;
        oi_core::history::save_json(&self.dir, &name, &json)?;
        Ok(())
    }

    /// Removes the file of session `id` (the session was deleted).
    pub fn remove(&self, id: &str) {
        let Some(name) = Self::file_name(id) else {
            return;
        };
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(e) = self.remove_locked(&name) {
            eprintln!("oi-server: {e}");
        }
    }

    fn remove_locked(&self, name: &str) -> Result<(), SessionFileError> {
        let path = self.dir.join(name);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(oi_core::history::HistoryError::Io {
                    action: "remove",
                    path,
                    source: e,
                }
                .into())
            }
            _ => Ok(()),
        }
    }

    /// Every session file that reads as one, sorted by id; the others are named on stderr
    /// and left in place.
    pub fn load_all(&self) -> Vec<SavedSession> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut sessions: Vec<SavedSession> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                // Temporary files of a write cut short.
                if name.starts_with('.') {
                    return None;
                }
                match read(&entry.path(), &name) {
                    Ok(saved) => Some(saved),
                    Err(reason) => {
                        eprintln!(
                            "oi-server: skipping {}: {reason} (the file is left as it is)",
                            entry.path().display()
                        );
                        None
                    }
                }
            })
            .collect();
        sessions.sort_by(|a, b| a.id.cmp(&b.id));
        sessions
    }
}

/// Reads one session file named `name`.
fn read(path: &Path, name: &str) -> Result<SavedSession, String> {
    let id = name
        .strip_suffix(".json")
        .filter(|id| valid_id(id))
        .ok_or("not named <session id>.json")?;
    let file = open_regular(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("larger than {MAX_FILE_BYTES} bytes"));
    }
    let record: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    if record.get("id").and_then(Value::as_str) != Some(id) {
        return Err("its \"id\" is not its name".to_owned());
    }
    let messages = record.get("messages").cloned().ok_or("no \"messages\"")?;
    let messages: Vec<Message> =
        serde_json::from_value(messages).map_err(|e| format!("messages: {e}"))?;
    let settings = match record.get("settings") {
        None | Some(Value::Null) => None,
        Some(value) => Some(settings_from(value.clone()).map_err(|e| format!("settings: {e}"))?),
    };
    Ok(SavedSession {
        id: id.to_owned(),
        messages,
        settings,
    })
}

/// Opens `path` for reading if it is a regular file (not a link, a pipe or a folder).
fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    if !std::fs::symlink_metadata(path)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let file = std::fs::File::open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(file)
}

/// The settings of a record, without the runtime state written among them (the reopened
/// session chooses its own conversation file).
fn settings_from(mut value: Value) -> Result<Settings, serde_json::Error> {
    if let Some(fields) = value.as_object_mut() {
        fields.remove(oi_core::runtime::CONVERSATION_FILENAME);
    }
    serde_json::from_value(value)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn bad_files_are_skipped_and_left_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().to_owned());
        let good = serde_json::json!({
            "id": "a",
            "settings": serde_json::to_value(Settings::default()).unwrap(),
            "messages": [{"role": "user", "type": "message", "content": "hi"}],
        });
        std::fs::write(dir.path().join("a.json"), good.to_string()).unwrap();
        std::fs::write(dir.path().join("b.json"), b"\x00\xffgarbage").unwrap();
        std::fs::write(dir.path().join("bad id!.json"), good.to_string()).unwrap();
        std::fs::write(dir.path().join("c.json"), good.to_string()).unwrap();
        let loaded = files.load_all();
        assert_eq!(
            loaded,
            vec![SavedSession {
                id: "a".into(),
                messages: vec![Message::user("hi")],
                settings: Some(Settings::default()),
            }]
        );
        for name in ["b.json", "bad id!.json", "c.json"] {
            assert!(dir.path().join(name).exists(), "{name}");
        }
    }
}
