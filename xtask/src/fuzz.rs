//! `cargo xtask fuzz [--seconds N] [TARGET...]`: runs every libFuzzer target in `fuzz/` (or
//! the ones named) for N seconds each (default 30) through `cargo fuzz`, and fails if one
//! crashes, printing how to reproduce it.
//!
//! Needs `cargo install cargo-fuzz` and a C++ compiler (libFuzzer is built from source). On a
//! stable toolchain `RUSTC_BOOTSTRAP=1` is set so that cargo-fuzz's `-Z` flags are accepted.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

/// Default seconds per target.
const DEFAULT_SECONDS: u64 = 30;

/// Runs the `fuzz` command with its arguments.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let mut seconds = DEFAULT_SECONDS;
    let mut chosen: Vec<String> = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--seconds" => {
                let value = rest.next().context("--seconds needs a number")?;
                seconds = value
                    .parse()
                    .with_context(|| format!("--seconds {value}: not a whole number"))?;
            }
            "-h" | "--help" => {
                println!(
                    "usage: cargo xtask fuzz [--seconds N] [TARGET...]   (default {DEFAULT_SECONDS} s per target)"
                );
                return Ok(());
            }
            other if other.starts_with('-') => bail!("unknown option `{other}`"),
            target => chosen.push(target.to_owned()),
        }
    }

    let fuzz_dir = fuzz_dir()?;
    let version = cargo_fuzz(&fuzz_dir).arg("--version").output();
    if !version.is_ok_and(|o| o.status.success()) {
        bail!(
            "cargo-fuzz is not installed: run `cargo install cargo-fuzz` (a C++ compiler is needed too)"
        );
    }
    let targets = if chosen.is_empty() {
        list_targets(&fuzz_dir)?
    } else {
        chosen
    };
    if targets.is_empty() {
        bail!("no fuzz targets found in {}", fuzz_dir.display());
    }

    let mut failed = Vec::new();
    for target in &targets {
        println!("=== fuzz {target}: {seconds} s");
        let started = Instant::now();
        let corpus = fuzz_dir.join("corpus").join(target);
        std::fs::create_dir_all(&corpus)
            .with_context(|| format!("creating {}", corpus.display()))?;
        let mut command = cargo_fuzz(&fuzz_dir);
        command.args(["run", target.as_str()]).arg(&corpus);
        let seeds = fuzz_dir.join("seeds").join(target);
        if seeds.is_dir() {
            command.arg(&seeds);
        }
        command.args([
            "--",
            &format!("-max_total_time={seconds}"),
            "-timeout=20",
            "-rss_limit_mb=2048",
            "-print_final_stats=1",
        ]);
        let status = command
            .status()
            .with_context(|| format!("running cargo fuzz run {target}"))?;
        println!(
            "=== fuzz {target}: {} after {:.0} s",
            if status.success() { "ok" } else { "FAILED" },
            started.elapsed().as_secs_f64()
        );
        if !status.success() {
            failed.push(target.clone());
        }
    }

    if failed.is_empty() {
        println!("all {} fuzz targets ran without a crash", targets.len());
        return Ok(());
    }
    eprintln!("\nfuzz targets that crashed: {}", failed.join(", "));
    for target in &failed {
        for artifact in artifacts(&fuzz_dir, target) {
            eprintln!(
                "  reproduce: cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run {target} {}",
                artifact.display()
            );
            eprintln!(
                "  show input: cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz fmt {target} {}",
                artifact.display()
            );
        }
    }
    eprintln!("then add the input as a regression test in tests/fault_fuzz_regressions.rs");
    bail!("{} fuzz target(s) crashed", failed.len())
}

/// `fuzz/` beside the workspace root.
fn fuzz_dir() -> anyhow::Result<PathBuf> {
    let xtask = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = xtask.parent().context("xtask has no parent directory")?;
    let dir = root.join("fuzz");
    if !dir.join("Cargo.toml").is_file() {
        bail!("{} has no Cargo.toml", dir.display());
    }
    Ok(dir)
}

/// `cargo fuzz` in `dir`, with `-Z` flags allowed on a stable toolchain.
fn cargo_fuzz(dir: &Path) -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let mut command = Command::new(cargo);
    command
        .arg("fuzz")
        .current_dir(dir)
        .env("RUSTC_BOOTSTRAP", "1");
    command
}

/// The targets `cargo fuzz list` names.
fn list_targets(dir: &Path) -> anyhow::Result<Vec<String>> {
    let output = cargo_fuzz(dir)
        .arg("list")
        .output()
        .context("running cargo fuzz list")?;
    if !output.status.success() {
        bail!(
            "cargo fuzz list failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect())
}

/// The crash/timeout/oom inputs libFuzzer saved for `target`.
fn artifacts(dir: &Path, target: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir.join("artifacts").join(target)) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter_map(|p| {
            let relative = p.strip_prefix(dir).ok()?.to_path_buf();
            Some(relative)
        })
        .collect();
    found.sort();
    found
}
