//! Sessions kept on disk when there is no store: one file per session with a conversation,
//! `DIR/<id>.json` = `{"id": ID, "settings": {...}, "messages": [...]}` (the settings as the
//! store keeps them: [`crate::sessions::store_link::snapshot`], credentials removed), written
//! atomically (a temporary file, then a rename) when a turn ends or parks and when the
//! session shuts down, and read back when the server starts ([`SessionFiles::load_all`]).
//! A file that is not such a record (garbage, a name that is not a valid id, an id that is
//! not its name) is skipped with a warning and left where it is.
//!
//! The folder is trusted only as far as its owner: files are written `0600` in a folder made
//! `0700`, and a folder that another user owns or may write to is not read or written at all
//! (what is read back becomes a conversation the model is shown). At start only the newest
//! files that fit in `--max_sessions` are read, one at a time, each parsed straight into its
//! messages, so start-up memory follows what is reopened, not what the folder holds.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use oi_core::{Message, Settings};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::async_interpreter::AsyncInterpreter;
use crate::sessions::valid_id;

/// What a reopened conversation ends with: the interpreter's variables and programs did not
/// survive the restart.
pub const RESTART_NOTE: &str = "[oi] The server restarted: this conversation was reopened \
     from its saved file; variables and running programs from before are gone.";

/// The largest session file read back (bigger ones are skipped and left in place).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// A session's file as it is written: its id, its settings and its messages.
#[derive(serde::Serialize)]
struct Record<'a> {
    id: &'a str,
    settings: &'a RawValue,
    messages: &'a [Message],
}

/// A session's file as it is read: the messages parsed straight into their type.
#[derive(serde::Deserialize)]
struct Stored {
    id: String,
    #[serde(default)]
    settings: Option<Value>,
    messages: Vec<Message>,
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
    /// The folder is not one this server may trust.
    #[error("{0}")]
    Untrusted(String),
}

/// The folder of session files.
#[derive(Debug)]
pub struct SessionFiles {
    dir: PathBuf,
    /// One lock per session id, held while that session is read and written: a later write
    /// never loses to an earlier one, and sessions do not wait for each other.
    writing: Mutex<HashMap<String, Arc<Mutex<()>>>>,
}

impl SessionFiles {
    /// Session files in `dir` (created on the first write).
    pub fn new(dir: PathBuf) -> Self {
        SessionFiles {
            dir,
            writing: Mutex::new(HashMap::new()),
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn file_name(id: &str) -> Option<String> {
        valid_id(id).then(|| format!("{id}.json"))
    }

    /// The lock of session `id`'s file.
    fn lock_of(&self, id: &str) -> Arc<Mutex<()>> {
        let mut locks = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        locks.entry(id.to_owned()).or_default().clone()
    }

    /// Writes session `id` as `interpreter` has it now, unless `forgotten` is set by then (the
    /// session was deleted: checked under the file's lock, so a save that started before the
    /// delete never writes the file back). A session with no message has no file (one left
    /// from before, e.g. before a reset, is removed).
    pub fn save(
        &self,
        id: &str,
        interpreter: &AsyncInterpreter,
        forgotten: &AtomicBool,
    ) -> Result<(), SessionFileError> {
        let Some(name) = Self::file_name(id) else {
            return Ok(());
        };
        let lock = self.lock_of(id);
        let _writing = lock.lock().unwrap_or_else(PoisonError::into_inner);
        if forgotten.load(Ordering::SeqCst) {
            return Ok(());
        }
        if self.dir.exists() {
            trusted_folder(&self.dir).map_err(SessionFileError::Untrusted)?;
        }
        if interpreter.interpreter().message_count() == 0 {
            return self.remove_locked(&name);
        }
        let encode = |e: String| SessionFileError::Encode(id.to_owned(), e);
        let settings = crate::sessions::store_link::stored_settings(interpreter)
            .and_then(RawValue::from_string)
            .map_err(|e| encode(e.to_string()))?;
        // The messages are written from where they are, in one pass (a long conversation is
        // the largest thing a turn writes: no copy of it, no parse of what was written).
        let json = {
            let messages = interpreter.interpreter().messages_mut();
            serde_json::to_vec(&Record {
                id,
                settings: &settings,
                messages: &messages,
            })
            .map_err(|e| encode(e.to_string()))?
        };
        oi_core::history::save_json(&self.dir, &name, &json)?;
        Ok(())
    }

    /// Removes the file of session `id` (the session was deleted; its `forgotten` flag is
    /// already set, so no save of it writes the file again).
    pub fn remove(&self, id: &str) {
        let Some(name) = Self::file_name(id) else {
            return;
        };
        let lock = self.lock_of(id);
        {
            let _writing = lock.lock().unwrap_or_else(PoisonError::into_inner);
            if let Err(e) = self.remove_locked(&name) {
                eprintln!("oi-server: {e}");
            }
        }
        let mut locks = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        if locks.get(id).is_some_and(|held| Arc::ptr_eq(held, &lock)) {
            locks.remove(id);
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

    /// The ids of the sessions kept here, `first` (when it has a file) then the others newest
    /// first, at most `limit` of them; nothing when the folder cannot be trusted (said on
    /// stderr). Files that are not named `<session id>.json` are not listed.
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
                if name.starts_with('.') {
                    return None;
                }
                let Some(id) = name.strip_suffix(".json").filter(|id| valid_id(id)) else {
                    eprintln!(
                        "oi-server: skipping {}: not named <session id>.json (the file is left as it is)",
                        entry.path().display()
                    );
                    return None;
                };
                let modified = entry.metadata().and_then(|m| m.modified()).ok()?;
                Some((id.to_owned(), modified))
            })
            .collect();
        found.sort_by(|(a, at), (b, bt)| (b == first, bt).cmp(&(a == first, at)));
        found.truncate(limit);
        found.into_iter().map(|(id, _)| id).collect()
    }

    /// Reads session `id`'s file; a file that is not its record is named on stderr and left
    /// in place (None).
    pub fn load(&self, id: &str) -> Option<SavedSession> {
        let name = Self::file_name(id)?;
        let path = self.dir.join(&name);
        match read(&path, id) {
            Ok(saved) => Some(saved),
            Err(reason) => {
                eprintln!(
                    "oi-server: skipping {}: {reason} (the file is left as it is)",
                    path.display()
                );
                None
            }
        }
    }
}

/// Whether `dir` is a folder this server may read sessions from and write them to: a real
/// folder (not a link), owned by this user, that no other user may write to. A folder of
/// ours that others may read is made `0700`.
fn trusted_folder(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot read the sessions folder {}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!(
            "the sessions folder {} is not a folder (a link or a file): give --sessions_dir a folder of your own",
            dir.display()
        ));
    }
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(format!(
            "the sessions folder {} belongs to user {}, not to this user ({me}): give --sessions_dir a folder of your own",
            dir.display(),
            meta.uid()
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o022 != 0 {
        return Err(format!(
            "other users may write to the sessions folder {} (mode {mode:o}): run `chmod 700 {}`",
            dir.display(),
            dir.display()
        ));
    }
    if mode & 0o077 != 0 {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    Ok(())
}

/// Reads the session file of `id` at `path`.
fn read(path: &Path, id: &str) -> Result<SavedSession, String> {
    let file = open_regular(path).map_err(|e| e.to_string())?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("larger than {MAX_FILE_BYTES} bytes"));
    }
    let stored: Stored = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
    drop(bytes);
    if stored.id != id {
        return Err("its \"id\" is not its name".to_owned());
    }
    let settings = match stored.settings {
        None | Some(Value::Null) => None,
        Some(value) => Some(settings_from(value).map_err(|e| format!("settings: {e}"))?),
    };
    Ok(SavedSession {
        id: stored.id,
        messages: stored.messages,
        settings,
    })
}

/// Opens `path` for reading if it is a regular file: opened without following a link and
/// without waiting on a pipe, then checked on the open file itself (no window between a
/// check of the name and the open).
fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = std::fs::File::from(rustix::fs::open(path, flags, Mode::empty())?);
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
        let ids = files.newest("default", 10);
        assert_eq!(ids.len(), 3, "{ids:?}");
        let loaded: Vec<_> = ids.iter().filter_map(|id| files.load(id)).collect();
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

    fn record(id: &str) -> String {
        serde_json::json!({
            "id": id,
            "messages": [{"role": "user", "type": "message", "content": id}],
        })
        .to_string()
    }

    #[test]
    fn only_the_newest_that_fit_are_listed_the_first_named_first() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().to_owned());
        for (id, age) in [("old", 300), ("default", 200), ("mid", 100), ("new", 0)] {
            let path = dir.path().join(format!("{id}.json"));
            std::fs::write(&path, record(id)).unwrap();
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
        std::fs::write(dir.path().join("a.json"), record("a")).unwrap();
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
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, record("l")).unwrap();
        let folder = dir.path().join("sessions");
        std::fs::create_dir(&folder).unwrap();
        std::os::unix::fs::symlink(&outside, folder.join("l.json")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            folder.join("p.json"),
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
    async fn a_deleted_session_is_never_written_back() {
        let dir = tempfile::tempdir().unwrap();
        let files = SessionFiles::new(dir.path().join("sessions"));
        let interpreter = interpreter_saying("hi");
        let forgotten = AtomicBool::new(false);
        files.save("s", &interpreter, &forgotten).unwrap();
        assert!(files.load("s").is_some());
        // The delete: the mark first, then the file; a save that comes after writes nothing.
        forgotten.store(true, Ordering::SeqCst);
        files.remove("s");
        files.save("s", &interpreter, &forgotten).unwrap();
        assert!(!dir.path().join("sessions/s.json").exists());
    }
}
