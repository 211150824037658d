//! `cargo xtask bench`: oi beside Open Interpreter 0.4.3 on the same machine, in one run, against
//! the same scripted model server (zero model time, so each agent's own overhead shows).
//!
//! The reference is installed from PyPI into `target/oi-ref` (cached). When pip cannot reach the
//! registry, the comparison is skipped with a note and oi is measured alone. `--quick` (what CI
//! runs) measures oi only, once, with small loads, and writes nothing into `docs/`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use oi_testkit::{Reply, Script, ScriptedServer};

use crate::load;
use crate::measure::{self, Sample};

mod report;

use report::{Row, chart, render};

fn wall_ms(s: &Sample) -> (f64, f64) {
    (s.wall.as_secs_f64() * 1000.0, s.max_rss_kib as f64 / 1024.0)
}

/// Options from the command line.
struct Options {
    runs: usize,
    quick: bool,
}

fn options(args: &[String]) -> anyhow::Result<Options> {
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse::<usize>())
        .transpose()
        .context("--runs takes a number")?;
    let quick = args.iter().any(|a| a == "--quick");
    Ok(Options {
        runs: runs.unwrap_or(if quick { 1 } else { 5 }),
        quick,
    })
}

/// Installs (once) and returns the reference venv's `bin` directory.
fn reference(root: &Path) -> Option<PathBuf> {
    let venv = root.join("target/oi-ref");
    let bin = venv.join("bin");
    if bin.join("interpreter").exists() {
        eprintln!(
            "bench: reference Open Interpreter 0.4.3 cached in {}",
            venv.display()
        );
        return Some(bin);
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
        && Command::new(bin.join("pip"))
            .args(["install", "-q", "open-interpreter==0.4.3"])
            .status()
            .is_ok_and(|s| s.success());
    if ok && bin.join("interpreter").exists() {
        Some(bin)
    } else {
        eprintln!(
            "bench: could not install the reference from PyPI; measuring oi alone, comparing nothing"
        );
        None
    }
}

/// Everything the benchmark runs against.
struct Bench {
    root: PathBuf,
    home: PathBuf,
    oi: PathBuf,
    xtask: PathBuf,
    original: Option<PathBuf>,
    runtime: tokio::runtime::Runtime,
    runs: usize,
}

impl Bench {
    fn command(&self, program: &Path) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(&self.home)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .env("DISABLE_TELEMETRY", "true")
            .env_remove("OPENAI_API_KEY");
        command
    }

    fn server(&self, script: Script) -> anyhow::Result<ScriptedServer> {
        Ok(self.runtime.block_on(ScriptedServer::start(script))?)
    }

    fn repeat(
        &self,
        mut one: impl FnMut() -> anyhow::Result<(f64, f64)>,
    ) -> anyhow::Result<Vec<(f64, f64)>> {
        (0..self.runs).map(|_| one()).collect()
    }

    fn startup(&self, flag: &str) -> anyhow::Result<Row> {
        let oi = self.repeat(|| {
            Ok(wall_ms(&measure::run(
                self.command(&self.oi).arg(flag),
                None,
            )?))
        })?;
        let original = match &self.original {
            Some(bin) => self.repeat(|| {
                Ok(wall_ms(&measure::run(
                    self.command(&bin.join("interpreter")).arg(flag),
                    None,
                )?))
            })?,
            None => Vec::new(),
        };
        Ok(Row {
            what: format!("start-up: `{flag}`"),
            unit: "ms",
            oi,
            original,
        })
    }

    fn cli_turn(&self, message: &str) -> anyhow::Result<Row> {
        let what = format!("one turn, CLI one-shot: \"{message}\"");
        self.cli_turn_with(Script::calculator(), message, what)
    }

    /// A one-shot turn whose code is a shell block (`echo hi`) and whose answer follows its
    /// output: what ending a shell session costs at exit (issue 17's goal: ≤ 40 ms).
    fn shell_turn(&self) -> anyhow::Result<Row> {
        let script = Script::responder(|body| {
            let after_code = body["messages"]
                .as_array()
                .and_then(|m| m.last())
                .is_some_and(|last| last["role"] == "tool");
            if after_code {
                Reply::text("Done.")
            } else {
                Reply::tool_call("shell", "echo hi")
            }
        });
        let what = "one turn, CLI one-shot that ran a shell block (goal ≤ 40 ms)".to_owned();
        self.cli_turn_with(script, "run echo hi", what)
    }

    fn cli_turn_with(&self, script: Script, message: &str, what: String) -> anyhow::Result<Row> {
        let server = self.server(script)?;
        let base = server.base_url();
        let oi = self.repeat(|| {
            let sample = measure::run(
                self.command(&self.oi).args([
                    "-y",
                    "--plain",
                    "--api_base",
                    &base,
                    "--api_key",
                    "x",
                    "-m",
                    "gpt-4o",
                    message,
                ]),
                None,
            )?;
            Ok(wall_ms(&sample))
        })?;
        let original = match &self.original {
            Some(bin) => self.repeat(|| {
                let mut command = self.command(&bin.join("interpreter"));
                command.args([
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
                Ok(wall_ms(&measure::run(
                    &mut command,
                    Some(&format!("{message}\n")),
                )?))
            })?,
            None => Vec::new(),
        };
        Ok(Row {
            what,
            unit: "ms",
            oi,
            original,
        })
    }

    /// A library turn against a fresh scripted server per run; returns the samples.
    fn library_turns(
        &self,
        script: impl Fn() -> Script,
        message: &str,
    ) -> anyhow::Result<(Vec<Sample>, Vec<Sample>)> {
        let mut oi = Vec::new();
        let mut original = Vec::new();
        for _ in 0..self.runs {
            let server = self.server(script())?;
            let sample = measure::run(
                self.command(&self.xtask)
                    .args(["lib-turn", &server.base_url(), message]),
                None,
            )?;
            oi.push(sample);
            if let Some(bin) = &self.original {
                let server = self.server(script())?;
                let script_path = self.root.join("xtask/scripts/oi_ref_turn.py");
                let mut command = self.command(&bin.join("python"));
                command.arg(script_path).args([&server.base_url(), message]);
                original.push(measure::run(&mut command, None)?);
            }
        }
        Ok((oi, original))
    }

    fn code_execution(&self) -> anyhow::Result<Vec<Row>> {
        let example = measure::run(
            Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
                .current_dir(&self.root)
                .args([
                    "run",
                    "--quiet",
                    "--release",
                    "-p",
                    "oi-computer",
                    "--example",
                    "latency",
                    "--",
                    "5",
                    "200",
                ]),
            None,
        )?;
        let one = |value: Option<f64>| value.map(|v| vec![(v, 0.0)]).unwrap_or_default();
        let (mut cold_original, mut warm_original) = (Vec::new(), Vec::new());
        if let Some(bin) = &self.original {
            let script = self
                .root
                .join("crates/oi-computer/benches/oi_ref_latency.py");
            let sample = measure::run(
                self.command(&bin.join("python")).arg(script).arg("20"),
                None,
            )?;
            cold_original = one(sample.value("cold_first_run_ms"));
            warm_original = one(sample.value("warm_median_ms"));
        }
        Ok(vec![
            Row {
                what: "code: cold `print(1)` (session start)".into(),
                unit: "ms",
                oi: one(example.value("cold_median_ms")),
                original: cold_original,
            },
            Row {
                what: "code: warm `print(1)` round trip".into(),
                unit: "ms",
                oi: one(example.value("warm_median_ms")),
                original: warm_original,
            },
        ])
    }

    fn flood(&self, megabytes: usize) -> anyhow::Result<Row> {
        let code = format!(
            "import sys\nline = 'x' * 999 + '\\n'\nfor _ in range({}):\n    sys.stdout.write(line)",
            megabytes * 1000
        );
        let script = || Script::new([Reply::tool_call("python", &code), Reply::text("Done.")]);
        let message = format!("print {megabytes} MB");
        let limit = Duration::from_secs(180);
        let server = self.server(script())?;
        let base = server.base_url();
        let oi = measure::run_limited(
            self.command(&self.oi).args([
                "-y",
                "--plain",
                "--api_base",
                &base,
                "--api_key",
                "x",
                &message,
            ]),
            None,
            limit,
        )?;
        let mut original = Vec::new();
        if let Some(bin) = &self.original {
            let server = self.server(script())?;
            let mut command = self.command(&bin.join("interpreter"));
            command.args([
                "-s",
                "-y",
                "-o",
                "-dt",
                "--plain",
                "-m",
                "openai/gpt-4o",
                "-ab",
                &server.base_url(),
                "-ak",
                "x",
                "-lsf",
            ]);
            let sample = measure::run_limited(&mut command, Some(&format!("{message}\n")), limit)?;
            if !sample.success {
                eprintln!(
                    "bench: the original did not finish the {megabytes} MB flood within {} s",
                    limit.as_secs()
                );
            }
            original.push((sample.max_rss_kib as f64 / 1024.0, 0.0));
        }
        Ok(Row {
            what: format!("output flood: peak RSS of the agent while code prints {megabytes} MB"),
            unit: "MiB",
            oi: vec![(oi.max_rss_kib as f64 / 1024.0, 0.0)],
            original,
        })
    }
}

/// The Python API (`crates/oi-python`, installed in `target/oi-python-venv`) beside the
/// original's: the import, a first and a warm turn through `interpreter.chat()`, and the same
/// warm turn through oi's Rust API. `--quick` measures only when the venv is there already
/// (`cargo xtask python-tests` makes it).
fn python_rows(bench: &Bench, root: &Path, message: &str, quick: bool) -> anyhow::Result<Vec<Row>> {
    let python = crate::python_tests::venv_python(root);
    if quick && !python.exists() {
        eprintln!(
            "bench: no Python API venv (cargo xtask python-tests makes it): Python rows skipped"
        );
        return Ok(Vec::new());
    }
    if !quick {
        crate::python_tests::install(root, true, crate::python_tests::Profile::Release, &[])?;
    }
    let script = root.join("crates/oi-python/benches/py_turns.py");
    let import = "from interpreter import interpreter";
    let import_oi = bench.repeat(|| {
        Ok(wall_ms(&measure::run(
            bench.command(&python).args(["-c", import]),
            None,
        )?))
    })?;
    let import_original = match &bench.original {
        Some(bin) => bench.repeat(|| {
            Ok(wall_ms(&measure::run(
                bench.command(&bin.join("python")).args(["-c", import]),
                None,
            )?))
        })?,
        None => Vec::new(),
    };
    let (mut first, mut warm, mut rust_warm) = (Vec::new(), Vec::new(), Vec::new());
    let (mut first_original, mut warm_original) = (Vec::new(), Vec::new());
    let ms = |sample: &Sample, key: &str| {
        sample
            .value(key)
            .map(|s| (s * 1000.0, sample.max_rss_kib as f64 / 1024.0))
    };
    for _ in 0..bench.runs {
        let server = bench.server(Script::calculator())?;
        let sample = measure::run(
            bench
                .command(&python)
                .arg(&script)
                .args([&server.base_url(), message]),
            None,
        )?;
        first.extend(ms(&sample, "chat_s"));
        warm.extend(ms(&sample, "warm_s"));
        let server = bench.server(Script::calculator())?;
        let sample = measure::run(
            bench
                .command(&bench.xtask)
                .args(["lib-turns", &server.base_url(), message]),
            None,
        )?;
        rust_warm.extend(ms(&sample, "warm_s"));
        if let Some(bin) = &bench.original {
            let server = bench.server(Script::calculator())?;
            let sample = measure::run(
                bench
                    .command(&bin.join("python"))
                    .arg(&script)
                    .args([&server.base_url(), message]),
                None,
            )?;
            first_original.extend(ms(&sample, "chat_s"));
            warm_original.extend(ms(&sample, "warm_s"));
        }
    }
    Ok(vec![
        Row {
            what: format!("Python: `{import}` (whole process)"),
            unit: "ms",
            oi: import_oi,
            original: import_original,
        },
        Row {
            what: format!("Python API: first turn `interpreter.chat(\"{message}\")` (in-process)"),
            unit: "ms",
            oi: first,
            original: first_original,
        },
        Row {
            what: "Python API: the same turn again, warm (in-process)".into(),
            unit: "ms",
            oi: warm,
            original: warm_original,
        },
        Row {
            what: "Rust API: the same warm turn, `OpenInterpreter::chat` (in-process)".into(),
            unit: "ms",
            oi: rust_warm,
            original: Vec::new(),
        },
    ])
}

fn per_step_row(oi: &[Sample], original: &[Sample], steps: usize) -> Row {
    let per_step = |samples: &[Sample]| -> Vec<(f64, f64)> {
        samples
            .iter()
            .filter_map(|s| {
                s.value("chat_s")
                    .map(|c| (c * 1000.0 / steps as f64, s.max_rss_kib as f64 / 1024.0))
            })
            .collect()
    };
    Row {
        what: format!("{steps}-step task (one code run per step): time per step"),
        unit: "ms",
        oi: per_step(oi),
        original: per_step(original),
    }
}

fn build(root: &Path) -> anyhow::Result<()> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let ok = Command::new(&cargo)
        .current_dir(root)
        .args([
            "build",
            "--quiet",
            "--release",
            "-p",
            "oi-cli",
            "-p",
            "oi-server",
            "-p",
            "xtask",
        ])
        .status()?
        .success();
    if !ok {
        bail!("building the release binaries failed");
    }
    Ok(())
}

/// Runs the benchmarks and prints (and, unless `--quick`, writes) the results.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let opts = options(args)?;
    let root = std::env::current_dir()?;
    build(&root)?;
    let home = root.join("target/bench-home");
    std::fs::create_dir_all(&home)?;
    let bench = Bench {
        oi: root.join("target/release/oi"),
        xtask: root.join("target/release/xtask"),
        original: if opts.quick { None } else { reference(&root) },
        runtime: tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?,
        runs: opts.runs,
        home,
        root: root.clone(),
    };
    let mut rows = vec![bench.startup("--version")?, bench.startup("--help")?];
    let message = "compute 239023*79043";
    rows.push(bench.cli_turn(message)?);
    rows.push(bench.shell_turn()?);
    let (oi, original) = bench.library_turns(Script::calculator, message)?;
    rows.push(Row {
        what: format!("one turn, library API: \"{message}\" (whole process)"),
        unit: "ms",
        oi: oi.iter().map(wall_ms).collect(),
        original: original.iter().map(wall_ms).collect(),
    });
    let steps = if opts.quick { 5 } else { 20 };
    let script = || {
        Script::new(
            (0..steps)
                .map(|i| Reply::tool_call("python", &format!("print({i})")))
                .chain([Reply::text("Done.")]),
        )
    };
    let (oi, original) = bench.library_turns(script, "do the task")?;
    rows.push(per_step_row(&oi, &original, steps));
    rows.extend(python_rows(&bench, &root, message, opts.quick)?);
    rows.extend(bench.code_execution()?);
    rows.push(bench.flood(if opts.quick { 20 } else { 200 })?);

    let server_bin = root.join("target/release/oi-server");
    let model = bench.server(Script::calculator())?;
    let loads: Vec<usize> = if opts.quick {
        vec![1, 10]
    } else {
        vec![1, 100, 1000]
    };
    let mut reports = Vec::new();
    for sessions in loads {
        eprintln!("bench: server load, {sessions} sessions");
        reports.push(bench.runtime.block_on(load::run(
            &server_bin,
            &model.base_url(),
            sessions,
        ))?);
    }
    let turns = if opts.quick { 100 } else { 800 };
    eprintln!("bench: server CPU per turn over {turns} turns");
    let windows = bench.runtime.block_on(load::cpu_per_turn(
        &server_bin,
        &model.base_url(),
        turns,
        true,
    ))?;
    drop(model);

    let mut markdown = render(&rows, &reports, &opts, bench.original.is_some());
    markdown.push_str(&load::bench_section(&windows, &reports));
    println!("{markdown}");
    let out_dir = if opts.quick {
        root.join("target/bench")
    } else {
        root.join("docs")
    };
    std::fs::create_dir_all(&out_dir)?;
    std::fs::write(out_dir.join("benchmarks-chart.svg"), chart(&rows))?;
    let results = out_dir.join(if opts.quick {
        "benchmarks.md"
    } else {
        "benchmarks-results.md"
    });
    std::fs::write(&results, markdown)?;
    eprintln!("bench: wrote {} and the chart beside it", results.display());
    Ok(())
}

/// `cargo xtask load [--turns N] [SESSIONS…]`: only the server load test.
pub fn load_only(args: &[String]) -> anyhow::Result<()> {
    let root = std::env::current_dir()?;
    build(&root)?;
    load::main(&root, args)
}
