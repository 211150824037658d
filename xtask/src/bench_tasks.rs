//! `cargo xtask bench-tasks [--runs N] [--scripted] [--only A,B] [--limit SECS] [--oi PATH]
//! [--label TEXT] [--model FILE]`: everyday tasks (issue 28) given to `oi --local -y`, each run
//! in a fresh folder and checked by the task's checker (files, numbers, listings, a command's
//! output). Reports per task: runs solved, median wall time, median model requests; writes
//! the markdown table to `target/bench-tasks/results-LABEL.md` and each run's transcript to
//! `target/bench-tasks/runs/LABEL/TASK-N.txt`.
//!
//! - Default: the embedded model (built like `bench-local`: release, `--features local`,
//!   copied to `target/bench-tasks/oi`; `--oi PATH` runs that binary instead, e.g. an older
//!   build to compare with). `--model FILE` runs another GGUF (`OI_MODEL_PATH`).
//! - `--scripted`: the scripted model server (crates/oi-testkit) answers each task with its
//!   known-good solution, and then with a wrong one (`print("no idea")`): every solution must
//!   pass its checker and every wrong answer must fail it, with real interpreters. A short CI
//!   run, so that the harness and the checkers cannot rot; it fails when either does not hold.

mod check;
mod tasks;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use oi_llm::Env;
use oi_llm::local_model::default_model_path;
use oi_testkit::{Reply, Script, ScriptedServer};

use crate::bench_local::runs::{OiLog, Timed, run_timed};
use crate::build_tools;
use crate::measure::median;
use tasks::{Content, Step, TASKS, Task};

struct Options {
    runs: usize,
    scripted: bool,
    only: Option<Vec<String>>,
    limit: Duration,
    oi: Option<PathBuf>,
    label: Option<String>,
    model: Option<PathBuf>,
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
            "--oi" => opts.oi = Some(value(&mut i, "--oi")?.into()),
            "--label" => opts.label = Some(value(&mut i, "--label")?),
            "--model" => opts.model = Some(value(&mut i, "--model")?.into()),
            other => bail!(
                "bench-tasks: unknown option `{other}` (options: --runs N, --scripted, --only A,B, --limit SECS, --oi PATH, --label TEXT, --model FILE)"
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

/// One run of one task.
struct Outcome {
    solved: Result<(), String>,
    wall: f64,
    requests: usize,
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
        return scripted(&opts, &target, &work, &tasks);
    }
    // Absolute: oi runs in each task's folder.
    let oi = match &opts.oi {
        Some(oi) => std::fs::canonicalize(oi).with_context(|| format!("--oi {}", oi.display()))?,
        None => build_local(&target, &work)?,
    };
    // HOME is the bench's own (no user settings), so the model's path is given explicitly.
    let model = match &opts.model {
        Some(model) => model.clone(),
        None => default_model_path(&Env::from_process())
            .context("no data directory for the model: set OI_MODEL_PATH or pass --model")?,
    };
    let label = opts.label.clone().unwrap_or_else(|| "oi".to_owned());
    let runs_dir = work.join("runs").join(&label);
    let _ = std::fs::remove_dir_all(&runs_dir);
    std::fs::create_dir_all(&runs_dir)?;
    let home = work.join("home");
    let cache = work.join(format!("cache-{label}"));
    std::fs::create_dir_all(&home)?;
    let load_before = crate::bench_local::load_average();
    println!(
        "bench-tasks: {} tasks x {} runs with {} (limit {} s per run, load {load_before})",
        tasks.len(),
        opts.runs,
        oi.display(),
        opts.limit.as_secs()
    );
    let mut rows = Vec::new();
    for task in &tasks {
        let mut outcomes = Vec::new();
        for n in 1..=opts.runs {
            let folder = fresh_folder(&work, task, n)?;
            let mut command = Command::new(&oi);
            command
                .env("HOME", &home)
                .env("OI_CACHE_DIR", &cache)
                .env_remove("OPENAI_API_KEY")
                .current_dir(&folder)
                .args(["--local", "-y", "-v", task.prompt]);
            command.env("OI_MODEL_PATH", &model);
            let started = std::time::Instant::now();
            let timed = run_timed(&mut command, opts.limit);
            let outcome = match timed {
                Ok(timed) => {
                    let requests = OiLog::parse(&timed.stderr).calls.len();
                    let solved = task.check.verify(&folder, &timed.stdout);
                    save_transcript(&runs_dir, task, n, &timed, &solved)?;
                    Outcome {
                        solved,
                        wall: timed.wall.as_secs_f64(),
                        requests,
                    }
                }
                Err(error) => {
                    let text = format!("{error:#}");
                    std::fs::write(runs_dir.join(format!("{}-{n}.txt", task.name)), &text)?;
                    Outcome {
                        solved: Err(first_line(&text)),
                        wall: started.elapsed().as_secs_f64(),
                        // A run stopped at the limit: the requests it had made.
                        requests: OiLog::parse(&text).calls.len(),
                    }
                }
            };
            println!(
                "  {:<16} run {n}: {} {:>6.1} s, {} requests{}",
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
            let _ = std::fs::remove_dir_all(&folder);
            outcomes.push(outcome);
        }
        rows.push((*task, outcomes));
    }
    let report = report(&label, &oi, &opts, &rows, &load_before);
    println!("\n{report}");
    let out = work.join(format!("results-{label}.md"));
    std::fs::write(&out, &report)?;
    println!(
        "written to {}; transcripts in {}",
        out.display(),
        runs_dir.display()
    );
    Ok(())
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_owned()
}

/// Builds `oi` with the embedded model (as `bench-local` does) and copies it aside.
fn build_local(target: &Path, work: &Path) -> anyhow::Result<PathBuf> {
    let build_env = build_tools::ensure(target)?;
    crate::fetch_model::run(&[])?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    println!("building oi with the embedded model (release; the first build compiles llama.cpp)…");
    let mut build = Command::new(&cargo);
    build.args([
        "build",
        "--release",
        "--package",
        "oi-cli",
        "--features",
        "local",
    ]);
    build_env.apply(&mut build);
    build_tools::build_with_progress(build)?;
    let oi = work.join("oi");
    std::fs::copy(target.join("release").join("oi"), &oi)
        .context("copying the oi just built into target/bench-tasks")?;
    Ok(oi)
}

/// A fresh folder holding the task's files.
fn fresh_folder(work: &Path, task: &Task, n: usize) -> anyhow::Result<PathBuf> {
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

fn report(
    label: &str,
    oi: &Path,
    opts: &Options,
    rows: &[(&Task, Vec<Outcome>)],
    load_before: &str,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Everyday tasks: `{}` (label {label}), `--local -y`, {} run(s) per task, limit {} s per run{}; load average {load_before} before, {} after.\n",
        oi.display(),
        opts.runs,
        opts.limit.as_secs(),
        opts.model
            .as_ref()
            .and_then(|m| m.file_name())
            .map(|m| format!(", model {}", m.to_string_lossy()))
            .unwrap_or_default(),
        crate::bench_local::load_average()
    );
    let _ = writeln!(
        out,
        "| task | kind | solved | wall s (median) | requests (median) |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    let (mut solved, mut total) = (0, 0);
    let mut walls = Vec::new();
    let mut requests = Vec::new();
    for (task, outcomes) in rows {
        let ok = outcomes.iter().filter(|o| o.solved.is_ok()).count();
        solved += ok;
        total += outcomes.len();
        let wall: Vec<f64> = outcomes.iter().map(|o| o.wall).collect();
        let reqs: Vec<f64> = outcomes.iter().map(|o| o.requests as f64).collect();
        walls.extend(&wall);
        requests.extend(&reqs);
        let _ = writeln!(
            out,
            "| {} | {} | {ok}/{} | {:.1} | {:.0} |",
            task.name,
            task.kind,
            outcomes.len(),
            median(&wall).unwrap_or(0.0),
            median(&reqs).unwrap_or(0.0)
        );
    }
    let _ = writeln!(
        out,
        "| **all** | | **{solved}/{total}** | {:.1} (sum {:.0}) | {:.0} (sum {:.0}) |",
        median(&walls).unwrap_or(0.0),
        walls.iter().sum::<f64>(),
        median(&requests).unwrap_or(0.0),
        requests.iter().sum::<f64>()
    );
    out
}

/// The known-good solution as the scripted model's replies.
fn solution_script(task: &Task) -> Script {
    Script::new(task.solution.iter().map(|step| match step {
        Step::Code(language, code) => Reply::text(format!("```{language}\n{code}\n```")),
        Step::Say(text) => Reply::text(*text),
    }))
}

/// A wrong answer: code that prints nothing useful, then a confident claim.
fn wrong_script() -> Script {
    Script::new([
        Reply::text("```python\nprint(\"no idea\")\n```"),
        Reply::text("Done."),
    ])
}

/// `--scripted`: every solution passes its checker, every wrong answer fails it.
fn scripted(opts: &Options, target: &Path, work: &Path, tasks: &[&Task]) -> anyhow::Result<()> {
    let oi = match &opts.oi {
        Some(oi) => std::fs::canonicalize(oi).with_context(|| format!("--oi {}", oi.display()))?,
        None => {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
            let status = Command::new(&cargo)
                .args(["build", "--quiet", "--package", "oi-cli"])
                .status()?;
            if !status.success() {
                bail!("building oi failed");
            }
            target.join("debug").join("oi")
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let home = work.join("home-scripted");
    std::fs::create_dir_all(&home)?;
    let mut failures = Vec::new();
    for task in tasks {
        for (what, script, should_pass) in [
            ("solution", solution_script(task), true),
            ("wrong answer", wrong_script(), false),
        ] {
            let server = runtime.block_on(ScriptedServer::start(script))?;
            let folder = fresh_folder(work, task, 0)?;
            let mut command = Command::new(&oi);
            command
                .env("HOME", &home)
                .env_remove("OPENAI_API_KEY")
                .current_dir(&folder)
                .args([
                    "--local",
                    "--api_base",
                    &server.base_url(),
                    "--api_key",
                    "unused",
                    "-y",
                    task.prompt,
                ]);
            let timed = run_timed(&mut command, opts.limit)
                .with_context(|| format!("{}: running oi against the scripted model", task.name))?;
            let verdict = task.check.verify(&folder, &timed.stdout);
            let requests = server.request_count();
            let expected_requests = if should_pass { task.solution.len() } else { 2 };
            let ok = verdict.is_ok() == should_pass && requests == expected_requests;
            println!(
                "  {:<16} {what:<12} {} ({requests} requests{})",
                task.name,
                if ok { "as expected" } else { "WRONG" },
                verdict
                    .as_ref()
                    .err()
                    .map(|e| format!(", {e}"))
                    .unwrap_or_default()
            );
            if !ok {
                failures.push(format!(
                    "{} ({what}): checker {:?}, {requests} requests (expected {expected_requests})\n{}",
                    task.name, verdict, timed.stdout
                ));
            }
            let _ = std::fs::remove_dir_all(&folder);
        }
    }
    if failures.is_empty() {
        println!(
            "bench-tasks --scripted: {} tasks, every solution solved, every wrong answer caught",
            tasks.len()
        );
        Ok(())
    } else {
        bail!("bench-tasks --scripted:\n{}", failures.join("\n"))
    }
}
