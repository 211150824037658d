//! Wires settings, the model provider and the computer into an interpreter, and runs a turn
//! or a simple line-by-line session.

use std::io::{BufRead, Write};
use std::sync::Arc;

use anyhow::Context as _;
use futures::StreamExt;
use oi_core::{Chunk, Content, Interpreter, Kind, Settings, Turn};

use crate::args::Args;
use crate::render::PlainRenderer;

/// The version line.
pub fn version_line() -> String {
    format!(
        "oi {} (Open Interpreter 0.4.3 compatible)",
        env!("CARGO_PKG_VERSION")
    )
}

/// Settings from the defaults overridden by flags.
pub fn settings_from(args: &Args) -> Settings {
    let mut settings = Settings::default();
    let llm = &mut settings.llm;
    if let Some(model) = &args.model {
        llm.model = model.clone();
    }
    llm.api_base = args.api_base.clone().or(llm.api_base.take());
    llm.api_key = args.api_key.clone().or(llm.api_key.take());
    llm.api_version = args.api_version.clone().or(llm.api_version.take());
    if let Some(t) = args.temperature {
        llm.temperature = t;
    }
    llm.context_window = args.context_window.or(llm.context_window);
    llm.max_tokens = args.max_tokens.or(llm.max_tokens);
    llm.supports_functions = args.supports_functions().or(llm.supports_functions);
    llm.supports_vision = args.supports_vision().or(llm.supports_vision);
    settings.auto_run |= args.auto_run;
    if let Some(max_output) = args.max_output {
        settings.max_output = max_output;
    }
    settings.loop_mode |= args.loop_mode;
    if let Some(system_message) = &args.system_message {
        settings.system_message = system_message.clone();
    }
    if let Some(custom) = &args.custom_instructions {
        settings.custom_instructions = custom.clone();
    }
    settings.offline |= args.offline;
    settings.verbose |= args.verbose;
    settings.plain_text_display |= args.plain || args.stdin;
    settings.disable_telemetry = true;
    settings
}

/// Builds the interpreter from settings.
pub fn interpreter(settings: Settings) -> Interpreter {
    let model = Arc::new(oi_llm::OpenAiCompatible::new());
    let computer = Arc::new(oi_computer::LocalComputer::new());
    Interpreter::new(settings, model, computer)
}

/// Asks "Would you like to run this code? (y/n)" on the terminal. No answer (EOF) declines.
fn ask_approval(turn: &Turn) -> std::io::Result<()> {
    let mut out = std::io::stdout();
    write!(out, "\nWould you like to run this code? (y/n)\n\n")?;
    out.flush()?;
    let mut answer = String::new();
    let read = std::io::stdin().lock().read_line(&mut answer)?;
    if read == 0 {
        eprintln!("(no answer on standard input: declined. Use -y to run code without asking.)");
        turn.decline();
    } else if answer.trim().eq_ignore_ascii_case("y") {
        turn.approve();
    } else {
        turn.decline();
    }
    Ok(())
}

/// Runs one turn, printing it as plain text. Returns an error if the turn failed.
pub async fn run_turn(mut turn: Turn) -> anyhow::Result<()> {
    let mut renderer = PlainRenderer::new();
    let mut out = std::io::stdout();
    while let Some(chunk) = turn.next().await {
        let chunk: Chunk = chunk?;
        if chunk.kind == Some(Kind::Confirmation) {
            if let Some(Content::Code(_)) = &chunk.content {
                tokio::task::block_in_place(|| ask_approval(&turn))
                    .context("reading the answer")?;
            }
            continue;
        }
        let text = renderer.render(&chunk);
        if !text.is_empty() {
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(())
}

/// A simple session: a `> ` prompt, one turn per line, until EOF.
pub async fn interactive(interpreter: &Interpreter) -> anyhow::Result<()> {
    if !interpreter.settings().auto_run {
        println!("oi will require approval before running code. Use `oi -y` to bypass this.\n");
    }
    loop {
        print!("> ");
        std::io::stdout().flush()?;
        let mut line = String::new();
        let read = tokio::task::block_in_place(|| std::io::stdin().lock().read_line(&mut line))?;
        if read == 0 {
            println!();
            return Ok(());
        }
        let message = line.trim();
        if message.is_empty() {
            continue;
        }
        if let Err(error) = run_turn(interpreter.chat(message)).await {
            eprintln!("oi: error: {error:#}");
        }
        println!();
    }
}
