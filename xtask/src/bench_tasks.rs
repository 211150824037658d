//! `cargo xtask bench-tasks [--runs N] [--scripted] [--reference [--reference-runs N]]
//! [--only A,B] [--limit SECS] [--oi PATH] [--label TEXT] [--model FILE]`: everyday tasks (issue 28) given to `oi --local -y`, each run
//! in a fresh folder and checked by the task's checker (files, numbers, listings, a command's
//! output). Reports per task: runs solved, median wall time, median model requests; writes
//! the markdown table to `target/bench-tasks/results-LABEL.md` and each run's transcript to
//! `target/bench-tasks/runs/LABEL/TASK-N.txt`.
//!
//! - Default: the embedded model (built like `bench-local`: release, `--features local`,
//!   copied to `target/bench-tasks/oi`; `--oi PATH` runs that binary instead, e.g. an older
//!   build to compare with). `--model FILE` runs another GGUF (`OI_MODEL_PATH`).
//! - `--reference`: the original Open Interpreter 0.4.3 gets the same tasks, each run in a
//!   fresh folder with the same checkers, driving the same GGUF through llama.cpp's server
//!   (see `original.rs`); oi and the original take turns run by run, so that the machine's load
//!   falls on both alike (`--reference-runs N`: the original runs only the first N of each
//!   task's runs). The load average is sampled before every run.
//! - `--scripted`: the scripted model server (crates/oi-testkit) answers each task with its
//!   known-good solution, and then with a wrong one (`print("no idea")`): every solution must
//!   pass its checker and every wrong answer must fail it, with real interpreters. A short CI
//!   run, so that the harness and the checkers cannot rot; it fails when either does not hold.

mod check;
mod original;
mod report;
mod scripted;
mod tasks;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use oi_llm::Env;
use oi_llm::local_model::default_model_path;

use crate::bench_local::runs::{OiLog, Timed, run_timed};
use crate::build_tools;
use original::Original;
use report::{Outcome, Row};
use tasks::{Content, TASKS, Task};

pub(super) struct Options {
    runs: usize,
    scripted: bool,
    only: Option<Vec<String>>,
    limit: Duration,
    oi: Option<PathBuf>,
    label: Option<String>,
    model: Option<PathBuf>,
    reference: bool,
    reference_runs: Option<usize>,
}

fn options(args: &[String]) -> anyhow::Result<Options> {
    let mut opts = Options {
        runs: 3,
        scripted: false,
        only: None,
        limit: Duration::from_secs(120),
        oi: None,
        label: None,
        model: None,
        reference: false,
        reference_runs: None,
    };
    let mut i = 0;
    let value = |i: &mut usize, name: &str| -> anyhow::Result<String> {
        *i += 1;
        args.get(*i)
            .cloned()
            .with_context(|| format!("{name} takes a value"))
    };
    while i < args.len() {
        match args[i].as_str() {
            "--scripted" => opts.scripted = true,
            "--runs" => {
                opts.runs = value(&mut i, "--runs")?
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .context("--runs takes a number of runs")?;
            }
            "--limit" => {
                let secs: u64 = value(&mut i, "--limit")?
                    .parse()
                    .context("--limit takes seconds")?;
                opts.limit = Duration::from_secs(secs);
            }
            "--only" => {
                opts.only = Some(
                    value(&mut i, "--only")?
                        .split(',')
                        .map(str::to_owned)
                        .collect(),
                );
            }
            "--reference" => opts.reference = true,
            "--reference-runs" => {
                opts.reference = true;
                opts.reference_runs = Some(
                    value(&mut i, "--reference-runs")?
                        .parse()
                        .context("--reference-runs takes a number of runs")?,
                );
            }
            "--oi" => opts.oi = Some(value(&mut i, "--oi")?.into()),
            "--label" => opts.label = Some(value(&mut i, "--label")?),
            "--model" => opts.model = Some(value(&mut i, "--model")?.into()),
            other => bail!(
                "bench-tasks: unknown option `{other}` (options: --runs N, --scripted, --reference, --reference-runs N, --only A,B, --limit SECS, --oi PATH, --label TEXT, --model FILE)"
            ),
        }
        i += 1;
    }
    let unknown = opts
        .only
        .iter()
        .flatten()
        .find(|n| !TASKS.iter().any(|t| t.name == n.as_str()));
    if let Some(unknown) = unknown {
        bail!("bench-tasks: no task named `{unknown}`");
    }
    Ok(opts)
}

/// `cargo xtask bench-tasks …`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let opts = options(args)?;
    let target = crate::bench_local::target_dir();
    let work = target.join("bench-tasks");
    std::fs::create_dir_all(&work)?;
    let tasks: Vec<&Task> = TASKS
        .iter()
        .filter(|t| {
            opts.only
                .as_ref()
                .is_none_or(|o| o.iter().any(|n| n == t.name))
        })
        .collect();
    if opts.scripted {
        return scripted::scripted(&opts, &target, &work, &tasks);
    }
    // Absolute: oi runs in each task's folder.
    let oi = match &opts.oi {
        Some(oi) => std::fs::canonicalize(oi).with_context(|| format!("--oi {}", oi.display()))?,
        None => build_tools::build_local_oi(&target, &work)?,
    };
    // HOME is the bench's own (no user settings), so the model's path is given explicitly.
    let model = match &opts.model {
        Some(model) => model.clone(),
        None => default_model_path(&Env::from_process())
            .context("no data directory for the model: set OI_MODEL_PATH or pass --model")?,
    };
    let label = opts.label.clone().unwrap_or_else(|| "oi".to_owned());
    let runs_dir = work.join("runs").join(&label);
    let original_dir = work.join("runs").join(format!("{label}-original"));
    for dir in [&runs_dir, &original_dir] {
        let _ = std::fs::remove_dir_all(dir);
    }
    std::fs::create_dir_all(&runs_dir)?;
    let mut original = if opts.reference {
        std::fs::create_dir_all(&original_dir)?;
        Some(Original::start(&work, &model)?)
    } else {
        None
    };
    let home = work.join("home");
    let cache = work.join(format!("cache-{label}"));
    std::fs::create_dir_all(&home)?;
    let load_before = crate::bench_local::load_average();
    println!(
        "bench-tasks: {} tasks x {} runs with {}{} (limit {} s per run, load {load_before})",
        tasks.len(),
        opts.runs,
        oi.display(),
        if original.is_some() {
            " and the original"
        } else {
            ""
        },
        opts.limit.as_secs()
    );
    let mut rows = Vec::new();
    let mut loads = Vec::new();
    for task in &tasks {
        let mut row = Row {
            task,
            oi: Vec::new(),
            original: Vec::new(),
        };
        for n in 1..=opts.runs {
            loads.push(one_minute_load());
            let folder = fresh_folder(&work, task, n)?;
            let mut command = Command::new(&oi);
            command
                .env("HOME", &home)
                .env("OI_CACHE_DIR", &cache)
                .env("OI_MODEL_PATH", &model)
                .env_remove("OPENAI_API_KEY")
                .current_dir(&folder)
                .args(["--local", "-y", "-v", task.prompt]);
            let started = std::time::Instant::now();
            let timed = run_timed(&mut command, opts.limit);
            let wall = started.elapsed().as_secs_f64();
            // From oi's log (a run stopped at the limit: the requests it had made).
            let requests = match &timed {
                Ok(timed) => OiLog::parse(&timed.stderr).calls.len(),
                Err(error) => OiLog::parse(&format!("{error:#}")).calls.len(),
            };
            let outcome = judge(task, n, &folder, &runs_dir, timed, wall, requests)?;
            print_outcome(task, n, "oi", &outcome);
            let _ = std::fs::remove_dir_all(&folder);
            row.oi.push(outcome);
            let Some(original) = original.as_mut() else {
                continue;
            };
            if opts.reference_runs.is_some_and(|r| n > r) {
                continue;
            }
            loads.push(one_minute_load());
            let folder = fresh_folder(&work, task, n)?;
            let started = std::time::Instant::now();
            let (timed, served) = original.run(&folder, task.prompt, opts.limit);
            let wall = started.elapsed().as_secs_f64();
            let outcome = judge(task, n, &folder, &original_dir, timed, wall, served)?;
            print_outcome(task, n, "original", &outcome);
            let _ = std::fs::remove_dir_all(&folder);
            row.original.push(outcome);
        }
        rows.push(row);
    }
    let header = report::Header {
        label: &label,
        oi: &oi,
        runs: opts.runs,
        limit: opts.limit,
        model: &model,
        original: original.as_ref().map(Original::describe),
        load_before: &load_before,
        loads: &loads,
    };
    let report = report::report(&header, &rows);
    println!("\n{report}");
    let out = work.join(format!("results-{label}.md"));
    std::fs::write(&out, &report)?;
    println!(
        "written to {}; transcripts in {}",
        out.display(),
        work.join("runs").display()
    );
    Ok(())
}

/// The one-minute load average (0 where there is none).
fn one_minute_load() -> f64 {
    crate::bench_local::load_average()
        .split_whitespace()
        .next()
        .and_then(|l| l.parse().ok())
        .unwrap_or(0.0)
}

/// Checks one run's result and saves its transcript.
fn judge(
    task: &Task,
    n: usize,
    folder: &Path,
    dir: &Path,
    timed: anyhow::Result<Timed>,
    wall: f64,
    requests: usize,
) -> anyhow::Result<Outcome> {
    let solved = match timed {
        Ok(timed) => {
            let solved = task.check.verify(folder, &timed.stdout);
            save_transcript(dir, task, n, &timed, &solved)?;
            solved
        }
        Err(error) => {
            let text = format!("{error:#}");
            std::fs::write(dir.join(format!("{}-{n}.txt", task.name)), &text)?;
            Err(first_line(&text))
        }
    };
    Ok(Outcome {
        solved,
        wall,
        requests,
    })
}

fn print_outcome(task: &Task, n: usize, who: &str, outcome: &Outcome) {
    println!(
        "  {:<16} {who:<8} run {n}: {} {:>6.1} s, {} requests{}",
        task.name,
        if outcome.solved.is_ok() {
            "ok  "
        } else {
            "FAIL"
        },
        outcome.wall,
        outcome.requests,
        outcome
            .solved
            .as_ref()
            .err()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default()
    );
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_owned()
}

/// A fresh folder holding the task's files.
pub(super) fn fresh_folder(work: &Path, task: &Task, n: usize) -> anyhow::Result<PathBuf> {
    let folder = work.join("folders").join(format!("{}-{n}", task.name));
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::create_dir_all(&folder)?;
    for (name, content) in task.files {
        std::fs::write(folder.join(name), Content::render(*content))
            .with_context(|| format!("writing {name} for {}", task.name))?;
    }
    Ok(folder)
}

fn save_transcript(
    dir: &Path,
    task: &Task,
    n: usize,
    timed: &Timed,
    solved: &Result<(), String>,
) -> anyhow::Result<()> {
    let verdict = match solved {
        Ok(()) => "solved".to_owned(),
        Err(why) => format!("not solved: {why}"),
    };
    let text = format!(
        "task: {}\nprompt: {}\nverdict: {verdict}\nwall: {:.2} s\n\n--- stdout\n{}\n--- stderr\n{}",
        task.name,
        task.prompt,
        timed.wall.as_secs_f64(),
        timed.stdout,
        timed.stderr
    );
    std::fs::write(dir.join(format!("{}-{n}.txt", task.name)), text)?;
    Ok(())
}
