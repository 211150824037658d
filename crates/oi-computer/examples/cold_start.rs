//! How long the first block of a language waits for its first output, with and without the
//! session started while the model still writes the code (`Computer::prepare`, which the
//! respond loop calls at the block's first piece). Generation is simulated by a pause of
//! `MS` milliseconds between the block's start and its end (default 300).
//!
//! `cargo run --release -p oi-computer --example cold_start [MS] [RUNS]`

use std::time::{Duration, Instant};

use futures::StreamExt;
use oi_computer::LocalComputer;
use oi_core::computer::Computer;

/// Milliseconds from the end of the code to its first output, for one fresh computer.
async fn first_output_ms(language: &str, code: &str, prepare: bool, generation: Duration) -> f64 {
    let computer = LocalComputer::new();
    if prepare {
        Computer::prepare(&computer, language);
    }
    tokio::time::sleep(generation).await;
    let started = Instant::now();
    let mut outputs = computer.run(language, code);
    let _ = outputs.next().await;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    drop(outputs);
    computer.terminate().await;
    ms
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let generation_ms: u64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(300);
    let runs: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let generation = Duration::from_millis(generation_ms);
    println!(
        "first output after the code's end, median of {runs}, {generation_ms} ms of generation"
    );
    println!("| language | cold (ms) | started while the code streams (ms) |");
    println!("|---|---|---|");
    for (language, code) in [
        ("python", "print(1)"),
        ("shell", "echo 1"),
        ("javascript", "console.log(1)"),
    ] {
        let mut cold = Vec::new();
        let mut warm = Vec::new();
        for _ in 0..runs {
            cold.push(first_output_ms(language, code, false, generation).await);
            warm.push(first_output_ms(language, code, true, generation).await);
        }
        println!("| {language} | {:.1} | {:.1} |", median(cold), median(warm));
    }
}
