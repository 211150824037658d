//! The MCP server: [`OiMcp`] answers `tools/list` and `tools/call` for one connection (its own
//! named sessions); [`serve_stdio`] serves it on standard input and output (`oi --mcp`),
//! [`http_service`] over Streamable HTTP (oi-server's `/mcp`, one [`OiMcp`] per MCP session).

use std::sync::Arc;
use std::time::Duration;

use oi_config::ComputerParts;
use oi_core::Settings;
use oi_core::computer::Computer as _;
use oi_core::policy::Judge;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, ServiceExt as _};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::run::{Execute, Progress, execute, refusal};
use crate::sessions::{LiveSettings, Sessions};
use crate::slots::Slots;
use crate::tools;

/// What `oi --mcp` could not do.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The MCP handshake failed.
    #[error("MCP: the client's handshake failed: {0}")]
    Handshake(String),
    /// The connection ended abnormally.
    #[error("MCP: the connection failed: {0}")]
    Connection(String),
}

/// oi's tools for one MCP connection.
#[derive(Clone)]
pub struct OiMcp {
    sessions: Arc<Sessions>,
    judge: Arc<dyn Judge>,
    languages: Arc<Vec<String>>,
}

impl std::fmt::Debug for OiMcp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OiMcp")
            .field("sessions", &self.sessions)
            .finish_non_exhaustive()
    }
}

impl OiMcp {
    /// A connection's tools, with sessions built from `settings` and `parts` (oi-config's
    /// builder: the sandbox, limits and secrets of the settings).
    pub fn new(settings: Settings, parts: ComputerParts) -> OiMcp {
        OiMcp::live(crate::sessions::fixed(settings), parts, Slots::unlimited())
    }

    /// A connection's tools whose calls run under `settings` as they are at each call, their
    /// interpreters taking `slots`.
    pub fn live(settings: LiveSettings, parts: ComputerParts, slots: Slots) -> OiMcp {
        let languages = parts
            .computer(&settings())
            .languages()
            .into_iter()
            .map(|spec| spec.name.to_lowercase())
            .collect();
        OiMcp {
            sessions: Arc::new(Sessions::new(settings, parts, slots)),
            judge: oi_config::judge(),
            languages: Arc::new(languages),
        }
    }

    /// The same tools for another connection: no sessions yet.
    pub fn fresh(&self) -> OiMcp {
        OiMcp {
            sessions: Arc::new(self.sessions.empty_like()),
            judge: Arc::clone(&self.judge),
            languages: Arc::clone(&self.languages),
        }
    }

    /// The tools this server offers.
    pub fn tools(&self) -> Vec<Tool> {
        tools::all(&self.languages)
    }

    /// Answers one tool call; `cancel` fires when the caller cancels it.
    pub async fn call(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        cancel: CancellationToken,
        progress: Option<(rmcp::service::Peer<RoleServer>, rmcp::model::ProgressToken)>,
    ) -> CallToolResult {
        let text = |key: &str| arguments.get(key).and_then(Value::as_str);
        let session = text("session").unwrap_or(tools::DEFAULT_SESSION);
        match name {
            tools::EXECUTE => {
                let (Some(language), Some(code)) = (text("language"), text("code")) else {
                    return refusal("execute takes a `language` and `code` (strings).");
                };
                let call = Execute {
                    language,
                    code,
                    session,
                };
                let progress = progress.map(|(peer, token)| Progress { peer, token });
                execute(&self.sessions, &self.judge, call, cancel, progress).await
            }
            tools::STOP => match self.sessions.get(session) {
                Some(computer) => {
                    computer.stop();
                    ok(format!("Stopped what ran in session {session}."))
                }
                None => ok(format!("Session {session} is not open; nothing to stop.")),
            },
            tools::RESET => {
                if self.sessions.reset(session).await {
                    ok(format!(
                        "Session {session} ended; the next call starts afresh."
                    ))
                } else {
                    ok(format!("Session {session} was not open."))
                }
            }
            tools::LANGUAGES => {
                let listing = serde_json::json!({
                    "languages": *self.languages,
                    "sessions": self.sessions.names(),
                });
                CallToolResult::structured(listing)
            }
            tools::READ_FILE => {
                let Some(path) = text("path") else {
                    return refusal("read_file takes a `path`.");
                };
                read_file(&self.sessions.settings(), path).await
            }
            tools::WRITE_FILE => {
                let (Some(path), Some(content)) = (text("path"), text("content")) else {
                    return refusal("write_file takes a `path` and `content` (strings).");
                };
                write_file(&self.sessions.settings(), path, content).await
            }
            other => refusal(format!("oi has no tool {other:?}.")),
        }
    }
}

fn ok(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

async fn read_file(settings: &Settings, asked: &str) -> CallToolResult {
    let (settings, asked_owned) = (settings.clone(), asked.to_owned());
    match tokio::task::spawn_blocking(move || crate::files::read(&settings, &asked_owned)).await {
        Ok(Ok(text)) => ok(text),
        Ok(Err(problem)) => refusal(problem),
        Err(error) => refusal(format!("Cannot read {asked}: {error}.")),
    }
}

async fn write_file(settings: &Settings, asked: &str, content: &str) -> CallToolResult {
    let (settings, asked_owned, content_owned) =
        (settings.clone(), asked.to_owned(), content.to_owned());
    let written = tokio::task::spawn_blocking(move || {
        crate::files::write(&settings, &asked_owned, &content_owned)
    })
    .await;
    match written {
        Ok(Ok(())) => ok(format!("Wrote {} bytes to {asked}.", content.len())),
        Ok(Err(problem)) => refusal(problem),
        Err(error) => refusal(format!("Cannot write {asked}: {error}.")),
    }
}

impl ServerHandler for OiMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("oi", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "oi runs code on this machine in persistent sessions (execute), under oi's sandbox, limits and hard-deny list.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|tool| tool.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.clone().unwrap_or_default();
        let token = request
            .meta
            .as_ref()
            .and_then(|meta| meta.get_progress_token())
            .or_else(|| context.meta.get_progress_token());
        let progress = token.map(|token| (context.peer.clone(), token));
        let result = self
            .call(&request.name, &arguments, context.ct.clone(), progress)
            .await;
        Ok(result.into())
    }
}

/// Serves oi's tools on standard input and output until the client goes away, then ends
/// every session.
pub async fn serve_stdio(settings: Settings) -> Result<(), ServeError> {
    let parts = ComputerParts::new(&settings, None);
    let server = OiMcp::new(settings, parts);
    let sessions = Arc::clone(&server.sessions);
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|error| ServeError::Handshake(error.to_string()))?;
    let quit = running.waiting().await;
    for name in sessions.names() {
        sessions.reset(&name).await;
    }
    quit.map(|_| ())
        .map_err(|error| ServeError::Connection(error.to_string()))
}

/// The Streamable HTTP service [`McpHttp`] holds.
pub type HttpService = StreamableHttpService<OiMcp, LocalSessionManager>;

/// How many HTTP MCP sessions and interpreters a server holds, and how long an idle session
/// lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// The most MCP sessions open at once, and the most interpreters MCP calls have running
    /// at once (each language of each session counts; stateless calls too).
    pub max_sessions: usize,
    /// An MCP session with no request for this long is closed (and its sessions ended).
    pub idle: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_sessions: 32,
            idle: Duration::from_secs(5 * 60),
        }
    }
}

/// oi-server's `/mcp`: the Streamable HTTP service and what bounds its sessions.
pub struct McpHttp {
    service: HttpService,
    manager: Arc<LocalSessionManager>,
    limits: HttpLimits,
    slots: Slots,
}

impl std::fmt::Debug for McpHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttp")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl McpHttp {
    /// The service requests are handed to.
    pub fn service(&self) -> HttpService {
        self.service.clone()
    }

    /// The MCP sessions open now.
    pub async fn open_sessions(&self) -> usize {
        self.manager.sessions.read().await.len()
    }

    /// The interpreters MCP calls have running now.
    pub fn interpreters(&self) -> usize {
        self.slots.taken()
    }

    /// Whether there is room for one more (stateful) MCP session; the sentence to answer when
    /// the server is full. Nothing is held while the request is served: an idle MCP session
    /// costs little, and what costs — an interpreter — takes a slot of its own when it starts
    /// ([`Slots`]), whatever session header a request carries.
    pub async fn admit(&self) -> Result<(), String> {
        let open = self.open_sessions().await;
        if open >= self.limits.max_sessions {
            return Err(format!(
                "This server holds {open} MCP sessions, its limit: end one (DELETE /mcp with its Mcp-Session-Id) or wait until one has been idle for {} s.",
                self.limits.idle.as_secs()
            ));
        }
        Ok(())
    }
}

/// The Streamable HTTP service for oi-server's `/mcp`: one [`OiMcp`] (own sessions) per MCP
/// session, its sessions ended when the MCP session closes (a `DELETE`, or `limits.idle`
/// without a request), at most `limits.max_sessions` MCP sessions ([`McpHttp::admit`]) and
/// as many interpreters ([`Slots`]) at once. Calls run
/// under `settings` as they are at each call (the server's live settings). Host and Origin
/// are checked by oi-server's own door before a request gets here, so rmcp's loopback-only
/// Host check is off (it would refuse a server bound to another address that oi-server
/// allows).
pub fn http_service(
    settings: LiveSettings,
    parts: ComputerParts,
    shutdown: CancellationToken,
    limits: HttpLimits,
) -> McpHttp {
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_cancellation_token(shutdown);
    let slots = Slots::limited(limits.max_sessions);
    let template = OiMcp::live(settings, parts, slots.clone());
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(limits.idle);
    let manager = Arc::new(manager);
    let service =
        StreamableHttpService::new(move || Ok(template.fresh()), Arc::clone(&manager), config);
    McpHttp {
        service,
        manager,
        limits,
        slots,
    }
}
