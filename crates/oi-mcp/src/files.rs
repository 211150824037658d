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
    if !sandbox.git_writable && is_in_git(asked) {
        return Err(format!(
            "Refused: {asked} is inside a `.git` (its configuration, hooks, `commondir` and pointers make git run commands outside any sandbox); oi's file tools do not write there."
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
        if path.starts_with(real_even_if_missing(&dir)) || path.starts_with(&dir) {
            return Err(format!("Refused: {asked} is in oi's own folder."));
        }
    }
    Ok(())
}

/// `dir` with its links resolved, even when it does not exist yet: its nearest existing
/// ancestor made canonical, the missing names after it (a home reached through a link, with
/// no `~/.config/open-interpreter` yet, is still recognised).
fn real_even_if_missing(dir: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut existing = dir;
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut path = real;
            path.extend(missing.iter().rev());
            return path;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_owned());
                existing = parent;
            }
            _ => return dir.to_path_buf(),
        }
    }
}

/// Whether any name on `asked`'s way is `.git` in any case (`.GIT` is `.git` on macOS's and
/// other case-insensitive file systems; a repository's own files or a worktree's
/// pointer file, at any depth: submodules' and nested repositories' too).
fn is_in_git(asked: &str) -> bool {
    Path::new(asked)
        .components()
        .any(|c| matches!(c, Component::Normal(name) if name.eq_ignore_ascii_case(".git")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stop-32 review: on a case-insensitive file system `.GIT/hooks/pre-commit` is the
    /// repository's hook.
    #[test]
    fn git_is_found_in_any_case_at_any_depth() {
        for asked in [
            ".git/config",
            ".GIT/hooks/pre-commit",
            "sub/.Git/HEAD",
            "a/b/.gIT",
        ] {
            assert!(is_in_git(asked), "{asked}");
        }
        for asked in ["git/config", ".github/workflows/ci.yml", "a/.gitignore"] {
            assert!(!is_in_git(asked), "{asked}");
        }
    }

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
        // The whole of every `.git`: commondir, worktree config, submodules' hooks, a
        // worktree's pointer file, nested repositories.
        for path in [
            ".git/commondir",
            ".git/config.worktree",
            ".git/modules/sub/hooks/pre-commit",
            "wt/.git",
            "sub2/.git/hooks/post-checkout",
        ] {
            assert!(write(&settings, path, "no").is_err(), "{path}");
        }
        let mut readonly = settings_in(dir.path());
        readonly.computer.sandbox.mode = SandboxMode::ReadOnly;
        assert!(write(&readonly, "a.txt", "no").is_err());
        Ok(())
    }

    /// oi's configuration folder is refused even before it exists, when the home directory is
    /// reached through a link (the second review wrote a profile there that started a command).
    #[test]
    fn own_folders_are_recognised_through_a_linked_home_before_they_exist() {
        let base = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let real = base.path().join("realhome");
        std::fs::create_dir(&real).unwrap_or_else(|e| panic!("{e}"));
        let link = base.path().join("homelink");
        std::os::unix::fs::symlink(&real, &link).unwrap_or_else(|e| panic!("{e}"));
        let own = link.join(".config/open-interpreter");
        assert_eq!(
            real_even_if_missing(&own),
            real.canonicalize()
                .unwrap_or_else(|e| panic!("{e}"))
                .join(".config/open-interpreter")
        );
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
