//! The embedded model keeps its evaluated system prompt in a file between processes. The file
//! is an optimisation only: every hostile or broken file is ignored (and replaced), and the
//! reply is the same as without any file. Real model (Qwen2.5-Coder-0.5B), real files; skipped
//! with the reason printed when the model file is absent (`cargo xtask fetch-model`).
//!
//! Run: `cargo test -p oi-llm --features local --test local_prompt_cache -- --nocapture --test-threads=1`
#![cfg(feature = "local")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod local_support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use local_support::{QUESTION, model, reply, request, stats};
use oi_core::{Kind, Message, ModelDelta, ModelRequest, Role};
use oi_llm::local::{LocalConfig, LocalModel, LocalProvider};

/// A short reply: what matters is that it is the same with and without a file.
fn ask() -> ModelRequest {
    request(vec![Message::user(QUESTION)], 12)
}

/// A shorter system prompt and reply, for the many attacks (each evaluates the whole prompt).
fn short_ask() -> ModelRequest {
    let mut request = request(vec![Message::user("Say hi.")], 4);
    request.messages[0] = Message::new(
        Role::System,
        Kind::Message,
        "You are a helpful assistant. Answer in one short sentence.",
    );
    request
}

fn provider(model: &Arc<LocalModel>, n_ctx: u32, cache: Option<&Path>) -> LocalProvider {
    let config = LocalConfig {
        n_ctx,
        prompt_cache: cache.map(Path::to_path_buf),
        threads: None,
    };
    LocalProvider::with_config(model.clone(), config).unwrap()
}

/// A fresh directory under the temp dir.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oi-local-cache-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The state files in `dir`.
fn state_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "oikv"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// One reply to `request` from a fresh context using `cache`: the deltas and how many prompt
/// tokens came from the file.
async fn run_request(
    model: &Arc<LocalModel>,
    cache: Option<&Path>,
    request: ModelRequest,
) -> (Vec<ModelDelta>, usize) {
    let provider = provider(model, 4096, cache);
    let deltas = reply(&provider, request).await;
    let figures = stats(&provider, 1);
    eprintln!("  {figures}");
    (deltas, figures.file_tokens)
}

/// One reply to [`ask`].
async fn run(model: &Arc<LocalModel>, cache: Option<&Path>) -> (Vec<ModelDelta>, usize) {
    run_request(model, cache, ask()).await
}

/// One reply to [`short_ask`].
async fn run_short(model: &Arc<LocalModel>, cache: Option<&Path>) -> (Vec<ModelDelta>, usize) {
    run_request(model, cache, short_ask()).await
}

/// Whether `path` is now a regular file of ours, readable and writable by us alone.
fn is_our_private_file(path: &Path) -> bool {
    let uid = current_uid();
    std::fs::symlink_metadata(path)
        .is_ok_and(|m| m.is_file() && m.uid() == uid && m.mode() & 0o777 == 0o600)
}

/// This process's uid, as the owner of a file it just made.
fn current_uid() -> u32 {
    let probe = std::env::temp_dir().join(format!("oi-uid-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").unwrap();
    let uid = std::fs::metadata(&probe).unwrap().uid();
    std::fs::remove_file(&probe).unwrap();
    uid
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_state_file_is_written_once_then_read_and_changes_nothing() {
    let Some(model) = model() else {
        return;
    };
    let dir = temp_dir("roundtrip");
    eprintln!("without a file:");
    let (reference, _) = run(&model, None).await;
    eprintln!("first process (writes the file):");
    let (first, from_file) = run(&model, Some(&dir)).await;
    assert_eq!(from_file, 0);
    assert_eq!(first, reference);
    let files = state_files(&dir);
    assert_eq!(files.len(), 1, "one file: {files:?}");
    assert!(is_our_private_file(&files[0]), "the file is not 0600");
    let size = std::fs::metadata(&files[0]).unwrap().len();
    eprintln!("file: {} ({size} bytes)", files[0].display());

    eprintln!("second process (reads it):");
    let (second, from_file) = run(&model, Some(&dir)).await;
    assert!(
        from_file > 16,
        "the system prompt did not come from the file"
    );
    assert_eq!(second, reference, "the file changed the reply");
    assert_eq!(
        state_files(&dir),
        files,
        "a file that was read is not written again"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What is put where the good file was.
#[derive(Debug, Clone, Copy)]
enum Attack {
    Damaged,
    Truncated,
    Empty,
    Foreign,
    OtherUser,
    WritableByOthers,
    SymlinkToValidCopy,
    SymlinkToDevZero,
    Fifo,
    Huge,
}

/// Plants `attack` at `path`; `good` is a valid file's bytes, `foreign` a valid file computed
/// for another context.
fn plant(attack: Attack, path: &Path, good: &[u8], foreign: &[u8], scratch: &Path) {
    let _ = std::fs::remove_file(path);
    let write_private = |bytes: &[u8]| {
        std::fs::write(path, bytes).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    };
    match attack {
        Attack::Damaged => {
            let mut bytes = good.to_vec();
            let middle = bytes.len() / 2;
            for b in &mut bytes[middle..middle + 64] {
                *b ^= 0x5a;
            }
            write_private(&bytes);
        }
        Attack::Truncated => write_private(&good[..good.len() / 2]),
        Attack::Empty => write_private(b""),
        Attack::Foreign => write_private(foreign),
        Attack::OtherUser => {
            write_private(good);
            std::os::unix::fs::chown(path, Some(65_534), Some(65_534)).unwrap();
        }
        Attack::WritableByOthers => {
            std::fs::write(path, good).unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666)).unwrap();
        }
        Attack::SymlinkToValidCopy => {
            let copy = scratch.join("copy.oikv");
            std::fs::write(&copy, good).unwrap();
            std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o600)).unwrap();
            std::os::unix::fs::symlink(&copy, path).unwrap();
        }
        Attack::SymlinkToDevZero => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
        Attack::Fifo => {
            let status = std::process::Command::new("mkfifo")
                .arg(path)
                .status()
                .unwrap();
            assert!(status.success());
        }
        Attack::Huge => {
            let file = std::fs::File::create(path).unwrap();
            file.set_len(10 << 30).unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_state_files_are_ignored_and_replaced() {
    let Some(model) = model() else {
        return;
    };
    if current_uid() != 0 {
        eprintln!("note: not root, the other-user case plants a file it cannot chown; skipping it");
    }
    let dir = temp_dir("hostile");
    let scratch = temp_dir("hostile-scratch");
    let other = temp_dir("hostile-other-context");
    eprintln!("reference, without a file:");
    let (reference, _) = run_short(&model, None).await;
    eprintln!("writing the good file:");
    let (first, _) = run_short(&model, Some(&dir)).await;
    assert_eq!(first, reference);
    let path = state_files(&dir).pop().expect("the file was written");
    let good = std::fs::read(&path).unwrap();
    // A valid file for another context (2048 tokens): another key.
    let foreign_provider = provider(&model, 2048, Some(&other));
    let _ = reply(&foreign_provider, short_ask()).await;
    let _ = stats(&foreign_provider, 1);
    drop(foreign_provider);
    let foreign_path = state_files(&other)
        .pop()
        .expect("the other file was written");
    assert_ne!(foreign_path.file_name(), path.file_name());
    let foreign = std::fs::read(&foreign_path).unwrap();

    let attacks = [
        Attack::Damaged,
        Attack::Truncated,
        Attack::Empty,
        Attack::Foreign,
        Attack::OtherUser,
        Attack::WritableByOthers,
        Attack::SymlinkToValidCopy,
        Attack::SymlinkToDevZero,
        Attack::Fifo,
        Attack::Huge,
    ];
    for attack in attacks {
        if matches!(attack, Attack::OtherUser) && current_uid() != 0 {
            continue;
        }
        eprintln!("{attack:?}:");
        plant(attack, &path, &good, &foreign, &scratch);
        let (deltas, from_file) = run_short(&model, Some(&dir)).await;
        assert_eq!(from_file, 0, "{attack:?}: the file was used");
        assert_eq!(deltas, reference, "{attack:?}: the reply changed");
        assert!(
            is_our_private_file(&path),
            "{attack:?}: the file was not replaced by a good one"
        );
    }
    // The last replacement is a good file again: the next process reads it.
    eprintln!("after the attacks:");
    let (deltas, from_file) = run_short(&model, Some(&dir)).await;
    assert!(from_file > 16);
    assert_eq!(deltas, reference);

    // A directory where the file goes cannot be replaced: ignored, the reply is right.
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    eprintln!("a directory in the file's place:");
    let (deltas, from_file) = run_short(&model, Some(&dir)).await;
    assert_eq!((from_file, &deltas), (0, &reference));
    for d in [dir, scratch, other] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsafe_cache_directory_is_not_used() {
    let Some(model) = model() else {
        return;
    };
    let base = temp_dir("unsafe-dirs");
    let (reference, _) = run_short(&model, None).await;

    // Writable by everyone.
    let open = base.join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    // A link to a directory elsewhere.
    let target = base.join("target");
    std::fs::create_dir(&target).unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o700)).unwrap();
    let link = base.join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let mut cases = vec![("writable by others", open), ("a symbolic link", link)];
    // Another user's.
    if current_uid() == 0 {
        let theirs = base.join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::os::unix::fs::chown(&theirs, Some(65_534), Some(65_534)).unwrap();
        cases.push(("another user's", theirs));
    }
    for (what, dir) in &cases {
        eprintln!("{what}:");
        let (deltas, from_file) = run_short(&model, Some(dir)).await;
        assert_eq!((from_file, &deltas), (0, &reference), "{what}");
        assert!(
            state_files(dir).is_empty(),
            "{what}: a file was written there"
        );
    }
    assert!(state_files(&target).is_empty());
    std::fs::remove_dir_all(&base).unwrap();
}
