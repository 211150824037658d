//! `oi-server`: the Open Interpreter-compatible WebSocket/HTTP server.
//!
//! Settings come from the same layers as `oi`'s (defaults ← profile ← environment ← flags;
//! `--profile` and every settings flag work here too); the server's own flags override the
//! `INTERPRETER_*` variables. Host and port: `--host`/`--port` > `INTERPRETER_HOST`/
//! `INTERPRETER_PORT` > 127.0.0.1:8000. SIGINT/SIGTERM shut it down cleanly.

use clap::Parser;
use oi_config::{Layers, SettingsArgs};
use oi_server::{ServerArgs, ServerConfig};

/// Serve oi over WebSocket and HTTP (the Open Interpreter server protocol).
#[derive(Debug, Parser)]
#[command(
    name = "oi-server",
    version,
    after_help = "Underscore and kebab-case spellings both work (--max_sessions, --max-sessions)."
)]
struct Args {
    #[command(flatten)]
    settings: SettingsArgs,
    #[command(flatten)]
    server: ServerArgs,
    /// Serve oi's tools over MCP at `/mcp` (off by default: it runs code with no model and no
    /// approval of the server's in between; `INTERPRETER_MCP=true` too).
    #[arg(long = "mcp")]
    mcp: bool,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse_from(oi_config::normalize(std::env::args()));
    let layers = Layers::from_args(&args.settings)?;
    for note in layers.notes() {
        eprintln!("{note}");
    }
    let settings = layers.settings();
    let mcp_servers =
        oi_mcp::client::servers_from(layers.mcp_servers()).unwrap_or_else(|problem| {
            eprintln!("oi-server: {problem}");
            Default::default()
        });
    oi_config::logging::init(settings.verbose, settings.debug);
    let mut config = ServerConfig::from_env(|k| std::env::var(k).ok())?;
    args.server.apply(&mut config);
    config.mcp |= args.mcp;
    // The error already says what went wrong and what to do (one line).
    oi_server::run_with_mcp(config, settings, &mcp_servers, oi_server::shutdown_signal()).await?;
    Ok(())
}
