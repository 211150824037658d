//! `cargo xtask bench-local [--runs N] [--quick] [--no-reference] [--realtime] [--message TEXT]`: the
//! embedded model's one-shot turn, `oi --local -y MESSAGE` (default "compute 239023*79043"),
//! beside the same turn against llama.cpp's own server (same GGUF, threads and context).
//!
//! Three columns, N runs each (median, min–max):
//! - `oi --local`, prompt-state file present (the usual case after the first run);
//! - `oi --local`, no file (a fresh `OI_CACHE_DIR` per run: the system prompt is evaluated);
//! - `oi --local --api_base <llama.cpp server>`: the model resident and its prompt cache warm,
//!   i.e. the turn's own model time plus oi — what the embedded engine is measured against.
//!
//! Figures: wall time, first byte on stdout, model load, the first call's prompt time (file
//! or evaluated), prompt and generation speed, and the model's own time (prompt + generation,
//! summed over the turn's calls). Goals (issue 17): one-shot wall within 10 % of the resident
//! model's turn, and first output within 1 s of the resident model's first output. Results
//! also go to `target/bench-local/results.md`. `--quick` is one run per column (CI);
//! `--realtime` runs the measured processes under SCHED_FIFO (`chrt -f 50`, root), so that
//! other work on a shared machine does not count (two OpenMP threads on two busy cores run
//! several times slower: a thread that loses its core stalls the other at every barrier).

pub(crate) mod runs;
pub(crate) mod server;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use oi_llm::Env;
use oi_llm::local_model::{DEFAULT_LOCAL_CONTEXT, default_model_path, physical_cores};

use crate::build_tools;
use crate::measure::median;
use runs::{OiLog, Timed, run_timed};
use server::{Server, ServerCall};

/// How long one turn may take.
const LIMIT: Duration = Duration::from_secs(600);

struct Options {
    runs: usize,
    reference: bool,
    realtime: bool,
    message: String,
}

fn options(args: &[String]) -> anyhow::Result<Options> {
    let mut opts = Options {
        runs: 5,
        reference: true,
        realtime: false,
        message: "compute 239023*79043".to_owned(),
    };
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--quick" => opts.runs = 1,
            "--no-reference" => opts.reference = false,
            "--realtime" => opts.realtime = true,
            "--runs" => {
                i += 1;
                opts.runs = args
                    .get(i)
                    .and_then(|n| n.parse().ok())
                    .filter(|n| *n > 0)
                    .context("--runs takes a number of runs, e.g. --runs 5")?;
            }
            "--message" => {
                i += 1;
                opts.message = args
                    .get(i)
                    .cloned()
                    .context("--message takes the text of the turn")?;
            }
            other => bail!(
                "bench-local: unknown option `{other}` (options: --runs N, --quick, --no-reference, --realtime, --message TEXT)"
            ),
        }
        i += 1;
    }
    Ok(opts)
}

/// One measured turn: the outside view and what `oi -v` or the server reported.
struct Turn {
    timed: Timed,
    log: OiLog,
    server: Vec<ServerCall>,
}

impl Turn {
    fn wall(&self) -> f64 {
        self.timed.wall.as_secs_f64()
    }

    fn first_byte(&self) -> Option<f64> {
        self.timed.first_byte.map(|d| d.as_secs_f64())
    }

    /// The model's own time: prompt and generation over the turn's calls.
    fn model_s(&self) -> f64 {
        if self.server.is_empty() {
            self.log
                .calls
                .iter()
                .map(|c| c.prompt_s + c.generation_s)
                .sum()
        } else {
            self.server
                .iter()
                .map(|c| c.prompt_s + c.generation_s)
                .sum()
        }
    }

    fn first_prompt_s(&self) -> Option<f64> {
        match self.server.first() {
            Some(call) => Some(call.prompt_s),
            None => self.log.calls.first().map(|c| c.prompt_s),
        }
    }

    fn prompt_tok_s(&self) -> Option<f64> {
        let (tokens, seconds) = match self.server.first() {
            Some(call) => (call.evaluated, call.prompt_s),
            None => {
                let call = self.log.calls.first()?;
                (call.evaluated, call.prompt_s)
            }
        };
        (seconds > 0.0 && tokens > 0.0).then(|| tokens / seconds)
    }

    fn generation_tok_s(&self) -> Option<f64> {
        let (tokens, seconds) = if self.server.is_empty() {
            let calls = &self.log.calls;
            (
                calls.iter().map(|c| c.generated).sum::<f64>(),
                calls.iter().map(|c| c.generation_s).sum::<f64>(),
            )
        } else {
            (
                self.server.iter().map(|c| c.generated).sum::<f64>(),
                self.server.iter().map(|c| c.generation_s).sum::<f64>(),
            )
        };
        (seconds > 0.0).then(|| tokens / seconds)
    }
}

/// The workspace's `target` directory.
pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .map_or_else(|| "target".into(), |root| root.join("target"))
        },
        PathBuf::from,
    )
}

/// `cargo xtask bench-local …`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let opts = options(args)?;
    let target = target_dir();
    let work = target.join("bench-local");
    std::fs::create_dir_all(&work)?;
    let oi = build_tools::build_local_oi(&target, &work)?;
    let model = default_model_path(&Env::from_process())
        .context("no data directory for the model: set OI_MODEL_PATH")?;
    let threads = physical_cores();
    let n_ctx = u32::try_from(DEFAULT_LOCAL_CONTEXT).unwrap_or(8192);
    let home = work.join("home");
    std::fs::create_dir_all(&home)?;
    let bench = Bench {
        oi,
        model: model.clone(),
        home,
        message: opts.message.clone(),
        realtime: opts.realtime,
    };

    println!(
        "$ oi --local -y \"{}\"   ({} runs per column, {threads} threads, context {n_ctx})",
        opts.message, opts.runs
    );
    let warm_cache = work.join("cache-warm");
    let _ = std::fs::remove_dir_all(&warm_cache);
    bench.local(&warm_cache)?; // writes the prompt-state file
    let mut cached = Vec::new();
    let mut cold = Vec::new();
    for i in 0..opts.runs {
        cached.push(bench.local(&warm_cache)?);
        let fresh = work.join(format!("cache-cold-{i}"));
        let _ = std::fs::remove_dir_all(&fresh);
        cold.push(bench.local(&fresh)?);
        let _ = std::fs::remove_dir_all(&fresh);
        println!(
            "  run {}: with the file {:.2} s, without {:.2} s",
            i + 1,
            cached[i].wall(),
            cold[i].wall()
        );
    }

    let mut reference = Vec::new();
    let mut server_start = None;
    let mut server_cold: Option<ServerCall> = None;
    let python = if opts.reference {
        server::python(&work)
    } else {
        None
    };
    if let Some(python) = python {
        let mut server = Server::start(&python, &work, &model, n_ctx, threads, opts.realtime)?;
        server_start = Some(server.start_s);
        let first = bench.served(&mut server)?; // its prompt cache starts empty: the cold call
        server_cold = first.server.first().copied();
        for _ in 0..opts.runs {
            reference.push(bench.served(&mut server)?);
        }
    }

    let report = report(&Report {
        opts: &opts,
        threads,
        n_ctx,
        cached: &cached,
        cold: &cold,
        reference: &reference,
        server_start,
        server_cold,
    });
    println!("\n{report}");
    let out = work.join("results.md");
    std::fs::write(&out, &report)?;
    println!("written to {}", out.display());
    Ok(())
}

/// How a turn is run.
struct Bench {
    oi: PathBuf,
    model: PathBuf,
    home: PathBuf,
    message: String,
    /// Run under SCHED_FIFO (`chrt -f 50`), so other work on the machine does not count.
    realtime: bool,
}

/// `program`, or `chrt -f 50 program` when `realtime`.
fn program(program: &Path, realtime: bool) -> Command {
    if realtime {
        let mut command = Command::new("chrt");
        command.args(["-f", "50"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

impl Bench {
    fn command(&self, cache: &Path) -> Command {
        let mut command = program(&self.oi, self.realtime);
        command
            .env("HOME", &self.home)
            .env("OI_MODEL_PATH", &self.model)
            .env("OI_CACHE_DIR", cache)
            .env_remove("OPENAI_API_KEY")
            .current_dir(&self.home);
        command
    }

    /// `oi --local -y -v MESSAGE` with its prompt-state files in `cache`.
    fn local(&self, cache: &Path) -> anyhow::Result<Turn> {
        let mut command = self.command(cache);
        command.args(["--local", "-y", "-v", &self.message]);
        let timed = run_timed(&mut command, LIMIT)?;
        let log = OiLog::parse(&timed.stderr);
        if log.calls.is_empty() {
            bail!("oi -v reported no local model call:\n{}", timed.stderr);
        }
        Ok(Turn {
            timed,
            log,
            server: Vec::new(),
        })
    }

    /// The same turn against llama.cpp's server.
    fn served(&self, server: &mut Server) -> anyhow::Result<Turn> {
        let _ = server.new_calls();
        let mut command = self.command(&self.home.join("unused-cache"));
        command.args([
            "--local",
            "--api_base",
            &server.url,
            "--api_key",
            "unused",
            "-y",
            &self.message,
        ]);
        let timed = run_timed(&mut command, LIMIT)?;
        let calls = server.new_calls();
        Ok(Turn {
            timed,
            log: OiLog::default(),
            server: calls,
        })
    }
}

struct Report<'a> {
    opts: &'a Options,
    threads: usize,
    n_ctx: u32,
    cached: &'a [Turn],
    cold: &'a [Turn],
    reference: &'a [Turn],
    server_start: Option<f64>,
    server_cold: Option<ServerCall>,
}

/// `median (min–max)` of the values, or `–`.
fn cell(values: &[f64], unit: &str) -> String {
    let Some(mid) = median(values) else {
        return "–".to_owned();
    };
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if values.len() == 1 {
        format!("{mid:.2} {unit}")
    } else {
        format!("{mid:.2} {unit} ({min:.2}–{max:.2})")
    }
}

fn column(turns: &[Turn], f: impl Fn(&Turn) -> Option<f64>) -> Vec<f64> {
    turns.iter().filter_map(f).collect()
}

fn report(r: &Report<'_>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Local model benchmark: `oi --local -y \"{}\"`, {} run(s) per column, {} threads, context {} tokens, load average {}{}.\n",
        r.opts.message,
        r.opts.runs,
        r.threads,
        r.n_ctx,
        load_average(),
        if r.opts.realtime {
            ", measured processes under SCHED_FIFO (--realtime)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "| figure | oi --local, prompt-state file | oi --local, no file | llama.cpp server (resident, warm) | goal | met |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    let wall = |t: &Turn| Some(t.wall());
    let first = |t: &Turn| t.first_byte();
    let (ref_wall, ref_first) = (
        median(&column(r.reference, wall)),
        median(&column(r.reference, first)),
    );
    let cached_wall = median(&column(r.cached, wall));
    let cached_first = median(&column(r.cached, first));
    let wall_goal = ref_wall.map(|w| w * 1.10);
    let first_goal = ref_first.map(|f| f + 1.0);
    let met = |value: Option<f64>, goal: Option<f64>| match (value, goal) {
        (Some(v), Some(g)) => {
            if v <= g {
                "yes".to_owned()
            } else {
                format!("no (+{:.2} s)", v - g)
            }
        }
        _ => "–".to_owned(),
    };
    let goal_text = |goal: Option<f64>, what: &str| {
        goal.map_or_else(|| "–".to_owned(), |g| format!("≤ {g:.2} s ({what})"))
    };
    let rows: Vec<(String, Vec<String>, String, String)> = vec![
        (
            "one-shot wall time".to_owned(),
            vec![
                cell(&column(r.cached, wall), "s"),
                cell(&column(r.cold, wall), "s"),
                cell(&column(r.reference, wall), "s"),
            ],
            goal_text(wall_goal, "server + 10 %"),
            met(cached_wall, wall_goal),
        ),
        (
            "first output byte".to_owned(),
            vec![
                cell(&column(r.cached, first), "s"),
                cell(&column(r.cold, first), "s"),
                cell(&column(r.reference, first), "s"),
            ],
            goal_text(first_goal, "server + 1 s"),
            met(cached_first, first_goal),
        ),
        (
            "model load".to_owned(),
            vec![
                cell(&column(r.cached, |t| t.log.load_s), "s"),
                cell(&column(r.cold, |t| t.log.load_s), "s"),
                r.server_start.map_or_else(
                    || "–".to_owned(),
                    |s| format!("{s:.2} s (start to listening, once)"),
                ),
            ],
            "–".to_owned(),
            "–".to_owned(),
        ),
        (
            "context creation".to_owned(),
            vec![
                cell(&column(r.cached, |t| t.log.context_s), "s"),
                cell(&column(r.cold, |t| t.log.context_s), "s"),
                "(in start)".to_owned(),
            ],
            "–".to_owned(),
            "–".to_owned(),
        ),
        (
            "first call's prompt (file read + rest / evaluated)".to_owned(),
            vec![
                cell(&column(r.cached, Turn::first_prompt_s), "s"),
                cell(&column(r.cold, Turn::first_prompt_s), "s"),
                format!(
                    "{} warm; cold: {}",
                    cell(&column(r.reference, Turn::first_prompt_s), "s"),
                    r.server_cold
                        .map_or_else(|| "–".to_owned(), |c| format!("{:.2} s", c.prompt_s))
                ),
            ],
            "–".to_owned(),
            "–".to_owned(),
        ),
        (
            "first call: prompt tokens (evaluated, from file)".to_owned(),
            vec![
                tokens_cell(r.cached),
                tokens_cell(r.cold),
                r.server_cold.map_or_else(
                    || "–".to_owned(),
                    |c| format!("cold: {:.0} evaluated", c.evaluated),
                ),
            ],
            "–".to_owned(),
            "–".to_owned(),
        ),
        (
            "first call: request to first token".to_owned(),
            vec![
                cell(
                    &column(r.cached, |t| t.log.calls.first().map(|c| c.first_token_s)),
                    "s",
                ),
                cell(
                    &column(r.cold, |t| t.log.calls.first().map(|c| c.first_token_s)),
                    "s",
                ),
                "–".to_owned(),
            ],
            "–".to_owned(),
            "–".to_owned(),
        ),
        (
            "prompt evaluation speed, first call".to_owned(),
            vec![
                cell(&column(r.cached, Turn::prompt_tok_s), "tok/s"),
                cell(&column(r.cold, Turn::prompt_tok_s), "tok/s"),
                r.server_cold.map_or_else(
                    || "–".to_owned(),
                    |c| {
                        format!(
                            "{:.1} tok/s (cold call)",
                            c.evaluated / c.prompt_s.max(1e-9)
                        )
                    },
                ),
            ],
            "–".to_owned(),
            "–".to_owned(),
        ),
        (
            "generation speed".to_owned(),
            vec![
                cell(&column(r.cached, Turn::generation_tok_s), "tok/s"),
                cell(&column(r.cold, Turn::generation_tok_s), "tok/s"),
                cell(&column(r.reference, Turn::generation_tok_s), "tok/s"),
            ],
            "–".to_owned(),
            "–".to_owned(),
        ),
        (
            "model's own time (prompt + generation, all calls)".to_owned(),
            vec![
                cell(&column(r.cached, |t| Some(t.model_s())), "s"),
                cell(&column(r.cold, |t| Some(t.model_s())), "s"),
                cell(&column(r.reference, |t| Some(t.model_s())), "s"),
            ],
            "–".to_owned(),
            "–".to_owned(),
        ),
        (
            "wall ÷ model's own time".to_owned(),
            vec![
                cell(
                    &column(r.cached, |t| Some(t.wall() / t.model_s().max(1e-9))),
                    "×",
                ),
                cell(
                    &column(r.cold, |t| Some(t.wall() / t.model_s().max(1e-9))),
                    "×",
                ),
                cell(
                    &column(r.reference, |t| Some(t.wall() / t.model_s().max(1e-9))),
                    "×",
                ),
            ],
            "–".to_owned(),
            "–".to_owned(),
        ),
    ];
    for (what, cells, goal, met) in rows {
        let _ = writeln!(out, "| {what} | {} | {goal} | {met} |", cells.join(" | "));
    }
    let calls = |turns: &[Turn]| {
        turns
            .first()
            .map_or(0, |t| t.log.calls.len().max(t.server.len()))
    };
    let _ = writeln!(
        out,
        "\nModel calls per turn: {} (oi --local), {} (server). Reply of the last run:\n\n```\n{}\n```",
        calls(r.cached),
        calls(r.reference),
        r.cached.last().map_or("", |t| t.timed.stdout.trim())
    );
    out
}

/// The first call's prompt tokens of the last turn: `total (evaluated, from file)`.
fn tokens_cell(turns: &[Turn]) -> String {
    turns.last().and_then(|t| t.log.calls.first()).map_or_else(
        || "–".to_owned(),
        |c| {
            format!(
                "{:.0} ({:.0}, {:.0})",
                c.prompt_tokens, c.evaluated, c.from_file
            )
        },
    )
}

pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned())
}
