//! oi as an MCP client: the servers a profile's `mcp_servers:` names (the shape other agents
//! use: a name to `{command, args, env}` or `{url, headers}`), connected at start, their tools
//! offered under `SERVER__TOOL` names, and calls made on them. A server that does not start is
//! one line in [`McpClients::failures`]; the others go on.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{ConfigureCommandExt as _, StreamableHttpClientTransport, TokioChildProcess};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::io::AsyncReadExt as _;

use crate::http_client::OiHttp;

/// How long a server may take to start and answer the handshake and `tools/list`.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The variables of oi's environment a server gets (then its own `env`): what a program needs
/// to run, never oi's provider keys or the server's key (as the Python MCP SDK does).
const PASSED_ENV: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR",
];

/// What joins a server's name and its tool's name in the name offered to the model.
pub const SEPARATOR: &str = "__";

/// One server of `mcp_servers:`. Its `Debug` form leaves out `env` and `headers` values,
/// which often hold keys.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ServerSpec {
    /// A program oi starts and speaks to on its standard input and output.
    Command {
        /// The program.
        command: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Variables added to its environment.
        #[serde(default)]
        env: BTreeMap<String, String>,
    },
    /// A server reached over Streamable HTTP.
    Url {
        /// Its URL.
        url: String,
        /// Headers sent with every request (e.g. a key).
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
}

impl std::fmt::Debug for ServerSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerSpec::Command { command, args, env } => f
                .debug_struct("Command")
                .field("command", command)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>())
                .finish(),
            ServerSpec::Url { url, headers } => f
                .debug_struct("Url")
                .field("url", &shown_url(url))
                .field("headers", &headers.keys().collect::<Vec<_>>())
                .finish(),
        }
    }
}

/// The servers of a profile's `mcp_servers:` value (`None`: none); an error sentence when
/// the value does not have the shape.
pub fn servers_from(value: Option<&Value>) -> Result<BTreeMap<String, ServerSpec>, String> {
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    serde_json::from_value(value.clone()).map_err(|error| {
        format!(
            "mcp_servers: {error} (each is {{command, args, env}} or {{url, headers}}); no MCP servers used."
        )
    })
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedTool {
    /// `SERVER__TOOL`.
    pub name: String,
    /// The server's description of it.
    pub description: String,
    /// Its input schema.
    pub input_schema: Value,
}

/// What a call gave back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallOutcome {
    /// Its text content, joined (other content is named in brackets).
    pub text: String,
    /// Whether the server said the call failed.
    pub is_error: bool,
}

struct Connected {
    name: String,
    service: RunningService<RoleClient, ()>,
    tools: Vec<rmcp::model::Tool>,
}

/// The connected servers.
#[derive(Default)]
pub struct McpClients {
    servers: Vec<Connected>,
    failures: Vec<String>,
}

impl std::fmt::Debug for McpClients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClients")
            .field(
                "servers",
                &self.servers.iter().map(|s| &s.name).collect::<Vec<_>>(),
            )
            .field("failures", &self.failures)
            .finish()
    }
}

impl McpClients {
    /// Starts and connects every server of `specs`, one after another.
    pub async fn connect(specs: &BTreeMap<String, ServerSpec>) -> McpClients {
        let mut clients = McpClients::default();
        for (name, spec) in specs {
            match connect_one(name, spec).await {
                Ok(connected) => clients.servers.push(connected),
                Err(problem) => clients.failures.push(printable(&format!(
                    "MCP server {name}: {problem}; its tools are not offered."
                ))),
            }
        }
        clients
    }

    /// One line per server that could not be used.
    pub fn failures(&self) -> &[String] {
        &self.failures
    }

    /// Every tool of every connected server, under `SERVER__TOOL` names.
    pub fn tools(&self) -> Vec<OfferedTool> {
        self.servers
            .iter()
            .flat_map(|server| {
                server.tools.iter().map(|tool| OfferedTool {
                    name: format!("{}{SEPARATOR}{}", server.name, tool.name),
                    description: tool.description.as_deref().unwrap_or("").to_owned(),
                    input_schema: Value::Object((*tool.input_schema).clone()),
                })
            })
            .collect()
    }

    /// The servers and their tools, for `%mcp`.
    pub fn listing(&self) -> String {
        let mut out = String::new();
        if self.servers.is_empty() && self.failures.is_empty() {
            out.push_str("No MCP servers (a profile's `mcp_servers:` names them).\n");
        }
        for server in &self.servers {
            out.push_str(&format!("{} ({} tools)\n", server.name, server.tools.len()));
            for tool in &server.tools {
                let about = tool.description.as_deref().unwrap_or("");
                out.push_str(&format!(
                    "  {}{SEPARATOR}{}  {about}\n",
                    server.name, tool.name
                ));
            }
        }
        for failure in &self.failures {
            out.push_str(failure);
            out.push('\n');
        }
        out
    }

    /// Calls the tool offered as `offered` (`SERVER__TOOL`) with `arguments`.
    pub async fn call(
        &self,
        offered: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallOutcome, String> {
        let (server, tool) = self
            .servers
            .iter()
            .find_map(|server| {
                let rest = offered
                    .strip_prefix(&server.name)?
                    .strip_prefix(SEPARATOR)?;
                server
                    .tools
                    .iter()
                    .any(|tool| tool.name == rest)
                    .then(|| (server, rest.to_owned()))
            })
            .ok_or_else(|| format!("No MCP tool {offered:?}."))?;
        let params = CallToolRequestParams::new(tool).with_arguments(arguments);
        let result = server
            .service
            .call_tool(params)
            .await
            .map_err(|error| format!("MCP server {}: {error}", server.name))?;
        let mut text = String::new();
        for block in &result.content {
            match block {
                ContentBlock::Text(t) => text.push_str(&t.text),
                ContentBlock::Image(image) => {
                    text.push_str(&format!("[image {}]", image.mime_type));
                }
                _ => text.push_str("[non-text content]"),
            }
        }
        if text.is_empty()
            && let Some(structured) = &result.structured_content
        {
            text = structured.to_string();
        }
        Ok(CallOutcome {
            text,
            is_error: result.is_error.unwrap_or(false),
        })
    }

    /// Ends every server.
    pub async fn close(self) {
        for server in self.servers {
            let _ = server.service.cancel().await;
        }
    }
}

async fn connect_one(name: &str, spec: &ServerSpec) -> Result<Connected, String> {
    let valid = !name.is_empty()
        && !name.contains(SEPARATOR)
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        return Err("a server's name is letters, digits, '-' and single '_'".to_owned());
    }
    let (command, args, env) = match spec {
        ServerSpec::Command { command, args, env } => (command, args, env),
        ServerSpec::Url { url, headers } => {
            let (service, tools) = connect_http(url, headers).await?;
            return Ok(Connected {
                name: name.to_owned(),
                service,
                tools,
            });
        }
    };
    let command_line = tokio::process::Command::new(command).configure(|cmd| {
        cmd.args(args).env_clear();
        for name in PASSED_ENV {
            if let Some(value) = std::env::var_os(name) {
                cmd.env(name, value);
            }
        }
        cmd.envs(env);
    });
    let (transport, stderr) = TokioChildProcess::builder(command_line)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot start {command}: {error}"))?;
    match handshake(transport).await {
        Ok((service, tools)) => Ok(Connected {
            name: name.to_owned(),
            service,
            tools,
        }),
        Err(Some(problem)) => Err(with_stderr(problem, stderr).await),
        Err(None) => Err(format!(
            "{command} did not answer within {}s",
            START_TIMEOUT.as_secs()
        )),
    }
}

/// The handshake and `tools/list` on `transport`, within [`START_TIMEOUT`]; `Err(None)` when
/// it took longer.
async fn handshake<T, E, A>(
    transport: T,
) -> Result<(RunningService<RoleClient, ()>, Vec<rmcp::model::Tool>), Option<String>>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let started = tokio::time::timeout(START_TIMEOUT, async {
        let service = ().serve(transport).await.map_err(|e| e.to_string())?;
        let tools = service.list_all_tools().await.map_err(|e| e.to_string())?;
        Ok::<_, String>((service, tools))
    })
    .await;
    match started {
        Ok(Ok(done)) => Ok(done),
        Ok(Err(problem)) => Err(Some(problem)),
        Err(_) => Err(None),
    }
}

/// Connects to a Streamable HTTP server at `url`, sending `headers` with every request (their
/// values are never shown: they often hold a key).
async fn connect_http(
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<(RunningService<RoleClient, ()>, Vec<rmcp::model::Tool>), String> {
    let shown = shown_url(url);
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!(
            "{shown}: an MCP server's url is http:// or https://"
        ));
    }
    let mut custom = std::collections::HashMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("{shown}: {name:?} is not a header name"))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| format!("{shown}: the value of header {name} is not a header value"))?;
        value.set_sensitive(true);
        custom.insert(header, value);
    }
    let client = OiHttp::new().map_err(|e| format!("{shown}: {e}"))?;
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    let transport = StreamableHttpClientTransport::with_client(client, config);
    match handshake(transport).await {
        Ok(done) => Ok(done),
        Err(Some(problem)) => Err(format!("{shown}: {}", without_transport_name(&problem))),
        Err(None) => Err(format!(
            "{shown} did not answer within {}s",
            START_TIMEOUT.as_secs()
        )),
    }
}

/// rmcp's error text without the transport's type name it starts with.
fn without_transport_name(problem: &str) -> &str {
    problem
        .rsplit_once("] error: ")
        .map_or(problem, |(_, rest)| rest)
}

/// `url` without a user name, password or query (which may hold a key), for messages.
fn shown_url(url: &str) -> String {
    let without_query = url.split(['?', '#']).next().unwrap_or("");
    match without_query.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority.rsplit('@').next().unwrap_or(authority);
            format!("{scheme}://{host}{path}")
        }
        None => without_query.to_owned(),
    }
}

/// `line` safe to print on a terminal: control characters (escape sequences, carriage
/// returns, C1 controls) and the invisible ones that reorder or hide text (bidi overrides and
/// isolates, zero-width characters: stop-32 review) become `�`, and it is cut at 500
/// characters — a failing server's stderr is the server's to write, not the terminal's to obey.
fn printable(line: &str) -> String {
    let hidden = |c: char| {
        c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
    };
    let mut out: String = line
        .chars()
        .take(500)
        .map(|c| if hidden(c) { '\u{fffd}' } else { c })
        .collect();
    if line.chars().nth(500).is_some() {
        out.push('…');
    }
    out
}

/// `problem`, with the last line the server wrote on stderr.
async fn with_stderr(problem: String, stderr: Option<tokio::process::ChildStderr>) -> String {
    let Some(mut stderr) = stderr else {
        return problem;
    };
    let mut bytes = Vec::new();
    let _ = tokio::time::timeout(
        Duration::from_secs(2),
        (&mut stderr).take(64 * 1024).read_to_end(&mut bytes),
    )
    .await;
    let text = String::from_utf8_lossy(&bytes);
    match text.lines().rev().find(|line| !line.trim().is_empty()) {
        Some(last) => format!("{problem} ({})", last.trim()),
        None => problem,
    }
}

#[cfg(test)]
mod tests {
    use super::{ServerSpec, printable, shown_url};

    #[test]
    fn a_servers_debug_form_holds_no_header_or_env_value() {
        let spec = ServerSpec::Url {
            url: "https://k:secret-1@example.com/mcp?key=secret-2".into(),
            headers: [("Authorization".into(), "Bearer secret-3".into())].into(),
        };
        let shown = format!("{spec:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("Authorization"), "{shown}");
        let spec = ServerSpec::Command {
            command: "srv".into(),
            args: vec![],
            env: [("TOKEN".into(), "secret-4".into())].into(),
        };
        assert!(!format!("{spec:?}").contains("secret"));
    }

    #[test]
    fn a_url_is_shown_without_its_credentials() {
        assert_eq!(
            shown_url("https://user:pw@example.com:8443/mcp?key=sk-1#x"),
            "https://example.com:8443/mcp"
        );
        assert_eq!(
            shown_url("http://127.0.0.1:9/mcp"),
            "http://127.0.0.1:9/mcp"
        );
    }

    /// The second review made a failing server's last stderr line retitle the window, clear
    /// the screen and draw a fake approval prompt.
    #[test]
    fn a_failing_servers_words_reach_the_terminal_without_their_controls() {
        let hostile = "boom \u{1b}]0;owned\u{7}\u{1b}[2J\rrun? (y/n) \u{9b}31m \u{202e}gnp.exe\u{202c}\u{200b}";
        let shown = printable(hostile);
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        assert!(
            !shown.contains(['\u{202e}', '\u{202c}', '\u{200b}']),
            "{shown:?}"
        );
        assert!(
            shown.contains("boom") && shown.contains("run? (y/n)"),
            "{shown:?}"
        );
        assert_eq!(printable(&"x".repeat(600)).chars().count(), 501);
    }
}
