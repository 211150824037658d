//! `cargo xtask lib-turns BASE_URL MESSAGE`: two turns through oi's blocking Rust API, the same
//! as `crates/oi-python/benches/py_turns.py` does through the Python API (the benchmark puts
//! them side by side). Prints `chat_s=… warm_s=…`: the first turn (code sessions start) and the
//! second, warm one.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;

/// Runs two turns with auto_run on against the model server at `args[0]`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let base = args.first().context("usage: lib-turns BASE_URL MESSAGE")?;
    let message = args.get(1..).map(|m| m.join(" ")).unwrap_or_default();
    let mut settings = oi_core::Settings {
        auto_run: true,
        conversation_history: false,
        offline: true,
        ..oi_core::Settings::default()
    };
    settings.llm.model = "openai/gpt-4o".to_owned();
    settings.llm.api_base = Some(base.clone());
    settings.llm.api_key = Some("x".to_owned());
    settings.llm.supports_functions = Some(true);
    settings.llm.context_window = Some(8000);
    settings.llm.max_tokens = Some(1000);
    let model = oi_llm::provider_for(&settings.llm, oi_llm::Env::empty())?;
    let computer = Arc::new(oi_computer::LocalComputer::new());
    let oi = oi_core::OpenInterpreter::new(settings, model, computer, oi_judge::judge())?;
    let started = Instant::now();
    oi.chat(message.clone())?;
    let first = started.elapsed();
    let started = Instant::now();
    oi.chat(message)?;
    let warm = started.elapsed();
    oi.reset();
    println!(
        "chat_s={:.4} warm_s={:.4}",
        first.as_secs_f64(),
        warm.as_secs_f64()
    );
    Ok(())
}
