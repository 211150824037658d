//! Sessions kept on disk when there is no store: two files per session with a conversation,
//! `DIR/<id>.json` = `{"id": ID, "settings": {...}}` (the settings as the store keeps them:
//! [`crate::sessions::store_link::stored_settings`], credentials removed) and
//! `DIR/<id>.messages.json`, the conversation as a conversation file holds it (one JSON
//! list). Both are saved when a turn ends or parks and when the session shuts down, and read
//! back when the server starts ([`SessionFiles::newest`], [`SessionFiles::load`]). A save
//! appends what the turn added to the messages file, as oi-core saves a conversation
//! ([`oi_core::history::append()`]: the closing `]` overwritten), writes it whole (a temporary
//! file, then a rename) only when the conversation was changed otherwise, and writes the
//! settings record (atomically) only when the settings changed: a turn's save costs what the
//! turn added, not the whole conversation. A list torn by a crash mid-append is read up to its
//! last whole message. A file that is not such a record (garbage, a name that is not a valid
//! id, an id that is not its name, no messages file) is skipped with a warning and left where
//! it is.
//!
//! The folder is trusted only as far as its owner (session_folder.rs): files are written
//! `0600` in a folder made `0700`, and a folder that another user owns or may write to is not
//! read or written at all. At start only the newest sessions that fit in `--max_sessions` are
//! read, one at a time, each parsed straight into its messages, so start-up memory follows
//! what is reopened, not what the folder holds.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use oi_core::history::{self, HistoryError, Saved};
use oi_core::{Message, Settings};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::async_interpreter::AsyncInterpreter;
use crate::sessions::session_folder::{open_regular, trusted_folder};
use crate::sessions::valid_id;

/// What a reopened conversation ends with: the interpreter's variables and programs did not
/// survive the restart.
pub const RESTART_NOTE: &str = "[oi] The server restarted: this conversation was reopened \
     from its saved file; variables and running programs from before are gone.";

/// The largest session file read back (bigger ones are skipped and left in place).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The end of a session's messages file's name (`<id>.messages.json`).
const MESSAGES_SUFFIX: &str = ".messages.json";

/// A session's record as it is written: its id and its settings.
#[derive(serde::Serialize)]
struct Record<'a> {
    id: &'a str,
    settings: &'a RawValue,
}

/// A session's record as it is read.
#[derive(serde::Deserialize)]
struct Stored {
    id: String,
    #[serde(default)]
    settings: Option<Value>,
}

/// A session read back from its files.
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
    /// The settings could not be encoded.
    #[error("cannot encode session {0}: {1}")]
    Encode(String, String),
    /// A file could not be written or removed.
    #[error(transparent)]
    Write(#[from] HistoryError),
    /// The folder is not one this server may trust.
    #[error("{0}")]
    Untrusted(String),
}

/// What one session's files hold, as its last save left them.
#[derive(Debug, Default)]
struct Written {
    /// The messages file (for the next save to append to it).
    messages: Option<Saved>,
    /// The record, as written.
    record: Option<Vec<u8>>,
}

/// What a save writes to the messages file, decided while the conversation is held.
enum Write {
    /// Bytes to write over the closing `]`, and the messages they add.
    Append(Vec<u8>, Vec<Message>),
    /// The whole list, and the messages it holds.
    Whole(Vec<u8>, Vec<Message>),
}

/// The folder of session files.
#[derive(Debug)]
pub struct SessionFiles {
    dir: PathBuf,
    /// Per session id, what its files hold, locked while that session is read and written: a
    /// later write never loses to an earlier one, and sessions do not wait for each other.
    written: Mutex<HashMap<String, Arc<Mutex<Written>>>>,
}

impl SessionFiles {
    /// Session files in `dir` (created on the first write).
    pub fn new(dir: PathBuf) -> Self {
        SessionFiles {
            dir,
            written: Mutex::new(HashMap::new()),
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The record's and the messages file's names of session `id`.
    fn names(id: &str) -> Option<(String, String)> {
        valid_id(id).then(|| (format!("{id}.json"), format!("{id}{MESSAGES_SUFFIX}")))
    }

    /// What session `id`'s files hold, with its lock.
    fn written_of(&self, id: &str) -> Arc<Mutex<Written>> {
        let mut all = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        all.entry(id.to_owned()).or_default().clone()
    }

    /// Writes session `id` as `interpreter` has it now, unless `forgotten` is set by then (the
    /// session was deleted: checked under the session's lock, so a save that started before
    /// the delete never writes its files back). A session with no message has no files (ones
    /// left from before, e.g. before a reset, are removed).
    pub fn save(
        &self,
        id: &str,
        interpreter: &AsyncInterpreter,
        forgotten: &AtomicBool,
    ) -> Result<(), SessionFileError> {
        let Some((record_name, messages_name)) = Self::names(id) else {
            return Ok(());
        };
        let lock = self.written_of(id);
        let mut written = lock.lock().unwrap_or_else(PoisonError::into_inner);
        if forgotten.load(Ordering::SeqCst) {
            return Ok(());
        }
        if self.dir.exists() {
            trusted_folder(&self.dir).map_err(SessionFileError::Untrusted)?;
        }
        if interpreter.interpreter().message_count() == 0 {
            *written = Written::default();
            return self.remove_files(id);
        }
        self.save_messages(&mut written, &messages_name, interpreter)?;
        let encode = |e: String| SessionFileError::Encode(id.to_owned(), e);
        let settings = crate::sessions::store_link::stored_settings(interpreter)
            .and_then(RawValue::from_string)
            .map_err(|e| encode(e.to_string()))?;
        let record = serde_json::to_vec(&Record {
            id,
            settings: &settings,
        })
        .map_err(|e| encode(e.to_string()))?;
        if written.record.as_ref() != Some(&record) {
            written.record = None;
            history::save_json(&self.dir, &record_name, &record)?;
            written.record = Some(record);
        }
        Ok(())
    }

    /// Brings the messages file up to the conversation: appends what was added since the last
    /// save, or writes it whole (the first save, after an edit, or when the file is not as
    /// the last save left it).
    fn save_messages(
        &self,
        written: &mut Written,
        name: &str,
        interpreter: &AsyncInterpreter,
    ) -> Result<(), HistoryError> {
        let write = {
            let messages = interpreter.interpreter().messages_mut();
            let tail = match written.messages.as_ref() {
                Some(before) => history::tail(&self.dir, before, name, &messages)?
                    .map(|bytes| (bytes, before.count())),
                None => None,
            };
            match tail {
                Some((bytes, _)) if bytes.is_empty() => return Ok(()),
                Some((bytes, count)) => Write::Append(bytes, messages[count..].to_vec()),
                None => Write::Whole(
                    history::to_json(&self.dir, name, &messages)?,
                    messages.clone(),
                ),
            }
        };
        match write {
            Write::Append(bytes, new) => {
                let Some(before) = written.messages.as_mut() else {
                    return Ok(());
                };
                match history::append(&self.dir, before, &bytes) {
                    Ok(len) => before.extend(new, len),
                    Err(_) => {
                        // The file is not as this session left it: write it whole.
                        written.messages = None;
                        return self.save_messages(written, name, interpreter);
                    }
                }
            }
            Write::Whole(json, messages) => {
                written.messages = None;
                history::save_json(&self.dir, name, &json)?;
                written.messages = Some(Saved::new(name, messages, json.len() as u64));
            }
        }
        Ok(())
    }

    /// Removes the files of session `id` (the session was deleted; its `forgotten` flag is
    /// already set, so no save of it writes them again).
    pub fn remove(&self, id: &str) {
        if !valid_id(id) {
            return;
        }
        let lock = self.written_of(id);
        {
            let mut written = lock.lock().unwrap_or_else(PoisonError::into_inner);
            *written = Written::default();
            if let Err(e) = self.remove_files(id) {
                eprintln!("oi-server: {e}");
            }
        }
        let mut all = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        if all.get(id).is_some_and(|held| Arc::ptr_eq(held, &lock)) {
            all.remove(id);
        }
    }

    fn remove_files(&self, id: &str) -> Result<(), SessionFileError> {
        let Some(names) = Self::names(id) else {
            return Ok(());
        };
        // The record first: a messages file without its record is never read back.
        for name in [names.0, names.1] {
            let path = self.dir.join(name);
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(HistoryError::Io {
                        action: "remove",
                        path,
                        source: e,
                    }
                    .into());
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The ids of the sessions kept here, `first` (when it has a file) then the others by
    /// their last save, newest first, at most `limit` of them; nothing when the folder cannot
    /// be trusted (said on stderr). Files that are not named `<session id>.json` (or a
    /// session's `<id>.messages.json`) are named on stderr and left.
    pub fn newest(&self, first: &str, limit: usize) -> Vec<String> {
        if !self.dir.exists() {
            return Vec::new();
        }
        if let Err(why) = trusted_folder(&self.dir) {
            eprintln!("oi-server: no session reopened: {why}");
            return Vec::new();
        }
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut found: Vec<(String, SystemTime)> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                // Temporary files of a write cut short start with a dot.
                if name.starts_with('.') || name.ends_with(MESSAGES_SUFFIX) {
                    return None;
                }
                let Some(id) = name.strip_suffix(".json").filter(|id| valid_id(id)) else {
                    eprintln!(
                        "oi-server: skipping {}: not named <session id>.json (the file is left as it is)",
                        entry.path().display()
                    );
                    return None;
                };
                let saved = |path: PathBuf| std::fs::symlink_metadata(path)?.modified();
                let modified = saved(self.dir.join(format!("{id}{MESSAGES_SUFFIX}")))
                    .or_else(|_| saved(entry.path()))
                    .ok()?;
                Some((id.to_owned(), modified))
            })
            .collect();
        found.sort_by(|(a, at), (b, bt)| (b == first, bt).cmp(&(a == first, at)));
        found.truncate(limit);
        found.into_iter().map(|(id, _)| id).collect()
    }

    /// Reads session `id`'s files; ones that are not its record and conversation are named on
    /// stderr and left in place (None).
    pub fn load(&self, id: &str) -> Option<SavedSession> {
        let (record_name, messages_name) = Self::names(id)?;
        let record = self.dir.join(record_name);
        let read = || -> Result<SavedSession, (PathBuf, String)> {
            let stored: Stored = serde_json::from_slice(&read_capped(&record)?)
                .map_err(|e| (record.clone(), e.to_string()))?;
            if stored.id != id {
                return Err((record.clone(), "its \"id\" is not its name".to_owned()));
            }
            let settings = match stored.settings {
                None | Some(Value::Null) => None,
                Some(value) => Some(
                    settings_from(value).map_err(|e| (record.clone(), format!("settings: {e}")))?,
                ),
            };
            let path = self.dir.join(&messages_name);
            let messages = messages_from(read_capped(&path)?).map_err(|e| (path, e))?;
            Ok(SavedSession {
                id: stored.id,
                messages,
                settings,
            })
        };
        match read() {
            Ok(saved) => Some(saved),
            Err((path, reason)) => {
                eprintln!(
                    "oi-server: skipping session {id}: {}: {reason} (the files are left as they are)",
                    path.display()
                );
                None
            }
        }
    }
}

/// The bytes of the regular file at `path`, at most [`MAX_FILE_BYTES`].
fn read_capped(path: &Path) -> Result<Vec<u8>, (PathBuf, String)> {
    let fail = |e: String| (path.to_owned(), e);
    let file = open_regular(path).map_err(|e| fail(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(fail(format!("larger than {MAX_FILE_BYTES} bytes")));
    }
    Ok(bytes)
}

/// The messages of a messages file: the whole list, or the whole messages before a tear (a
/// crash in the middle of an append).
fn messages_from(bytes: Vec<u8>) -> Result<Vec<Message>, String> {
    if let Ok(messages) = serde_json::from_slice::<Vec<Message>>(&bytes) {
        return Ok(messages);
    }
    let text = String::from_utf8_lossy(&bytes);
    history::whole_prefix(&text).ok_or_else(|| "not a list of messages".to_owned())
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

    /// Writes session `id`'s two files by hand, as a save would.
    fn plant(dir: &Path, id: &str, settings: Option<Value>) {
        let record = match settings {
            Some(settings) => serde_json::json!({"id": id, "settings": settings}),
            None => serde_json::json!({"id": id}),
        };
        std::fs::write(dir.join(format!("{id}.json")), record.to_string()).unwrap();
        let messages = serde_json::json!([{"role": "user", "type": "message", "content": id}]);
        std::fs::write(
            dir.join(format!("{id}{MESSAGES_SUFFIX}")),
            messages.to_string(),
        )
        .unwrap();
    }

    #[test]
    fn bad_files_are_skipped_and_left_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().to_owned());
        plant(
            dir.path(),
            "a",
            Some(serde_json::to_value(Settings::default()).unwrap()),
        );
        std::fs::write(dir.path().join("b.json"), b"\x00\xffgarbage").unwrap();
        std::fs::write(dir.path().join("bad id!.json"), b"{}").unwrap();
        plant(dir.path(), "c", None);
        std::fs::write(dir.path().join("c.json"), br#"{"id": "a"}"#).unwrap();
        plant(dir.path(), "d", None);
        std::fs::write(dir.path().join("d.messages.json"), b"{}").unwrap();
        let ids = files.newest("default", 10);
        assert_eq!(ids.len(), 4, "{ids:?}");
        let loaded: Vec<_> = ids.iter().filter_map(|id| files.load(id)).collect();
        assert_eq!(
            loaded,
            vec![SavedSession {
                id: "a".into(),
                messages: vec![Message::user("a")],
                settings: Some(Settings::default()),
            }]
        );
        for name in [
            "b.json",
            "bad id!.json",
            "c.json",
            "d.json",
            "d.messages.json",
        ] {
            assert!(dir.path().join(name).exists(), "{name}");
        }
    }

    #[test]
    fn only_the_newest_that_fit_are_listed_the_first_named_first() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().to_owned());
        for (id, age) in [("old", 300), ("default", 200), ("mid", 100), ("new", 0)] {
            plant(dir.path(), id, None);
            let path = dir.path().join(format!("{id}{MESSAGES_SUFFIX}"));
            let when = SystemTime::now() - std::time::Duration::from_secs(age);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        assert_eq!(files.newest("default", 3), vec!["default", "new", "mid"]);
    }

    #[test]
    fn a_folder_others_may_write_to_is_neither_read_nor_written() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        plant(dir.path(), "a", None);
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let files = SessionFiles::new(dir.path().to_owned());
        assert_eq!(files.newest("default", 10), Vec::<String>::new());
        let why = trusted_folder(dir.path()).unwrap_err();
        assert!(why.contains("chmod 700"), "{why}");
        // A folder of ours that others may only read is made ours alone.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(files.newest("default", 10), vec!["a"]);
        let mode = std::fs::metadata(dir.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn a_link_or_a_pipe_at_a_sessions_name_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        plant(dir.path(), "l", None);
        plant(dir.path(), "p", None);
        let folder = dir.path().join("sessions");
        std::fs::create_dir(&folder).unwrap();
        for name in ["l.json", "l.messages.json"] {
            std::os::unix::fs::symlink(dir.path().join(name), folder.join(name)).unwrap();
        }
        std::fs::rename(dir.path().join("p.json"), folder.join("p.json")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            folder.join("p.messages.json"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let files = SessionFiles::new(folder);
        assert_eq!(files.load("l"), None);
        assert_eq!(files.load("p"), None);
    }

    fn interpreter_saying(text: &str) -> AsyncInterpreter {
        let settings = Settings {
            conversation_history: false,
            ..Settings::default()
        };
        let oi = oi_core::Interpreter::new(
            settings,
            Arc::new(oi_testkit::ScriptedModel::new([])),
            Arc::new(oi_testkit::RecordingComputer::new()),
            oi_judge::judge(),
        );
        oi.set_messages(vec![Message::user(text)]);
        AsyncInterpreter::new(oi, oi_session::InterruptMode::Interrupt)
    }

    #[tokio::test]
    async fn a_turn_appends_what_it_added_and_a_torn_end_is_read_to_its_last_message() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().to_owned());
        let interpreter = interpreter_saying("one");
        let kept = AtomicBool::new(false);
        files.save("s", &interpreter, &kept).unwrap();
        let record = dir.path().join("s.json");
        let messages = dir.path().join("s.messages.json");
        let record_written = std::fs::metadata(&record).unwrap().modified().unwrap();
        let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
        let first = inode(&messages);
        interpreter
            .interpreter()
            .append_messages([Message::assistant("two")]);
        files.save("s", &interpreter, &kept).unwrap();
        // Appended in place (same file), the record left as it was (same settings).
        assert_eq!(inode(&messages), first);
        assert_eq!(
            std::fs::metadata(&record).unwrap().modified().unwrap(),
            record_written
        );
        let expected = vec![Message::user("one"), Message::assistant("two")];
        assert_eq!(files.load("s").unwrap().messages, expected);
        // A crash in the middle of the next append.
        let mut torn = std::fs::read(&messages).unwrap();
        torn.pop();
        torn.extend_from_slice(br#",{"role":"user","type":"mess"#);
        std::fs::write(&messages, torn).unwrap();
        assert_eq!(files.load("s").unwrap().messages, expected);
    }

    #[tokio::test]
    async fn a_deleted_session_is_never_written_back() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().join("sessions"));
        let interpreter = interpreter_saying("hi");
        let forgotten = AtomicBool::new(false);
        files.save("s", &interpreter, &forgotten).unwrap();
        assert!(files.load("s").is_some());
        // The delete: the mark first, then the files; a save that comes after writes nothing.
        forgotten.store(true, Ordering::SeqCst);
        files.remove("s");
        files.save("s", &interpreter, &forgotten).unwrap();
        let left: Vec<_> = std::fs::read_dir(dir.path().join("sessions"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, Vec::<std::ffi::OsString>::new());
    }
}
