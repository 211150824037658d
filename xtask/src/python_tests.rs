//! `cargo xtask python-tests [--keep-venv] [--dev-profile] [PYTEST ARGS…]`: the Python API's tests, as users
//! install it.
//!
//! 1. A fresh venv in `target/oi-python-venv` (`--keep-venv` reuses it and only reinstalls
//!    oi's package), with `pip install ./crates/oi-python` (maturin builds the wheel, in
//!    release as users get it; `--dev-profile` builds it with the dev profile instead, reusing
//!    what `cargo build` compiled) plus the tests' client libraries: pytest, websockets, openai.
//! 2. pytest on `crates/oi-python/tests`, with `OI_XTASK` naming this program: the tests start
//!    the scripted model server through it (`scripted-server --port 0 --script FILE`).
//!
//! Any failure ends the command with an error that says which step failed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

/// The venv the tests (and the benchmark's Python rows) use.
pub fn venv_dir(root: &Path) -> PathBuf {
    root.join("target/oi-python-venv")
}

/// The venv's Python.
pub fn venv_python(root: &Path) -> PathBuf {
    venv_dir(root).join("bin/python")
}

/// The workspace root (where `crates/` is).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Runs one step of the command called `tag` (`python-tests`, `original-tests`), saying
/// what it does and how long it took; an error names the step.
pub fn step_of(tag: &str, what: &str, command: &mut Command) -> anyhow::Result<()> {
    let started = Instant::now();
    eprintln!("{tag}: {what}");
    let status = command
        .status()
        .with_context(|| format!("{what}: could not start {:?}", command.get_program()))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    eprintln!(
        "{tag}: {what}: done in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn step(what: &str, command: &mut Command) -> anyhow::Result<()> {
    step_of("python-tests", what, command)
}

/// How the wheel is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Release, as `pip install` builds it for users.
    Release,
    /// Cargo's dev profile (`MATURIN_PEP517_ARGS=--profile dev`): quicker to build.
    Dev,
}

/// Where the wheel carries oi's CLI: the `interpreter` and `i` commands the package installs
/// run it (git ignores it).
pub fn bundled_oi(root: &Path) -> PathBuf {
    root.join("crates/oi-python/python/interpreter/_bin/oi")
}

/// Builds the `oi` program with `profile` and copies it into the package's sources, so the
/// wheel carries it: the package's `interpreter` command then runs the same CLI as `oi`
/// without a second build system inside the wheel build.
fn bundle_oi(root: &Path, profile: Profile) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut build = Command::new(cargo);
    build
        .current_dir(root)
        .args(["build", "-q", "-p", "oi-cli", "--bin", "oi"]);
    if profile == Profile::Release {
        build.arg("--release");
    }
    step(
        "cargo build -p oi-cli (the `oi` program the wheel carries)",
        &mut build,
    )?;
    let built = root
        .join("target")
        .join(if profile == Profile::Release {
            "release"
        } else {
            "debug"
        })
        .join("oi");
    let bundled = bundled_oi(root);
    if let Some(dir) = bundled.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::copy(&built, &bundled)
        .with_context(|| format!("copying {} to {}", built.display(), bundled.display()))?;
    Ok(())
}

/// What both Python test commands take: `--keep-venv`, `--dev-profile`, and the rest for
/// pytest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VenvOptions {
    /// `--keep-venv`: reuse the venv, reinstall only oi's package.
    pub keep: bool,
    /// `--dev-profile`: build the wheel with cargo's dev profile.
    pub profile: Profile,
    /// Everything else, passed to pytest.
    pub pytest_args: Vec<String>,
}

impl VenvOptions {
    /// Reads the command's arguments.
    pub fn parse(args: &[String]) -> Self {
        VenvOptions {
            keep: args.iter().any(|a| a == "--keep-venv"),
            profile: if args.iter().any(|a| a == "--dev-profile") {
                Profile::Dev
            } else {
                Profile::Release
            },
            pytest_args: args
                .iter()
                .filter(|a| *a != "--keep-venv" && *a != "--dev-profile")
                .cloned()
                .collect(),
        }
    }

    /// The venv with oi's package and `extra` packages installed ([`install`]); its Python.
    pub fn install(&self, root: &Path, extra: &[&str]) -> anyhow::Result<PathBuf> {
        install(root, self.keep, self.profile, extra)
    }
}

/// Makes the venv (from scratch unless `keep`) and installs oi's package into it, built with
/// `profile`, and `extra` packages.
pub fn install(
    root: &Path,
    keep: bool,
    profile: Profile,
    extra: &[&str],
) -> anyhow::Result<PathBuf> {
    let venv = venv_dir(root);
    let python = venv_python(root);
    if !keep || !python.exists() {
        if venv.exists() {
            std::fs::remove_dir_all(&venv)
                .with_context(|| format!("removing the old venv {}", venv.display()))?;
        }
        let base = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
        step(
            &format!("creating a fresh venv in {} with {base}", venv.display()),
            Command::new(&base).args(["-m", "venv"]).arg(&venv),
        )?;
    }
    let mut pip = Command::new(&python);
    pip.current_dir(root)
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .args(["-m", "pip", "install", "-q"]);
    if keep {
        pip.args(["--force-reinstall", "--no-deps"]);
    }
    if profile == Profile::Dev {
        pip.env("MATURIN_PEP517_ARGS", "--profile dev");
    }
    pip.arg("./crates/oi-python");
    bundle_oi(root, profile)?;
    step(
        "pip install ./crates/oi-python (maturin builds the wheel)",
        &mut pip,
    )?;
    if !extra.is_empty() {
        step(
            &format!("pip install {}", extra.join(" ")),
            Command::new(&python)
                .current_dir(root)
                .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
                .args(["-m", "pip", "install", "-q"])
                .args(extra),
        )?;
    }
    Ok(python)
}

/// Runs the command.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let started = Instant::now();
    let root = workspace_root();
    let options = VenvOptions::parse(args);
    let python = options.install(&root, &["pytest", "websockets", "openai"])?;
    let xtask = std::env::current_exe().context("finding the xtask program")?;
    let result = step(
        "pytest crates/oi-python/tests",
        Command::new(&python)
            .current_dir(&root)
            .env("OI_XTASK", &xtask)
            .args(["-m", "pytest", "crates/oi-python/tests", "-q", "-ra"])
            .args(&options.pytest_args),
    );
    eprintln!(
        "python-tests: {} in {:.0} s",
        if result.is_ok() { "passed" } else { "FAILED" },
        started.elapsed().as_secs_f64()
    );
    result.context("the Python API tests failed: see pytest's report above")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_commands_read_their_options_alike() {
        let args: Vec<String> = ["-k", "--keep-venv", "chat", "--dev-profile", "-x"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let options = VenvOptions::parse(&args);
        assert!(options.keep);
        assert_eq!(options.profile, Profile::Dev);
        assert_eq!(options.pytest_args, ["-k", "chat", "-x"]);
        let plain = VenvOptions::parse(&[]);
        assert!(!plain.keep && plain.profile == Profile::Release && plain.pytest_args.is_empty());
    }
}
