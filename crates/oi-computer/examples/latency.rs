//! Latency of `print(1)` in oi's Python session: several cold starts (a new computer, so a
//! new session, each time) and the median of many warm round trips.
//!
//! `cargo run --release -p oi-computer --example latency -- [COLD_STARTS] [WARM_RUNS] [SANDBOX]`
//! (SANDBOX: `off`, the default, `workspace` or `readonly`; a sandboxed session also starts in
//! its own PID and mount namespaces where the machine allows).

use std::time::{Duration, Instant};

use oi_computer::{LocalComputer, SandboxMode, SandboxPolicy, SandboxSupport};
use oi_core::computer::{Computer, Output};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

async fn print_one(computer: &LocalComputer) -> Result<Duration, String> {
    let started = Instant::now();
    let out = computer.run_collect("python", "print(1)").await;
    let took = started.elapsed();
    if out == vec![Output::console("1\n")] {
        Ok(took)
    } else {
        Err(format!("unexpected output: {out:?}"))
    }
}

async fn measure(
    cold_starts: usize,
    warm_runs: usize,
    mode: SandboxMode,
    support: SandboxSupport,
) -> Result<(), String> {
    let new = || LocalComputer::new().with_sandbox_support(SandboxPolicy::new(mode), support);
    let mut cold = Vec::new();
    for _ in 0..cold_starts {
        let computer = new();
        cold.push(print_one(&computer).await?);
        computer.terminate().await;
    }
    let computer = new();
    print_one(&computer).await?;
    let mut warm = Vec::new();
    for _ in 0..warm_runs {
        warm.push(print_one(&computer).await?);
    }
    computer.terminate().await;
    println!(
        "cold_median_ms={:.1} cold_min_ms={:.1} cold_max_ms={:.1} cold_starts={cold_starts} warm_median_ms={:.3} warm_min_ms={:.3} warm_runs={warm_runs}",
        ms(median(cold.clone())),
        ms(cold.iter().min().copied().unwrap_or_default()),
        ms(cold.iter().max().copied().unwrap_or_default()),
        ms(median(warm.clone())),
        ms(warm.iter().min().copied().unwrap_or_default()),
    );
    Ok(())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let cold_starts = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let warm_runs = args.next().and_then(|a| a.parse().ok()).unwrap_or(200);
    let mode = match args.next().map(|a| a.parse::<SandboxMode>()) {
        None => SandboxMode::Off,
        Some(Ok(mode)) => mode,
        Some(Err(e)) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    // Probed once, as oi and oi-server do, so cold starts measure sessions only.
    let probing = Instant::now();
    let support = oi_computer::probe();
    eprintln!(
        "probe_ms={:.2} ({support})",
        probing.elapsed().as_secs_f64() * 1e3
    );
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("no runtime: {e}");
            std::process::exit(1);
        }
    };
    if let Err(e) = runtime.block_on(measure(cold_starts, warm_runs, mode, support)) {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
