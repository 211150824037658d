//! The parts of a workspace's git repository that `workspace` mode keeps read-only unless the
//! user opts in: what git runs by itself at the user's next command. A hook in `.git/hooks`,
//! or `core.fsmonitor`, `core.hooksPath`, `core.pager` and the like in `.git/config`, would
//! otherwise run outside the sandbox at the next `git status`.
//!
//! They are protected like oi's own directories (see `protected.rs`): bind-mounted read-only
//! in the session's mount namespace, with `.git` itself bound onto itself so it cannot be
//! renamed away and recreated; a mount point cannot be replaced by `rename` either, so
//! `git config` (which writes `config.lock` and renames it over `config`) fails too. The rest
//! of `.git` (objects, refs, the index) stays writable: code may still commit.

use std::path::{Path, PathBuf};

/// The entries of a `.git` directory that run code or say what runs: the configuration (and a
/// worktree's own, used with `extensions.worktreeConfig`) and the hooks.
const GUARDED: [&str; 3] = ["config", "config.worktree", "hooks"];

/// How deep submodules' repositories (`.git/modules/<name>/…`) are looked for.
const MAX_MODULE_DEPTH: usize = 4;

/// What to keep read-only in `workspace`: every existing guarded entry of its `.git`
/// directory and of its submodules' repositories beneath `.git/modules` (`hooks` is created
/// when missing, so code cannot create it), or `.git` itself when it is a file (a worktree's
/// or submodule's pointer to its repository, which code could otherwise point elsewhere).
/// Canonical paths; empty when the workspace is not a repository's top level.
pub(crate) fn read_only_paths(workspace: &Path) -> Vec<PathBuf> {
    let git = workspace.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&git) else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    if meta.is_file() {
        paths.push(crate::policy::protected::canonical(&git));
    } else if meta.is_dir() {
        guard_repository(&git, &mut paths, 0);
    }
    paths
}

/// Adds the guarded entries of the repository directory `repo`, then those of its submodules.
fn guard_repository(repo: &Path, paths: &mut Vec<PathBuf>, depth: usize) {
    let hooks = repo.join("hooks");
    if !hooks.exists() {
        // An empty hooks directory is what `git init` makes; without it, code could create it.
        let _ = std::fs::create_dir(&hooks);
    }
    for name in GUARDED {
        let path = repo.join(name);
        if std::fs::symlink_metadata(&path).is_ok() {
            paths.push(crate::policy::protected::canonical(&path));
        }
    }
    if depth >= MAX_MODULE_DEPTH {
        return;
    }
    let Ok(modules) = std::fs::read_dir(repo.join("modules")) else {
        return;
    };
    for module in modules.flatten() {
        if module.file_type().is_ok_and(|t| t.is_dir()) {
            let path = module.path();
            if path.join("HEAD").is_file() {
                guard_repository(&path, paths, depth + 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_hooks_and_submodules_are_guarded_and_a_git_file_itself() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let ws = crate::policy::protected::canonical(dir.path());
        assert!(read_only_paths(&ws).is_empty());
        std::fs::create_dir_all(ws.join(".git/modules/sub")).unwrap_or_else(|e| panic!("{e}"));
        for file in [
            ".git/config",
            ".git/modules/sub/config",
            ".git/modules/sub/HEAD",
        ] {
            std::fs::write(ws.join(file), "x").unwrap_or_else(|e| panic!("{e}"));
        }
        let mut paths = read_only_paths(&ws);
        paths.sort();
        assert_eq!(
            paths,
            [
                ws.join(".git/config"),
                ws.join(".git/hooks"),
                ws.join(".git/modules/sub/config"),
                ws.join(".git/modules/sub/hooks"),
            ]
        );
        let worktree = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let worktree = crate::policy::protected::canonical(worktree.path());
        std::fs::write(worktree.join(".git"), "gitdir: /elsewhere")
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(read_only_paths(&worktree), [worktree.join(".git")]);
    }
}
