//! Conversation history files, named and written as Open Interpreter does (spec e.5), but
//! atomically: a temp file in the same directory, then a rename.

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

/// Writes a conversation already written as a JSON list (`json`) to `dir/filename`,
/// atomically (so a caller can write the list while it holds the conversation, without
/// copying it).
pub fn save_json(dir: &Path, filename: &str, json: &[u8]) -> Result<PathBuf, HistoryError> {
    std::fs::create_dir_all(dir).map_err(|source| HistoryError::Io {
        action: "create",
        path: dir.to_owned(),
        source,
    })?;
    let path = dir.join(filename);
    let tmp = dir.join(format!(".{filename}.{}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(json)?;
        file.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    write().map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        HistoryError::Io {
            action: "write",
            path: path.clone(),
            source,
        }
    })?;
    Ok(path)
}

/// Reads a saved conversation.
pub fn load(path: &Path) -> Result<Vec<Message>, HistoryError> {
    let text = std::fs::read_to_string(path).map_err(|source| HistoryError::Io {
        action: "read",
        path: path.to_owned(),
        source,
    })?;
    Message::list_from_json(&text).map_err(|e| HistoryError::Invalid {
        path: path.to_owned(),
        reason: e.to_string(),
    })
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
}
