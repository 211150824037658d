//! `cargo xtask bench`: oi beside Open Interpreter 0.4.3 on the same machine, same model server.
//!
//! The reference is installed from PyPI into `target/oi-ref` (cached). When pip cannot reach the
//! registry, the comparison is skipped with a note and oi is measured alone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::measure::{self, Sample};

/// One row of the results table.
struct Row {
    what: String,
    oi: Vec<Sample>,
    original: Vec<Sample>,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn summary(samples: &[Sample]) -> Option<(f64, f64, f64, f64)> {
    let walls: Vec<Duration> = samples.iter().map(|s| s.wall).collect();
    let rss: Vec<u64> = samples.iter().map(|s| s.max_rss_kib).collect();
    let median = ms(measure::median(&walls)?);
    let min = ms(*walls.iter().min()?);
    let max = ms(*walls.iter().max()?);
    Some((median, min, max, measure::median(&rss)? as f64 / 1024.0))
}

impl Row {
    fn markdown(&self) -> String {
        let cell = |s: &[Sample]| match summary(s) {
            Some((median, min, max, mib)) => {
                format!("{median:.1} ms ({min:.1}–{max:.1}), {mib:.1} MiB")
            }
            None => "skipped".to_owned(),
        };
        let ratio = match (summary(&self.oi), summary(&self.original)) {
            (Some(a), Some(b)) => {
                let pairs: Vec<u64> = self
                    .oi
                    .iter()
                    .zip(&self.original)
                    .map(|(x, y)| {
                        (y.wall.as_secs_f64() / x.wall.as_secs_f64().max(1e-9) * 10.0) as u64
                    })
                    .collect();
                let speed = measure::median(&pairs).map_or(0.0, |v| v as f64 / 10.0);
                format!(
                    "{speed:.0}× faster, {:.0}× less memory",
                    b.3 / a.3.max(0.001)
                )
            }
            _ => "–".to_owned(),
        };
        let failures = self
            .oi
            .iter()
            .chain(&self.original)
            .filter(|s| !s.success)
            .count();
        let note = if failures > 0 {
            format!(" ({failures} runs failed)")
        } else {
            String::new()
        };
        format!(
            "| {}{note} | {} | {} | {ratio} |",
            self.what,
            cell(&self.oi),
            cell(&self.original)
        )
    }
}

/// Installs (once) and returns the reference `interpreter` executable.
fn reference(root: &Path) -> Option<PathBuf> {
    let venv = root.join("target/oi-ref");
    let exe = venv.join("bin/interpreter");
    if exe.exists() {
        eprintln!(
            "bench: reference Open Interpreter 0.4.3 cached in {}",
            venv.display()
        );
        return Some(exe);
    }
    eprintln!(
        "bench: installing Open Interpreter 0.4.3 into {} (about 2 minutes, once)",
        venv.display()
    );
    let ok = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success())
        && Command::new(venv.join("bin/pip"))
            .args(["install", "-q", "open-interpreter==0.4.3"])
            .status()
            .is_ok_and(|s| s.success());
    if ok && exe.exists() {
        Some(exe)
    } else {
        eprintln!(
            "bench: could not install the reference from PyPI; comparing nothing, measuring oi alone"
        );
        None
    }
}

fn repeat(
    runs: usize,
    mut one: impl FnMut() -> anyhow::Result<Sample>,
) -> anyhow::Result<Vec<Sample>> {
    (0..runs).map(|_| one()).collect()
}

/// Runs the benchmarks and prints a Markdown table.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse())
        .transpose()
        .context("--runs takes a number")?
        .unwrap_or(5);
    let root = std::env::current_dir()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    if !Command::new(&cargo)
        .args(["build", "--quiet", "--release", "--package", "oi-cli"])
        .status()?
        .success()
    {
        bail!("building oi (release) failed");
    }
    let oi = root.join("target/release/oi");
    let original = reference(&root);
    let home = tempfile_dir(&root)?;
    let env = |command: &mut Command| {
        command
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .env("DISABLE_TELEMETRY", "true");
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let server = runtime.block_on(oi_testkit::ScriptedServer::start(
        oi_testkit::Script::calculator(),
    ))?;
    let base = server.base_url();
    let mut rows = Vec::new();
    for flag in ["--version", "--help"] {
        let oi_samples = repeat(runs, || {
            let mut c = Command::new(&oi);
            c.arg(flag);
            env(&mut c);
            Ok(measure::run(&mut c, None)?)
        })?;
        let original_samples = match &original {
            Some(exe) => repeat(runs, || {
                let mut c = Command::new(exe);
                c.arg(flag);
                env(&mut c);
                Ok(measure::run(&mut c, None)?)
            })?,
            None => Vec::new(),
        };
        rows.push(Row {
            what: format!("start-up: `{flag}`"),
            oi: oi_samples,
            original: original_samples,
        });
    }
    let message = "compute 239023*79043";
    let oi_turns = repeat(runs, || {
        let mut c = Command::new(&oi);
        c.args([
            "-y",
            "--plain",
            "--api_base",
            &base,
            "--api_key",
            "x",
            "-m",
            "gpt-4o",
            message,
        ]);
        env(&mut c);
        Ok(measure::run(&mut c, None)?)
    })?;
    let original_turns = match &original {
        Some(exe) => repeat(runs, || {
            let mut c = Command::new(exe);
            c.args([
                "-s",
                "-y",
                "-o",
                "-dt",
                "--plain",
                "-m",
                "openai/gpt-4o",
                "-ab",
                &base,
                "-ak",
                "x",
                "-lsf",
                "-cw",
                "8000",
                "-x",
                "1000",
            ]);
            env(&mut c);
            Ok(measure::run(&mut c, Some(&format!("{message}\n")))?)
        })?,
        None => Vec::new(),
    };
    rows.push(Row {
        what: format!("one turn, CLI one-shot: \"{message}\" (scripted model)"),
        oi: oi_turns,
        original: original_turns,
    });
    drop(server);
    println!(
        "| benchmark | oi: median (min–max), peak RSS | Open Interpreter 0.4.3 | oi vs original (median of pairwise ratios) |"
    );
    println!("|---|---|---|---|");
    for row in &rows {
        println!("{}", row.markdown());
    }
    println!(
        "\n{runs} runs each; machine: {} cores, {}",
        cores(),
        cpu_model()
    );
    Ok(())
}

fn tempfile_dir(root: &Path) -> anyhow::Result<PathBuf> {
    let dir = root.join("target/bench-home");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}
