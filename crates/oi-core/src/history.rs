//! Conversation history files, named and written as Open Interpreter does (spec e.5), but
//! atomically (a temp file in the same directory, then a rename), each session in a file of
//! its own ([`claim`]), and after the first save by what each turn added ([`append()`]).

mod append;

pub use append::{Saved, append, tail, whole_prefix};

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::lmc::Message;

/// Why a conversation could not be saved or loaded.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// A filesystem error, with the path.
    #[error("could not {action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a JSON list of LMC messages.
    #[error("{path} is not a saved conversation: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
}

/// The file name Open Interpreter gives a conversation: the first words of the first message,
/// then `__`, then the local time as `%B_%d_%Y_%H-%M-%S`, then `.json`.
pub fn conversation_filename(messages: &[Message], now: chrono::DateTime<chrono::Local>) -> String {
    let first = messages.first().map(Message::text).unwrap_or("");
    let head: String = first.chars().take(25).collect();
    let words: Vec<&str> = head.split(' ').collect();
    let stem = if words.len() >= 2 {
        words[..words.len() - 1].join("_")
    } else {
        first.chars().take(15).collect()
    };
    let stem: String = stem
        .chars()
        .filter(|c| !"<>:\"/\\|?*!\n\r".contains(*c))
        .collect();
    format!("{stem}__{}.json", now.format("%B_%d_%Y_%H-%M-%S"))
}

/// Writes `messages` as a JSON list to `dir/filename`, atomically.
pub fn save(dir: &Path, filename: &str, messages: &[Message]) -> Result<PathBuf, HistoryError> {
    let json = to_json(dir, filename, messages)?;
    save_json(dir, filename, &json)
}

/// `messages` as the JSON list a conversation file holds (`dir/filename` names it in the
/// error), for [`save_json`].
pub fn to_json(dir: &Path, filename: &str, messages: &[Message]) -> Result<Vec<u8>, HistoryError> {
    serde_json::to_vec(messages).map_err(|e| HistoryError::Invalid {
        path: dir.join(filename),
        reason: e.to_string(),
    })
}

/// Claims a new conversation file in `dir` for `messages`: the original's name
/// ([`conversation_filename`]) if no file has it yet, else that name with a short unique
/// suffix before `.json` (`…_18-29-20-3fa9.json`). The file is created empty with `O_EXCL`,
/// so two sessions — of one process, of two processes, of two replicas sharing the folder —
/// never get the same name, whatever their first words and second.
pub fn claim(
    dir: &Path,
    messages: &[Message],
    now: chrono::DateTime<chrono::Local>,
) -> Result<String, HistoryError> {
    create_dir(dir)?;
    let base = conversation_filename(messages, now);
    let stem = base.strip_suffix(".json").unwrap_or(&base);
    let mut last = None;
    for attempt in 0..64 {
        let name = match attempt {
            0 => base.clone(),
            1..32 => format!("{stem}-{:04x}.json", unique() & 0xffff),
            _ => format!("{stem}-{:016x}.json", unique()),
        };
        match create_new(&dir.join(&name)) {
            Ok(_) => return Ok(name),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(source) => {
                return Err(HistoryError::Io {
                    action: "create",
                    path: dir.join(name),
                    source,
                });
            }
        }
    }
    Err(HistoryError::Io {
        action: "create",
        path: dir.join(base),
        source: last.unwrap_or_else(|| std::io::Error::other("no free name")),
    })
}

/// A number no other call of this process, and almost surely no other process, gets: the
/// process's random hash keys over the time, the process id and a counter.
fn unique() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    hasher.write_u128(nanos);
    hasher.finish()
}

/// Creates `path`, failing if anything (a file, a symbolic link) is there already; readable
/// by its owner only (`0600`: a conversation holds what the user and their code said).
fn create_new(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW).mode(0o600);
    }
    options.open(path)
}

/// Creates `dir` and the folders above it that are missing; those it creates are its
/// owner's only (`0700`); folders already there keep their modes.
fn create_dir(dir: &Path) -> Result<(), HistoryError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|source| HistoryError::Io {
        action: "create",
        path: dir.to_owned(),
        source,
    })
}

/// Writes a conversation already written as a JSON list (`json`) to `dir/filename`,
/// atomically (so a caller can write the list while it holds the conversation, without
/// copying it): into a temporary file of its own (a new name per write, created with
/// `O_EXCL|O_NOFOLLOW`), then renamed over the file.
pub fn save_json(dir: &Path, filename: &str, json: &[u8]) -> Result<PathBuf, HistoryError> {
    create_dir(dir)?;
    let path = dir.join(filename);
    let io_error = |source| HistoryError::Io {
        action: "write",
        path: path.clone(),
        source,
    };
    let (tmp, mut file) = temporary(dir, filename).map_err(io_error)?;
    let mut write = || -> std::io::Result<()> {
        file.write_all(json)?;
        file.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    write().map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        io_error(source)
    })?;
    Ok(path)
}

/// A new temporary file beside `dir/filename`, its name unique to this write.
fn temporary(dir: &Path, filename: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    loop {
        let tmp = dir.join(format!(".{filename}.{:016x}.tmp", unique()));
        match create_new(&tmp) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Reads a saved conversation. A list torn by a crash in the middle of an [`append()`] (no
/// closing `]`, a message cut short, zeros) is repaired: its whole messages are kept, and
/// the file is written again with them (a file left empty by a crash before its first save
/// becomes `[]`).
pub fn load(path: &Path) -> Result<Vec<Message>, HistoryError> {
    let bytes = std::fs::read(path).map_err(|source| HistoryError::Io {
        action: "read",
        path: path.to_owned(),
        source,
    })?;
    // A write torn in the middle of a character leaves the text before it.
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            String::from_utf8_lossy(&e.into_bytes()[..valid]).into_owned()
        }
    };
    let invalid = match Message::list_from_json(&text) {
        Ok(messages) => return Ok(messages),
        Err(e) => HistoryError::Invalid {
            path: path.to_owned(),
            reason: e.to_string(),
        },
    };
    let Some(messages) = append::whole_prefix(&text) else {
        return Err(invalid);
    };
    if let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) {
        // Best effort: the messages are read whatever happens to the file.
        let _ = save(dir, name, &messages);
    }
    Ok(messages)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn names_like_the_original() {
        let now = chrono::Local
            .with_ymd_and_hms(2025, 7, 29, 18, 29, 20)
            .single()
            .unwrap();
        let name = |text: &str| conversation_filename(&[Message::user(text)], now);
        assert_eq!(
            name("Make me a simple Pomodoro app."),
            "Make_me_a_simple__July_29_2025_18-29-20.json"
        );
        assert_eq!(name("Whats 34/24?"), "Whats__July_29_2025_18-29-20.json");
    }

    #[test]
    fn saves_atomically_and_loads_back() {
        let dir = tempfile::tempdir().unwrap();
        let messages = vec![Message::user("hi"), Message::assistant("hello")];
        let path = save(dir.path(), "a.json", &messages).unwrap();
        assert_eq!(load(&path).unwrap(), messages);
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.json")]);
    }

    #[cfg(unix)]
    #[test]
    fn saved_conversations_and_the_folders_made_for_them_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("made").join("here");
        let path = save(&folder, "a.json", &[Message::user("secret")]).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            (mode(&path), mode(&folder), mode(&dir.path().join("made"))),
            (0o600, 0o700, 0o700)
        );
    }

    #[test]
    fn claims_a_name_of_its_own_when_the_original_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let now = chrono::Local
            .with_ymd_and_hms(2025, 7, 29, 18, 29, 20)
            .single()
            .unwrap();
        let messages = [Message::user("zebra collide test session 0")];
        let names: std::collections::BTreeSet<String> = (0..50)
            .map(|_| claim(dir.path(), &messages, now).unwrap())
            .collect();
        assert_eq!(names.len(), 50);
        assert!(names.contains("zebra_collide_test__July_29_2025_18-29-20.json"));
        for name in &names {
            assert!(
                name.starts_with("zebra_collide_test__July_29_2025_18-29-20"),
                "{name}"
            );
            assert!(name.ends_with(".json"), "{name}");
        }
    }

    fn conversation(n: usize) -> Vec<Message> {
        (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    Message::user(format!("question {i}, with \"quotes\" ] [ and é"))
                } else {
                    Message::assistant(format!("answer {i}"))
                }
            })
            .collect()
    }

    /// Saves `messages` turn by turn (two messages a turn) the way the respond loop does.
    fn save_by_turns(dir: &Path, messages: &[Message]) -> Saved {
        let first = &messages[..2];
        let json = to_json(dir, "c.json", first).unwrap();
        save_json(dir, "c.json", &json).unwrap();
        let mut saved = Saved::new("c.json", first.to_vec(), json.len() as u64);
        for end in (4..=messages.len()).step_by(2) {
            let now = &messages[..end];
            let bytes = tail(dir, &saved, "c.json", now).unwrap().unwrap();
            let len = append(dir, &saved, &bytes).unwrap();
            saved.extend(now[saved.count()..].to_vec(), len);
        }
        saved
    }

    #[test]
    fn appending_a_turn_writes_what_a_whole_save_writes() {
        let dir = tempfile::tempdir().unwrap();
        let messages = conversation(12);
        let saved = save_by_turns(dir.path(), &messages);
        let appended = std::fs::read(dir.path().join("c.json")).unwrap();
        assert_eq!(appended, serde_json::to_vec(&messages).unwrap());
        assert_eq!(saved.len, appended.len() as u64);
        assert_eq!(load(&dir.path().join("c.json")).unwrap(), messages);
        // Nothing new: nothing to write.
        let nothing = tail(dir.path(), &saved, "c.json", &messages).unwrap();
        assert_eq!(nothing, Some(Vec::new()));
    }

    #[test]
    fn a_changed_conversation_is_written_whole() {
        let dir = tempfile::tempdir().unwrap();
        let messages = conversation(6);
        let saved = save_by_turns(dir.path(), &messages);
        // An edit anywhere, not only in the last message, is seen.
        for edited in [1, 5] {
            let mut changed = messages.clone();
            changed[edited] = Message::assistant("edited");
            changed.push(Message::user("more"));
            assert_eq!(tail(dir.path(), &saved, "c.json", &changed).unwrap(), None);
        }
        assert_eq!(
            tail(dir.path(), &saved, "c.json", &messages[..4]).unwrap(),
            None
        );
        assert_eq!(
            tail(dir.path(), &saved, "other.json", &messages).unwrap(),
            None
        );
        // Another writer changed the file: the append refuses and writes nothing.
        std::fs::write(dir.path().join("c.json"), b"[]").unwrap();
        assert!(append(dir.path(), &saved, b",{}]").is_err());
        assert_eq!(std::fs::read(dir.path().join("c.json")).unwrap(), b"[]");
    }

    #[test]
    fn a_file_torn_at_any_point_loads_its_whole_messages_and_is_repaired() {
        let dir = tempfile::tempdir().unwrap();
        let messages = conversation(8);
        save_by_turns(dir.path(), &messages);
        let whole = std::fs::read(dir.path().join("c.json")).unwrap();
        let path = dir.path().join("torn.json");
        for cut in 1..whole.len() {
            for zeros in [0, 7] {
                let mut torn = whole[..cut].to_vec();
                torn.extend(std::iter::repeat_n(0u8, zeros));
                std::fs::write(&path, &torn).unwrap();
                let loaded = load(&path).unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
                assert!(
                    messages.starts_with(&loaded),
                    "cut at {cut}: {loaded:?} is not a start of the conversation"
                );
                // Every message whole before the cut is kept.
                let whole_before = (0..=messages.len())
                    .rev()
                    .find(|&n| {
                        let list = serde_json::to_vec(&messages[..n]).unwrap();
                        n == 0 || list.len() - 1 <= cut
                    })
                    .unwrap();
                assert_eq!(loaded.len(), whole_before, "cut at {cut}");
                // Repaired on disk: a plain list again.
                let repaired = std::fs::read(&path).unwrap();
                assert_eq!(
                    repaired,
                    serde_json::to_vec(&loaded).unwrap(),
                    "cut at {cut}"
                );
            }
        }
        // Claimed, then the crash came before the first save.
        for empty in [&b""[..], b"\0\0\0"] {
            std::fs::write(&path, empty).unwrap();
            assert_eq!(load(&path).unwrap(), Vec::<Message>::new());
            assert_eq!(std::fs::read(&path).unwrap(), b"[]");
        }
        std::fs::write(&path, b"not a list").unwrap();
        assert!(load(&path).is_err());
    }

    #[test]
    fn does_not_claim_through_a_symbolic_link() {
        let dir = tempfile::tempdir().unwrap();
        let now = chrono::Local
            .with_ymd_and_hms(2025, 7, 29, 18, 29, 20)
            .single()
            .unwrap();
        let messages = [Message::user("hello there friend")];
        let target = dir.path().join("elsewhere");
        let original = conversation_filename(&messages, now);
        #[cfg(unix)]
        std::os::unix::fs::symlink(&target, dir.path().join(&original)).unwrap();
        let name = claim(dir.path(), &messages, now).unwrap();
        assert_ne!(name, original);
        assert!(!target.exists());
    }
}
