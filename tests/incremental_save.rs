//! Saving a conversation costs what a turn added: through the blocking API over real HTTP to
//! the scripted model, each turn after the first appends to the session's file in place (the
//! file is never replaced, and stays byte for byte the JSON list a whole save writes), and
//! the file is written whole again — atomically, by a rename — when the conversation was
//! changed otherwise: an earlier message edited, the file changed by another writer. A reset
//! starts a new file.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use oi_core::{Message, OpenInterpreter};
use oi_testkit::{Reply, Script, ScriptedServer};

fn reply(body: &serde_json::Value) -> Reply {
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    Reply::text(format!("You said: {last}"))
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

/// The file's inode: the same while turns append to it, new after a whole (renamed) save.
fn inode(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().ino()
}

/// The file holds the conversation, written as one whole save would write it.
fn assert_holds(path: &Path, oi: &OpenInterpreter) {
    let bytes = std::fs::read(path).unwrap();
    let messages = oi.messages();
    assert_eq!(
        String::from_utf8(bytes).unwrap(),
        serde_json::to_string(&messages).unwrap()
    );
    assert_eq!(oi_core::history::load(path).unwrap(), messages);
}

#[test]
fn turns_append_and_other_changes_write_the_file_whole() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(ScriptedServer::start(Script::responder(reply)))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut settings = common::settings(&server, true);
    settings.conversation_history = true;
    settings.conversation_history_path = Some(dir.path().to_owned());
    let model = Arc::new(oi_llm::OpenAiCompatible::new().with_env(oi_llm::Env::empty()));
    let oi = OpenInterpreter::new(
        settings,
        model,
        Arc::new(oi_computer::LocalComputer::new()),
        oi_judge::judge(),
    )
    .unwrap();

    oi.chat("first turn here").unwrap();
    let [file] = files(dir.path()).try_into().unwrap();
    assert_holds(&file, &oi);
    let first = inode(&file);

    // Turns that only add messages append to the same file.
    for turn in 2..=5 {
        oi.chat(format!("turn {turn}")).unwrap();
        assert_holds(&file, &oi);
        assert_eq!(inode(&file), first, "turn {turn} replaced the file");
    }
    assert_eq!(oi.messages().len(), 10);

    // An earlier message edited: the next save writes the file whole (a new inode).
    let mut edited = oi.messages();
    edited[1] = Message::assistant("an edited answer");
    oi.set_messages(edited);
    oi.chat("after the edit").unwrap();
    assert_holds(&file, &oi);
    let rewritten = inode(&file);
    assert_ne!(rewritten, first, "the edit was not written whole");
    oi.chat("appending again").unwrap();
    assert_holds(&file, &oi);
    assert_eq!(inode(&file), rewritten);

    // Another writer changed the file: the append sees it and the file is written whole.
    std::fs::write(&file, b"[]").unwrap();
    oi.chat("after another writer").unwrap();
    assert_holds(&file, &oi);
    assert_eq!(
        files(dir.path()),
        vec![file.clone()],
        "no temporary file left"
    );

    // A reset starts a new file; the old one keeps its conversation.
    let before_reset = oi.messages();
    oi.reset();
    oi.chat("a new conversation").unwrap();
    let all = files(dir.path());
    assert_eq!(all.len(), 2, "{all:?}");
    assert_eq!(oi_core::history::load(&file).unwrap(), before_reset);
    let new = all.into_iter().find(|f| f != &file).unwrap();
    assert_holds(&new, &oi);
}
