//! `oi`: Open Interpreter, rebuilt in Rust. A thin binary: parse flags, wire the core, run.

mod app;
mod args;
mod render;

use std::io::Read;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = args::Args::from_env();
    if args.version {
        println!("{}", app::version_line());
        return ExitCode::SUCCESS;
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
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("oi: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: args::Args) -> anyhow::Result<()> {
    let settings = app::settings_from(&args);
    let interpreter = app::interpreter(settings);
    let message = if args.stdin {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        Some(text.trim().to_owned())
    } else {
        args.message()
    };
    let result = match message {
        Some(message) => app::run_turn(interpreter.chat(message)).await,
        None => app::interactive(&interpreter).await,
    };
    interpreter.computer().terminate().await;
    result
}
