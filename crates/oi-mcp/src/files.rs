//! `read_file` and `write_file`: text files beneath the workspace only, opened through the
//! workspace's directory descriptor without ever following a link (oi-computer's
//! [`FileRoot`]: `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, or a walk with
//! `O_NOFOLLOW`), so code in a session that plants a link or swaps a directory for one between
//! a check and the use cannot lead oi outside; writes go to a fresh temporary file renamed
//! over the target, so a planted hard link or FIFO is replaced, never written through. Never
//! oi's own folders, never the workspace's `.git/config` or `.git/hooks` unless the settings let
//! code write them, and no writes at all when the sandbox is read-only.

use std::path::{Component, Path, PathBuf};

use oi_computer::{FileError, FileRoot};
use oi_core::Settings;
use oi_core::settings::SandboxMode;

/// The largest file `read_file` returns.
pub(crate) const MAX_READ: u64 = 1024 * 1024;

/// The text of the file at `asked`, when it may be read.
pub(crate) fn read(settings: &Settings, asked: &str) -> Result<String, String> {
    let root = workspace(settings)?;
    refuse_own_folders(settings, &root, asked)?;
    let bytes = FileRoot::open(&root)
        .read_at_most(asked, MAX_READ)
        .map_err(|error| said(error, asked))?;
    String::from_utf8(bytes).map_err(|_| format!("{asked} is not UTF-8 text."))
}

/// Writes `content` to the file at `asked`, when it may be written (missing directories are
/// made, beneath the workspace and without following links).
pub(crate) fn write(settings: &Settings, asked: &str, content: &str) -> Result<(), String> {
    let sandbox = &settings.computer.sandbox;
    if sandbox.mode == SandboxMode::ReadOnly {
        return Err("The sandbox is read-only: oi writes no files.".to_owned());
    }
    let root = workspace(settings)?;
    refuse_own_folders(settings, &root, asked)?;
    if !sandbox.git_writable && is_git_config_or_hooks(asked) {
        return Err(format!(
            "Refused: {asked} is the workspace's git configuration or hooks, which would run outside any sandbox."
        ));
    }
    FileRoot::open(&root)
        .write(asked, content.as_bytes())
        .map_err(|error| said(error, asked))
}

/// What the caller is told about a refused or failed file operation.
fn said(error: FileError, asked: &str) -> String {
    match error {
        FileError::Escapes(_) | FileError::NoPath => format!(
            "Refused: {asked:?} must name a file inside the workspace, as a relative path without '..'."
        ),
        FileError::TooLarge { size, limit, .. } => format!(
            "{asked} is {size} bytes; read_file returns files up to {limit} bytes (use execute to read parts)."
        ),
        other => format!("Cannot use {asked}: {other}."),
    }
}

/// The workspace: the sandbox's, made canonical when it was set.
fn workspace(settings: &Settings) -> Result<PathBuf, String> {
    settings
        .computer
        .sandbox
        .workspace
        .canonicalize()
        .map_err(|error| format!("The workspace cannot be used: {error}."))
}

/// The path `asked` names beneath `root`, by its names alone: with no link followed on the way
/// (the open refuses them), this is where the file really is.
fn lexical(root: &Path, asked: &str) -> PathBuf {
    let mut path = root.to_path_buf();
    for component in Path::new(asked).components() {
        if let Component::Normal(name) = component {
            path.push(name);
        }
    }
    path
}

/// Refuses a path inside oi's conversations or configuration folder (they may lie inside the
/// workspace, e.g. when it is the home directory).
fn refuse_own_folders(settings: &Settings, root: &Path, asked: &str) -> Result<(), String> {
    let path = lexical(root, asked);
    let own = [
        settings.conversations_dir(),
        oi_core::settings::config_dir(),
    ];
    for dir in own.into_iter().flatten() {
        let dir = dir.canonicalize().unwrap_or(dir);
        if path.starts_with(&dir) {
            return Err(format!("Refused: {asked} is in oi's own folder."));
        }
    }
    Ok(())
}

/// Whether `asked` is the workspace's `.git/config` or under `.git/hooks`.
fn is_git_config_or_hooks(asked: &str) -> bool {
    let names: Vec<_> = Path::new(asked)
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .collect();
    matches!(names.as_slice(), [git, rest, ..] if *git == ".git" && (*rest == "config" || *rest == "hooks"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings_in(dir: &Path) -> Settings {
        let mut settings = Settings::default();
        settings.computer.sandbox.workspace = dir.to_path_buf();
        settings
    }

    #[test]
    fn files_stay_inside_the_workspace() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let outside = tempfile::tempdir()?;
        std::fs::write(outside.path().join("secret"), "s")?;
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link"))?;
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("file-link"))?;
        let settings = settings_in(dir.path());
        assert!(write(&settings, "a/b/c.txt", "made").is_ok());
        assert_eq!(read(&settings, "a/b/c.txt")?, "made");
        assert!(write(&settings, "../x", "no").is_err());
        assert!(write(&settings, "link/new", "no").is_err());
        assert!(!outside.path().join("new").exists());
        assert!(write(&settings, "file-link", "no").is_err());
        assert_eq!(std::fs::read_to_string(outside.path().join("secret"))?, "s");
        assert!(read(&settings, "link/secret").is_err());
        assert!(read(&settings, "file-link").is_err());
        assert!(read(&settings, "/etc/passwd").is_err());
        assert!(write(&settings, ".git/hooks/pre-commit", "no").is_err());
        assert!(write(&settings, "./.git//config", "no").is_err());
        let mut readonly = settings_in(dir.path());
        readonly.computer.sandbox.mode = SandboxMode::ReadOnly;
        assert!(write(&readonly, "a.txt", "no").is_err());
        Ok(())
    }

    /// A hard link planted at the target is replaced by the write, not written through.
    #[test]
    fn a_planted_hard_link_is_replaced_not_written_through()
    -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "kept")?;
        std::fs::hard_link(&victim, dir.path().join("planted"))?;
        write(&settings_in(dir.path()), "planted", "new")?;
        assert_eq!(std::fs::read_to_string(&victim)?, "kept");
        assert_eq!(std::fs::read_to_string(dir.path().join("planted"))?, "new");
        Ok(())
    }

    #[test]
    fn a_file_over_the_limit_is_refused() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("big"), vec![b'x'; MAX_READ as usize + 1])?;
        let said = read(&settings_in(dir.path()), "big")
            .err()
            .unwrap_or_default();
        assert!(said.contains("read_file returns files up to"), "{said}");
        Ok(())
    }
}
