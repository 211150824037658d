//! `oi`: Open Interpreter, rebuilt in Rust. A thin binary: parse flags, wire the core, run.

mod activity;
mod app;
mod approve;
mod args;
mod conversations;
mod cost;
mod display;
mod doc;
mod errors;
mod export_file;
mod first_contact;
mod highlight;
mod images;
mod input;
mod magic;
mod markdown;
mod md_table;
mod message_lines;
mod output_count;
mod output_panel;
mod output_tone;
mod picker;
mod remote_profile;
mod repl;
mod replay;
mod sanitize;
mod screen;
mod style;
mod term;
mod tty;
mod turn;
mod wrap;

use std::io::{IsTerminal, Read as _};
use std::process::ExitCode;

use input::LineSource;

fn main() -> ExitCode {
    let args = args::Args::from_env();
    if args.help {
        print!("{}", args::Args::help_text());
        return ExitCode::SUCCESS;
    }
    if args.version {
        println!("{}", app::version_line());
        return ExitCode::SUCCESS;
    }
    if args.os {
        eprintln!(
            "oi: --os is not supported: oi runs code in language sessions; it does not control the mouse, keyboard or screen."
        );
        return ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("oi: error: could not start: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("oi: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn line_source() -> Box<dyn LineSource> {
    if std::io::stdin().is_terminal() {
        let history = oi_core::settings::config_dir().map(|d| d.join("history"));
        if let Ok(editor) = input::Editor::new(history) {
            return Box::new(editor);
        }
    }
    Box::new(input::Stdin)
}

async fn run(args: args::Args) -> anyhow::Result<ExitCode> {
    use oi_config::profiles;
    if args.profiles {
        let dir = profiles::profiles_dir()
            .ok_or_else(|| anyhow::anyhow!("no config folder on this system"))?;
        if !dir.join("default.yaml").exists() {
            profiles::reset("default.yaml", &dir)?;
        }
        println!("{}", dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    if args.local_models {
        print!("{}", local_models_text(&oi_llm::Env::from_process()));
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(name) = &args.reset_profile {
        let dir = profiles::profiles_dir()
            .ok_or_else(|| anyhow::anyhow!("no config folder on this system"))?;
        let path = profiles::reset(name, &dir)?;
        println!("Profile reset: {}", path.display());
        return Ok(ExitCode::SUCCESS);
    }
    let fetched = match &args.settings.profile {
        Some(name) => remote_profile::fetch_and_confirm(name).await?,
        None => None,
    };
    let (mut settings, runtime) = app::settings_from(&args, fetched.as_ref())?;
    if let Some(problem) = settings
        .llm
        .api_base
        .as_deref()
        .and_then(errors::missing_scheme)
    {
        eprintln!("oi: {problem}");
        return Ok(ExitCode::from(2));
    }
    oi_config::logging::init(settings.verbose, settings.debug);
    if args.mcp && !args.server {
        // Standard output is the MCP channel from here: everything else goes to stderr.
        oi_mcp::serve_stdio(settings).await?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.server {
        let mut config = oi_server::ServerConfig::from_env(|key| std::env::var(key).ok())?;
        args.server_args.apply(&mut config);
        // `oi --server --mcp`: the server serves `/mcp` too.
        config.mcp |= args.mcp;
        let mcp_servers = app::mcp_servers(&args, fetched.as_ref());
        oi_server::run_with_mcp(config, settings, &mcp_servers, oi_server::shutdown_signal())
            .await?;
        return Ok(ExitCode::SUCCESS);
    }
    let env = oi_llm::Env::from_process();
    let session = !args.stdin && args.message().is_none() && !args.conversations;
    if session && first_contact::needs_openai_key(&settings, &env) {
        first_contact_with(&mut settings, &args)?;
    }
    if session && oi_llm::local_model::is_embedded(&settings.llm) && !cfg!(feature = "local") {
        // Said now, not after the first message: this build cannot answer with `--local`.
        let style = doc::Style::choose(settings.plain_text_display, &highlight::Grammars::new());
        let note = match oi_llm::local_model::not_built_error() {
            oi_core::ModelError::Config(text) => text,
            other => other.to_string(),
        };
        println!("{}", style.markdown(&sanitize::clean(&note)).trim_end());
        println!();
    }
    // An Ollama model that is not pulled yet is pulled once the user agrees (spec e.7).
    let ask = |question: &str| !args.stdin && ask_yes_no(question);
    let mut err = std::io::stderr();
    let pulled = oi_llm::pull::offer_ollama_pull(
        &settings.llm,
        &env,
        settings.auto_run,
        settings.offline,
        ask,
        &mut err,
    );
    if let Err(error) = pulled.await {
        eprintln!("oi: {error}");
        return Ok(ExitCode::FAILURE);
    }
    let mcp_servers = app::mcp_servers(&args, fetched.as_ref());
    let (interpreter, mcp) = app::interpreter(settings, &mcp_servers).await;
    *interpreter.runtime_mut() = runtime;
    let mut ui = repl::Ui::new(interpreter.settings().plain_text_display, mcp);
    let mut source = line_source();
    let result = if args.conversations {
        resume(&interpreter, source.as_mut(), &mut ui).await
    } else if args.stdin || args.message().is_some() {
        one_shot(&interpreter, &args, source.as_mut(), &mut ui).await
    } else {
        repl::run(&interpreter, source.as_mut(), &mut ui)
            .await
            .map(|()| ExitCode::SUCCESS)
    };
    interpreter.computer().terminate().await;
    result
}

/// What `--local_models` prints: where the embedded model's files are (the original opens
/// its models folder in a file manager; oi prints it) and how Ollama's models are listed.
fn local_models_text(env: &oi_llm::Env) -> String {
    let path = oi_llm::local_model::default_model_path(env);
    let folder = path
        .as_deref()
        .and_then(std::path::Path::parent)
        .map_or_else(
            || "(no data folder on this system)".to_owned(),
            |d| d.display().to_string(),
        );
    let file = path.as_deref().map_or_else(String::new, |p| {
        let state = if p.is_file() {
            "present"
        } else {
            "not fetched yet: cargo xtask fetch-model"
        };
        format!("\nThe default model (--local): {} ({state})", p.display())
    });
    format!(
        "{folder}{file}\nAnother GGUF chat model: --model local/PATH.gguf. Ollama's models: `ollama list` (use --model ollama/NAME).\n"
    )
}

/// Says how to go on without a key and, on a terminal, asks for one.
fn first_contact_with(settings: &mut oi_core::Settings, args: &args::Args) -> anyhow::Result<()> {
    let style = doc::Style::choose(settings.plain_text_display, &highlight::Grammars::new());
    print!(
        "{}",
        style.markdown(&first_contact::ways(&settings.llm.model))
    );
    println!();
    if !std::io::stdin().is_terminal() {
        return Ok(());
    }
    let profile = (args.settings.profile_name() == "default.yaml")
        .then(oi_config::profiles::profiles_dir)
        .flatten()
        .map(|dir| dir.join("default.yaml"));
    let said = first_contact::ask_for_key(settings, profile.as_deref())?;
    println!("{}\n", style.markdown(&said).trim_end());
    Ok(())
}

/// Asks `question` on stderr and reads a line from stdin: whether the answer is yes.
fn ask_yes_no(question: &str) -> bool {
    eprint!("{question}");
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).is_ok()
        && matches!(answer.trim().to_lowercase().as_str(), "y" | "yes")
}

async fn one_shot(
    interpreter: &oi_core::Interpreter,
    args: &args::Args,
    source: &mut dyn LineSource,
    ui: &mut repl::Ui,
) -> anyhow::Result<ExitCode> {
    let message = if args.stdin {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        text.trim().to_owned()
    } else {
        args.message().unwrap_or_default()
    };
    if ui.style.colour() {
        // Colours are drawn: load the grammars in the background (not in plain mode).
        ui.grammars.warm();
    }
    let settings = interpreter.settings();
    let mut renderer = turn::Renderer::choose(
        settings.plain_text_display,
        settings.highlight_active_line,
        &ui.grammars,
    );
    let mut interrupts = turn::Interrupts::install()?;
    let context = turn::TurnContext {
        source,
        safe_mode: settings.safe_mode,
        interrupts: &mut interrupts,
        model: activity::ModelLabel::of(&settings.llm),
        model_loaded: &mut ui.model_loaded,
        open_code: crate::display::may_open_code(&settings),
    };
    let ended = turn::run(interpreter.chat(message), &mut renderer, context).await;
    if let Some(line) = cost::after_turn(interpreter) {
        eprintln!("{line}");
    }
    Ok(match ended? {
        turn::Ended::Done => ExitCode::SUCCESS,
        turn::Ended::Stopped => ExitCode::from(130),
    })
}

async fn resume(
    interpreter: &oi_core::Interpreter,
    source: &mut dyn LineSource,
    ui: &mut repl::Ui,
) -> anyhow::Result<ExitCode> {
    let dir = interpreter
        .settings()
        .conversations_dir()
        .ok_or_else(|| anyhow::anyhow!("no config folder on this system"))?;
    let mut out = std::io::stdout();
    let Some((path, messages)) = conversations::pick(&dir, source, &mut out)? else {
        return Ok(ExitCode::SUCCESS);
    };
    let settings = interpreter.settings();
    if ui.style.colour() {
        ui.grammars.warm();
        let mut renderer = turn::Renderer::for_replay(settings.highlight_active_line, &ui.grammars);
        print!("{}", replay::show(&messages, &mut renderer));
    } else {
        println!("\n{}", sanitize::clean(&magic::to_markdown(&messages)));
    }
    interpreter.set_messages(messages);
    interpreter.runtime_mut().conversation_filename =
        path.file_name().and_then(|n| n.to_str()).map(str::to_owned);
    repl::run(interpreter, source, ui).await?;
    Ok(ExitCode::SUCCESS)
}
