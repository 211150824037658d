//! `read_file` and `write_file`: text files inside the workspace only (the sandbox's
//! workspace, by default the directory oi started in), after symbolic links are resolved;
//! never oi's own folders, never the workspace's `.git/config` or `.git/hooks` unless the
//! settings let code write them, and no writes at all when the sandbox is read-only.

use std::path::{Component, Path, PathBuf};

use oi_core::Settings;
use oi_core::settings::SandboxMode;

/// The largest file `read_file` returns.
pub(crate) const MAX_READ: u64 = 1024 * 1024;

/// The file at `asked` when it may be read.
pub(crate) fn readable(settings: &Settings, asked: &str) -> Result<PathBuf, String> {
    let root = workspace(settings)?;
    let path = resolve(&root, asked)?;
    let real = path
        .canonicalize()
        .map_err(|error| format!("Cannot read {asked}: {error}."))?;
    check_inside(settings, &root, &real, asked)?;
    Ok(real)
}

/// The file at `asked` when it may be written: inside the workspace after its existing part is
/// resolved, the rest plain names.
pub(crate) fn writable(settings: &Settings, asked: &str) -> Result<PathBuf, String> {
    let sandbox = &settings.computer.sandbox;
    if sandbox.mode == SandboxMode::ReadOnly {
        return Err("The sandbox is read-only: oi writes no files.".to_owned());
    }
    let root = workspace(settings)?;
    let path = resolve(&root, asked)?;
    let mut existing = path.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
            return Err(format!("Cannot write {asked}: no such place."));
        };
        rest.push(name.to_owned());
        existing = parent;
    }
    let mut real = existing
        .canonicalize()
        .map_err(|error| format!("Cannot write {asked}: {error}."))?;
    for name in rest.iter().rev() {
        real.push(name);
    }
    check_inside(settings, &root, &real, asked)?;
    let git = root.join(".git");
    if !sandbox.git_writable
        && (real.starts_with(git.join("config")) || real.starts_with(git.join("hooks")))
    {
        return Err(format!(
            "Refused: {asked} is the workspace's git configuration or hooks, which would run outside any sandbox."
        ));
    }
    Ok(real)
}

fn workspace(settings: &Settings) -> Result<PathBuf, String> {
    settings
        .computer
        .sandbox
        .workspace
        .canonicalize()
        .map_err(|error| format!("The workspace cannot be used: {error}."))
}

/// `asked` joined to the workspace; `..` is refused outright.
fn resolve(root: &Path, asked: &str) -> Result<PathBuf, String> {
    let asked_path = Path::new(asked);
    if asked.is_empty() || asked_path.components().any(|c| c == Component::ParentDir) {
        return Err(format!(
            "Refused: {asked:?} must name a file inside the workspace without '..'."
        ));
    }
    Ok(root.join(asked_path))
}

fn check_inside(settings: &Settings, root: &Path, real: &Path, asked: &str) -> Result<(), String> {
    if !real.starts_with(root) || real == root {
        return Err(format!(
            "Refused: {asked} is outside the workspace ({}).",
            root.display()
        ));
    }
    let own = [
        settings.conversations_dir(),
        oi_core::settings::config_dir(),
    ];
    for dir in own.into_iter().flatten() {
        let dir = dir.canonicalize().unwrap_or(dir);
        if real.starts_with(&dir) {
            return Err(format!("Refused: {asked} is in oi's own folder."));
        }
    }
    Ok(())
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
        let settings = settings_in(dir.path());
        assert!(writable(&settings, "a/b/c.txt").is_ok());
        assert!(writable(&settings, "../x").is_err());
        assert!(writable(&settings, "link/new").is_err());
        assert!(readable(&settings, "link/secret").is_err());
        assert!(readable(&settings, "/etc/passwd").is_err());
        assert!(writable(&settings, ".git/hooks/pre-commit").is_err());
        let mut readonly = settings_in(dir.path());
        readonly.computer.sandbox.mode = SandboxMode::ReadOnly;
        assert!(writable(&readonly, "a.txt").is_err());
        Ok(())
    }
}
