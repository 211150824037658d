//! Exports never write through a link the model's code planted (review of issue 34): the
//! sandboxed code links `notes.md` and `notes.json` in the workspace to files outside it, and
//! to a name that does not exist yet; `%markdown notes` and `%save_message notes` then write
//! the workspace's own files, and nothing outside changes. Through the real `oi`, as root on CI.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::io::Write as _;
use std::process::Stdio;

use oi_testkit::Reply;

mod sandbox_common;
use sandbox_common::*;

#[test]
fn exports_replace_a_planted_link_instead_of_writing_through_it() {
    if !have("python3", "export links") || !sandbox_works("export links") {
        return;
    }
    let s = setup();
    let outside = tempfile::Builder::new()
        .prefix("oi-outside-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "untouched").unwrap();
    let created = outside.path().join("profile-new.sh");
    let code = format!(
        "import os\nos.symlink({:?}, 'notes.md')\nos.symlink({:?}, 'notes.json')\nprint('planted')",
        victim.display().to_string(),
        created.display().to_string()
    );
    let server = s.server(vec![
        Reply::tool_call("python", &code),
        Reply::text("Done."),
    ]);
    let mut command = s.oi(&server, &["--plain", "--sandbox", "workspace"]);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"go\ny\n%markdown notes\n%save_message notes\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(text.contains("planted"), "{text}");
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "untouched",
        "{text}"
    );
    assert!(!created.exists(), "{text}");
    for name in ["notes.md", "notes.json"] {
        let path = s.work.path().join(name);
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert!(meta.is_file(), "{name} is the export itself: {text}");
    }
}
