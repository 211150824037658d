//! `cargo xtask original-tests [--keep-venv] [--dev-profile] [PYTEST ARGS…]`: Open
//! Interpreter 0.4.3's own tests (its `tests/` at commit 36ec0712) against oi's Python
//! package (issue 25).
//!
//! 1. The venv of `cargo xtask python-tests` (`pip install ./crates/oi-python`, the wheel
//!    carrying `oi`), plus the clients the original's tests import (`requests`,
//!    `websocket-client`).
//! 2. The original's `tests/` fetched from GitHub at the pinned commit into
//!    `target/original-tests` (once; the repository keeps none of its code, which is
//!    AGPL-licensed), with `tests/original/conftest.py` beside them: the adaptations, each
//!    listed in `tests/original/README.md`.
//! 3. pytest on them, with a scripted model (the calculator of `cargo xtask scripted-server`)
//!    in place of a real one.

use std::path::Path;
use std::process::Command;

use anyhow::Context;

use crate::python_tests::{VenvOptions, step_of, workspace_root};

/// The commit of Open Interpreter that carries version 0.4.3 (it has no tag).
pub const COMMIT: &str = "36ec07125efec86594c91e990f68e0ab214e7edf";
const REPOSITORY: &str = "https://github.com/OpenInterpreter/open-interpreter";

fn run_step(what: &str, command: &mut Command) -> anyhow::Result<()> {
    step_of("original-tests", what, command)
}

/// Copies the directory `from` into `to`, recursively.
fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Fetches the original's `tests/` at [`COMMIT`] into `dir` unless it is there
/// (`OI_ORIGINAL_TESTS=DIR`: copies a checkout of that `tests/` folder instead, for machines
/// that cannot reach GitHub).
fn fetch(dir: &Path) -> anyhow::Result<()> {
    if let Ok(local) = std::env::var("OI_ORIGINAL_TESTS") {
        if dir.exists() {
            std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
        }
        eprintln!("original-tests: the original's tests/ from {local} (OI_ORIGINAL_TESTS)");
        return copy_dir(Path::new(&local), &dir.join("tests"));
    }
    let marker = dir.join(".fetched");
    if std::fs::read_to_string(&marker).is_ok_and(|text| text.trim() == COMMIT) {
        return Ok(());
    }
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let git = |args: &[&str]| {
        let mut command = Command::new("git");
        command.current_dir(dir).args(args);
        command
    };
    // OI_ORIGINAL_REPO: another copy of the repository (a URL or a local git directory).
    let source = std::env::var("OI_ORIGINAL_REPO").unwrap_or_else(|_| REPOSITORY.to_owned());
    run_step("git init", &mut git(&["init", "-q"]))?;
    run_step(
        &format!("git fetch {source} {COMMIT}"),
        &mut git(&["fetch", "-q", "--depth", "1", &source, COMMIT]),
    )?;
    run_step(
        "git checkout the original's tests/",
        &mut git(&["checkout", "-q", "FETCH_HEAD", "--", "tests"]),
    )?;
    std::fs::write(&marker, COMMIT).context("writing the fetch marker")?;
    Ok(())
}

/// Runs the command.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let root = workspace_root();
    // The same options and venv as `cargo xtask python-tests`.
    let options = VenvOptions::parse(args);
    let python = options.install(
        &root,
        &[
            "pytest",
            "websockets",
            "openai",
            "requests",
            "websocket-client",
        ],
    )?;
    let dir = root.join("target/original-tests");
    fetch(&dir)?;
    std::fs::copy(
        root.join("tests/original/conftest.py"),
        dir.join("tests/conftest.py"),
    )
    .context("copying tests/original/conftest.py beside the original's tests")?;
    let xtask = std::env::current_exe().context("finding the xtask program")?;
    run_step(
        "pytest the original's tests/ (adapted by tests/original/conftest.py)",
        Command::new(&python)
            .current_dir(&dir)
            .env("OI_XTASK", &xtask)
            .env("OI_SCRIPTED_PY", root.join("crates/oi-python/tests"))
            .args([
                "-m",
                "pytest",
                "tests",
                "-q",
                "-ra",
                "-p",
                "no:cacheprovider",
            ])
            .args(&options.pytest_args),
    )
    .context("the original's tests failed on oi: see pytest's report above")
}
