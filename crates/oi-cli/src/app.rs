//! Wiring: settings from every layer (`oi_config`), the interpreter built from them.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

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
/// What the profile skipped is printed on standard error.
pub fn settings_from(args: &Args) -> Result<(Settings, RuntimeState), ProfileError> {
    let layers = layers(args)?;
    for note in layers.notes() {
        eprintln!("{}", crate::sanitize::clean(&note));
    }
    let mut settings = layers.settings();
    settings.plain_text_display |= args.plain || args.stdin;
    settings.disable_telemetry = true;
    Ok((settings, layers.runtime()))
}

/// A profile from a URL, once fetched and accepted (read once: both [`settings_from`] and
/// [`mcp_servers`] use it).
static FETCHED: OnceLock<oi_config::Profile> = OnceLock::new();

/// Keeps the profile fetched from `--profile URL` and accepted by the user.
pub fn use_fetched(profile: oi_config::Profile) {
    let _ = FETCHED.set(profile);
}

/// The layers of `args`, with the fetched profile when there is one.
fn layers(args: &Args) -> Result<Layers, ProfileError> {
    Layers::from_args_with(&args.settings, FETCHED.get().cloned())
}

/// The MCP servers this session connected to (for `%mcp`), once connected.
static MCP: OnceLock<Arc<McpClients>> = OnceLock::new();

/// The profile's `mcp_servers:` map, if any (the profile is read again; its notes were said
/// by [`settings_from`]). A map oi cannot read is one line on stderr and no servers.
pub fn mcp_servers(args: &Args) -> BTreeMap<String, ServerSpec> {
    let Ok(layers) = layers(args) else {
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

/// The servers and tools `%mcp` lists.
pub fn mcp_listing() -> String {
    match MCP.get() {
        Some(clients) => clients.listing(),
        None => McpClients::default().listing(),
    }
}

/// Builds the interpreter from settings, saying once what the sandbox enforces. The provider
/// follows the model name; settings that cannot work (an unknown provider, a missing local
/// model file, a build without the `local` feature) give a model whose first request reports
/// why, in one sentence, before anything is sent. The MCP servers of `mcp_servers` are
/// started first: their tools are offered to the model beside `execute` (oi_mcp::offer); a server
/// that fails is one line on stderr.
pub async fn interpreter(
    settings: Settings,
    mcp_servers: &BTreeMap<String, ServerSpec>,
) -> Interpreter {
    let assembly = Assembly::new(&settings, None);
    for note in assembly.notes(&settings) {
        eprintln!("{note}");
    }
    if mcp_servers.is_empty() {
        return assembly.interpreter(settings);
    }
    let clients = Arc::new(McpClients::connect(mcp_servers).await);
    for failure in clients.failures() {
        eprintln!("oi: {failure}");
    }
    let _ = MCP.set(Arc::clone(&clients));
    let link = oi_core::computer_api::ApiLink::new();
    let computer = Arc::new(assembly.computer(&settings, &link));
    let computer = oi_mcp::offer::offer(computer, &clients);
    assembly.interpreter_on(settings, computer, &link)
}
