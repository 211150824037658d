//! `cargo xtask lib-turn BASE_URL MESSAGE`: one turn through oi's blocking library API (the
//! measured side of the benchmark's library rows). Prints `chat_s=… messages=…`.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;

/// Runs one turn with auto_run on against the model server at `args[0]`.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let base = args.first().context("usage: lib-turn BASE_URL MESSAGE")?;
    let message = args.get(1..).map(|m| m.join(" ")).unwrap_or_default();
    let mut settings = oi_core::Settings {
        auto_run: true,
        conversation_history: false,
        ..oi_core::Settings::default()
    };
    settings.llm.api_base = Some(base.clone());
    settings.llm.api_key = Some("x".to_owned());
    settings.llm.supports_functions = Some(true);
    let model = Arc::new(oi_llm::OpenAiCompatible::new());
    let computer = Arc::new(oi_computer::LocalComputer::new());
    let oi = oi_core::OpenInterpreter::new(settings, model, computer, oi_judge::judge())?;
    let started = Instant::now();
    let messages = oi.chat(message)?;
    let chat = started.elapsed();
    oi.reset();
    println!(
        "chat_s={:.4} messages={}",
        chat.as_secs_f64(),
        messages.len()
    );
    Ok(())
}
