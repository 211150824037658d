//! Writing an export (`%save_message`, `%markdown`, `%jupyter`) without following a link the
//! model's code planted: oi writes as the user, outside any sandbox, into the working
//! directory, where sandboxed code may write too. The file is written to a new temporary
//! file beside it (created exclusively, never through a link) and renamed over the name, so a
//! link at the name is replaced, not followed; a folder on the way that is given relative to
//! the working directory must not be a link either — for a path beneath the working
//! directory the kernel resolves it with no link followed, so a folder swapped for a link
//! mid-write cannot redirect it. An absolute path (or one with `..`) the user typed is theirs
//! to choose.

use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

/// Writes `bytes` to `path` as described above. The error says what was wrong.
pub fn write_no_follow(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(beneath) = beneath_working_directory(path) {
        // Resolved by the kernel beneath the working directory with no link followed
        // (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): a folder that code swaps for a
        // link while oi writes cannot redirect the export (the check-then-write below could).
        return oi_computer::FileRoot::open(Path::new("."))
            .write_replacing_link(beneath, bytes)
            .map_err(|e| std::io::Error::other(e.to_string()));
    }
    refuse_relative_links(path)?;
    let parent = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => {
            std::fs::create_dir_all(parent)?;
            refuse_relative_links(path)?;
            parent.to_path_buf()
        }
        None => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("the path names no file"))?;
    let temporary = parent.join(format!(
        ".{}.oi-{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()));
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(error);
    }
    std::fs::rename(&temporary, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temporary);
    })
}

/// `path` as text when it is relative and stays beneath the working directory (no `..`).
fn beneath_working_directory(path: &Path) -> Option<&str> {
    let plain = path.is_relative()
        && path
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    plain.then(|| path.to_str()).flatten()
}

/// Refuses a relative `path` whose folders (below the working directory) include a link.
fn refuse_relative_links(path: &Path) -> std::io::Result<()> {
    if path.is_absolute() {
        return Ok(());
    }
    let mut so_far = PathBuf::new();
    let folders: Vec<Component<'_>> = path
        .parent()
        .map_or(Vec::new(), |p| p.components().collect());
    for component in folders {
        so_far.push(component);
        if std::fs::symlink_metadata(&so_far).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(std::io::Error::other(format!(
                "{} is a link; oi does not write through links in the working directory (code may have made it): give the real path",
                so_far.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn a_link_at_the_name_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let name = dir.path().join("notes.md");
        std::os::unix::fs::symlink(&victim, &name).unwrap();
        write_no_follow(&name, b"export").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(
            !std::fs::symlink_metadata(&name)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&name).unwrap(), "export");
        let dangling = dir.path().join("new.json");
        std::os::unix::fs::symlink(dir.path().join("created-elsewhere"), &dangling).unwrap();
        write_no_follow(&dangling, b"{}").unwrap();
        assert!(!dir.path().join("created-elsewhere").exists());
    }

    #[test]
    fn a_relative_folder_that_is_a_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join("out")).unwrap();
        let cwd = std::env::current_dir().unwrap();
        // Relative paths are checked from the working directory: build one that passes
        // through the link from here.
        let relative = pathdiff(dir.path(), &cwd).join("out/notes.md");
        let refused = write_no_follow(&relative, b"x").unwrap_err();
        assert!(refused.to_string().contains("is a link"), "{refused}");
        assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }

    /// `to` relative to `from` (both absolute).
    fn pathdiff(to: &Path, from: &Path) -> PathBuf {
        let ups = from.components().count().saturating_sub(1);
        let mut path = PathBuf::new();
        for _ in 0..ups {
            path.push("..");
        }
        path.join(to.strip_prefix("/").unwrap())
    }
}
