//! Wiring: settings from every layer (`oi_config`), the interpreter built from them.

use std::collections::BTreeMap;
use std::sync::Arc;

use oi_config::{Assembly, Layers, ProfileError};
use oi_core::{Interpreter, RuntimeState, Settings};
use oi_mcp::client::{McpClients, ServerSpec};

use crate::args::Args;

/// The version line.
pub fn version_line() -> String {
    format!(
        "oi {} (Open Interpreter 0.4.3 compatible)",
        env!("CARGO_PKG_VERSION")
    )
}

/// Settings: Open Interpreter's defaults, then the profile, then the environment, then flags
/// (flags win), and the runtime state they start with (a conversation file a profile names).
/// What the profile skipped is printed on standard error. `fetched` is the profile from
/// `--profile URL` once the user accepted it.
pub fn settings_from(
    args: &Args,
    fetched: Option<&oi_config::Profile>,
) -> Result<(Settings, RuntimeState), ProfileError> {
    let layers = layers(args, fetched)?;
    for note in layers.notes() {
        eprintln!("{}", crate::sanitize::clean(&note));
    }
    let mut settings = layers.settings();
    settings.plain_text_display |= args.plain || args.stdin;
    settings.disable_telemetry = true;
    Ok((settings, layers.runtime()))
}

/// The layers of `args`, with the fetched profile when there is one (fetched once: both
/// [`settings_from`] and [`mcp_servers`] get it).
fn layers(args: &Args, fetched: Option<&oi_config::Profile>) -> Result<Layers, ProfileError> {
    Layers::from_args_with(&args.settings, fetched.cloned())
}

/// The profile's `mcp_servers:` map, if any (the profile is read again; its notes were said
/// by [`settings_from`]). A map oi cannot read is one line on stderr and no servers.
pub fn mcp_servers(
    args: &Args,
    fetched: Option<&oi_config::Profile>,
) -> BTreeMap<String, ServerSpec> {
    let Ok(layers) = layers(args, fetched) else {
        return BTreeMap::new();
    };
    let Some(value) = layers.mcp_servers() else {
        return BTreeMap::new();
    };
    oi_mcp::client::servers_from(Some(value)).unwrap_or_else(|problem| {
        eprintln!("oi: {problem}");
        BTreeMap::new()
    })
}

/// Builds the interpreter from settings, saying once what the sandbox enforces. The provider
/// follows the model name; settings that cannot work (an unknown provider, a missing local
/// model file, a build without the `local` feature) give a model whose first request reports
/// why, in one sentence, before anything is sent. The MCP servers of `mcp_servers` are
/// started first: their tools are offered to the model beside `execute` (oi_mcp::offer); a server
/// that fails is one line on stderr. The connected servers come back beside the
/// interpreter, for `%mcp`.
pub async fn interpreter(
    settings: Settings,
    mcp_servers: &BTreeMap<String, ServerSpec>,
) -> (Interpreter, Arc<McpClients>) {
    let assembly = Assembly::new(&settings, None);
    for note in assembly.notes(&settings) {
        eprintln!("{note}");
    }
    if mcp_servers.is_empty() {
        return (
            assembly.interpreter(settings),
            Arc::new(McpClients::default()),
        );
    }
    let clients = Arc::new(McpClients::connect(mcp_servers).await);
    for failure in clients.failures() {
        eprintln!("oi: {failure}");
    }
    let offered = Arc::clone(&clients);
    let assembly = assembly.with_offer(Arc::new(move |computer| {
        oi_mcp::offer::offer(computer, &offered)
    }));
    (assembly.interpreter(settings), clients)
}
