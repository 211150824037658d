//! oi's own directories (its config directory with the profiles and oi's private files, the
//! conversations) that sandboxed code may neither write — otherwise code could rewrite the
//! default profile to `sandbox: off` and be unsandboxed on the next run — nor read (the
//! profiles hold the model's API key; conversations hold whatever was said).
//!
//! With a mount namespace, each of them is covered by an empty read-only `tmpfs` in the
//! session's namespace (one that contains the workspace or a writable root is bind-mounted
//! read-only instead), and every directory between a writable root and it is bound onto
//! itself (a mount point cannot be renamed or removed, so the protected directory cannot be
//! swapped for a writable copy). Landlock only ever adds permissions, so without a namespace
//! a writable root — and `/` for reading — is granted entry by entry, leaving out the path
//! that leads to a protected directory: existing files there stay writable, but nothing new
//! can be created directly in the directories along that path, and nothing beneath the
//! protected directories can be read (best effort, said in the docs).
//!
//! Their paths are resolved to canonical form once per process ([`resolved_once`]); each
//! session opens them without following links.

use std::path::{Component, Path, PathBuf};

/// `path` made absolute and free of symlinks as far as it exists (the missing rest appended).
pub(crate) fn canonical(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let mut missing = Vec::new();
    let mut existing = path.to_path_buf();
    while let Some(name) = existing.file_name().map(|n| n.to_os_string()) {
        missing.push(name);
        if !existing.pop() {
            break;
        }
        if let Ok(real) = std::fs::canonicalize(&existing) {
            return missing
                .iter()
                .rev()
                .fold(real, |path, name| path.join(name));
        }
    }
    path.to_path_buf()
}

/// `path` made canonical the first time this process asks, and the same answer every later
/// time: code may since have swapped a directory on the way for a link, which a new
/// resolution would follow.
pub(crate) fn resolved_once(path: &Path) -> PathBuf {
    static RESOLVED: std::sync::Mutex<Vec<(PathBuf, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut resolved = RESOLVED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, real)) = resolved.iter().find(|(asked, _)| asked == path) {
        return real.clone();
    }
    let real = canonical(path);
    resolved.push((path.to_path_buf(), real.clone()));
    real
}

/// The outer ones of the protected directories `protected` (canonical; one inside another is
/// covered by it), created when missing so they can be mounted over. A directory inside one
/// of `roots` that cannot be created is an error; one outside is left out (code cannot create
/// it either).
pub(crate) fn existing_outermost(
    protected: &[PathBuf],
    roots: &[PathBuf],
) -> std::io::Result<Vec<PathBuf>> {
    let mut existing = Vec::new();
    for dir in outermost(protected) {
        if !dir.exists()
            && let Err(e) = std::fs::create_dir_all(&dir)
        {
            if roots.iter().any(|root| dir.starts_with(root)) {
                return Err(std::io::Error::new(
                    e.kind(),
                    format!(
                        "could not create {} to protect it from sandboxed code: {e}",
                        dir.display()
                    ),
                ));
            }
            continue;
        }
        existing.push(dir);
    }
    Ok(existing)
}

/// The directories to bind onto themselves so that none of `protected` can be moved: every
/// directory strictly between a writable root that contains it and it, outermost first.
pub(crate) fn pinned(protected: &[PathBuf], roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut pins: Vec<PathBuf> = Vec::new();
    for dir in protected {
        for root in roots
            .iter()
            .filter(|root| dir.starts_with(root) && *root != dir)
        {
            let mut ancestor = root.clone();
            let Ok(rest) = dir.strip_prefix(root) else {
                continue;
            };
            let parts: Vec<Component<'_>> = rest.components().collect();
            for part in parts.iter().take(parts.len().saturating_sub(1)) {
                ancestor.push(part);
                if !pins.contains(&ancestor) {
                    pins.push(ancestor.clone());
                }
            }
        }
    }
    pins.sort_by_key(|p| p.components().count());
    pins
}

/// What to grant instead of `root` so that nothing beneath any of `protected` is granted:
/// `root` itself when it contains none of them; else each entry of it, recursively along the
/// paths to the protected directories (symlinks left out: a rule would follow them).
pub(crate) fn grants_except(root: &Path, protected: &[PathBuf]) -> Vec<PathBuf> {
    let mut grants = Vec::new();
    collect_grants(root, protected, &mut grants, 0);
    grants
}

fn collect_grants(dir: &Path, protected: &[PathBuf], grants: &mut Vec<PathBuf>, depth: usize) {
    if protected.iter().any(|p| dir.starts_with(p)) {
        return; // protected (or beneath one)
    }
    if depth > 64 || !protected.iter().any(|p| p.starts_with(dir)) {
        grants.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_symlink()) {
            continue;
        }
        collect_grants(&entry.path(), protected, grants, depth + 1);
    }
}

/// `dirs` (canonical) without those inside another one.
fn outermost(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        let covered = dirs
            .iter()
            .any(|other| other != dir && dir.starts_with(other));
        if !covered && !out.contains(dir) {
            out.push(dir.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_every_directory_between_a_root_and_a_protected_one() {
        let roots = [PathBuf::from("/home/u"), PathBuf::from("/tmp")];
        let protected = [PathBuf::from("/home/u/.config/open-interpreter")];
        assert_eq!(
            pinned(&protected, &roots),
            [PathBuf::from("/home/u/.config")]
        );
        let deep = [PathBuf::from("/tmp/a/b/c")];
        assert_eq!(
            pinned(&deep, &roots),
            [PathBuf::from("/tmp/a"), PathBuf::from("/tmp/a/b")]
        );
        assert!(pinned(&[PathBuf::from("/srv/x")], &roots).is_empty());
        assert!(pinned(&[PathBuf::from("/tmp")], &roots).is_empty());
    }

    #[test]
    fn grants_leave_out_the_path_to_a_protected_directory() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = canonical(root.path());
        for dir in ["a", ".config/open-interpreter/profiles", ".config/other"] {
            std::fs::create_dir_all(root.join(dir)).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(root.join("file.txt"), "x").unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink("/etc", root.join("link")).unwrap_or_else(|e| panic!("{e}"));
        let protected = [root.join(".config/open-interpreter")];
        let mut grants = grants_except(&root, &protected);
        grants.sort();
        assert_eq!(
            grants,
            [
                root.join(".config/other"),
                root.join("a"),
                root.join("file.txt")
            ]
        );
        assert_eq!(grants_except(&root.join("a"), &protected), [root.join("a")]);
        assert!(grants_except(&protected[0], &protected).is_empty());
    }

    #[test]
    fn outer_directories_cover_inner_ones_and_missing_ones_are_created() {
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = canonical(root.path());
        let config = root.join("cfg/open-interpreter");
        let conversations = config.join("conversations");
        let existing = existing_outermost(
            &[conversations, config.clone()],
            std::slice::from_ref(&root),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(existing, std::slice::from_ref(&config));
        assert!(config.is_dir());
        let blocked = root.join("file");
        std::fs::write(&blocked, "x").unwrap_or_else(|e| panic!("{e}"));
        let inside = existing_outermost(&[blocked.join("x")], std::slice::from_ref(&root));
        assert!(
            inside.is_err(),
            "a directory inside a root that cannot be made"
        );
        let elsewhere = existing_outermost(&[blocked.join("x")], &[PathBuf::from("/srv/none")]);
        assert!(elsewhere.is_ok_and(|v| v.is_empty()));
    }
}
