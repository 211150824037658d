//! `oi-server`: the Open Interpreter-compatible WebSocket/HTTP server.
//!
//! Host and port: `--host`/`--port` > `INTERPRETER_HOST`/`INTERPRETER_PORT` > 127.0.0.1:8000.
//! Model settings take the same flags as `oi`. SIGINT/SIGTERM shut it down cleanly.

use std::time::Duration;

use clap::Parser;
use oi_core::Settings;
use oi_server::{InterruptMode, ServerConfig};

/// Serve oi over WebSocket and HTTP (the Open Interpreter server protocol).
#[derive(Debug, Parser)]
#[command(name = "oi-server", version)]
struct Args {
    /// Address to bind (default `INTERPRETER_HOST` or 127.0.0.1).
    #[arg(long)]
    host: Option<String>,
    /// Port to bind (default `INTERPRETER_PORT` or 8000).
    #[arg(long)]
    port: Option<u16>,
    /// The model, e.g. `gpt-4o` or `openai/local`.
    #[arg(short = 'm', long = "model")]
    model: Option<String>,
    /// Base URL of the model's API.
    #[arg(long = "api_base")]
    api_base: Option<String>,
    /// The model provider's API key.
    #[arg(long = "api_key")]
    api_key: Option<String>,
    /// Sampling temperature.
    #[arg(short = 't', long = "temperature")]
    temperature: Option<f64>,
    /// Context window in tokens.
    #[arg(long = "context_window")]
    context_window: Option<u64>,
    /// Maximum tokens in a reply.
    #[arg(short = 'x', long = "max_tokens")]
    max_tokens: Option<u64>,
    /// The model takes the `execute` tool (function calling).
    #[arg(
        long = "llm_supports_functions",
        overrides_with = "no_llm_supports_functions"
    )]
    llm_supports_functions: bool,
    /// The model writes fenced code blocks instead of calling a tool.
    #[arg(long = "no-llm_supports_functions")]
    no_llm_supports_functions: bool,
    /// Run code without asking for approval.
    #[arg(short = 'y', long = "auto_run")]
    auto_run: bool,
    /// Appended to the system message.
    #[arg(long = "custom_instructions")]
    custom_instructions: Option<String>,
    /// Let network clients turn `auto_run` on (POST /settings, `{AUTO_RUN_ON}`).
    #[arg(long = "allow-network-auto-run")]
    allow_network_auto_run: bool,
    /// Let network clients change `llm.api_key` and `llm.api_base`.
    #[arg(long = "allow-network-credentials")]
    allow_network_credentials: bool,
    /// What code may write, for every session: off (default), workspace or readonly.
    #[arg(long = "sandbox", value_parser = ["off", "workspace", "readonly"])]
    sandbox: Option<String>,
    /// Deny code network access in every session.
    #[arg(long = "deny-network")]
    deny_network: bool,
    /// When the kernel cannot enforce the sandbox, run unsandboxed (saying so) instead of refusing.
    #[arg(long = "sandbox-fallback")]
    sandbox_fallback: bool,
    /// Let the code see this environment variable although oi withholds it (oi's own keys always, provider keys under a sandbox); repeatable.
    #[arg(long = "pass-env", value_name = "NAME")]
    pass_env: Vec<String>,
    /// Most processes a language session may have at once.
    #[arg(long = "max-processes")]
    max_processes: Option<u32>,
    /// Most memory (bytes) each process of a session may use.
    #[arg(long = "max-memory")]
    max_memory: Option<u64>,
    /// Most CPU seconds a session process may use.
    #[arg(long = "max-cpu-seconds")]
    max_cpu_seconds: Option<u64>,
    /// A new message waits for the running turn instead of interrupting it.
    #[arg(long = "queue")]
    queue: bool,
    /// The most sessions alive at once.
    #[arg(long = "max-sessions")]
    max_sessions: Option<usize>,
    /// Seconds after which an unconnected, idle session is reaped.
    #[arg(long = "session-idle-timeout")]
    session_idle_timeout: Option<u64>,
    /// Another name (NAME or NAME:PORT) clients may use in Host and Origin; repeatable
    /// (adds to INTERPRETER_ALLOWED_HOSTS).
    #[arg(long = "allowed-host", value_name = "NAME")]
    allowed_host: Vec<String>,
    /// Serve beyond loopback without INTERPRETER_API_KEY (anyone who can reach the port can
    /// run code).
    #[arg(long = "insecure-no-key")]
    insecure_no_key: bool,
    /// The most connections open at once; more get HTTP 503 (default 4096).
    #[arg(long = "max-connections")]
    max_connections: Option<usize>,
    /// Seconds a client has to send a request's headers (default 10).
    #[arg(long = "header-timeout")]
    header_timeout: Option<u64>,
    /// Largest WebSocket message, and largest user message, in bytes (default 16 MiB).
    #[arg(long = "max-message-bytes")]
    max_message_bytes: Option<usize>,
    /// Most bytes of a session's input waiting for its `end` (default 32 MiB).
    #[arg(long = "max-pending-bytes")]
    max_pending_bytes: Option<usize>,
}

impl Args {
    fn settings(&self) -> Settings {
        let mut settings = Settings {
            auto_run: self.auto_run,
            ..Settings::default()
        };
        if let Some(model) = &self.model {
            settings.llm.model.clone_from(model);
        }
        settings.llm.api_base.clone_from(&self.api_base);
        settings.llm.api_key.clone_from(&self.api_key);
        if let Some(t) = self.temperature {
            settings.llm.temperature = t;
        }
        settings.llm.context_window = self.context_window;
        settings.llm.max_tokens = self.max_tokens;
        if self.llm_supports_functions {
            settings.llm.supports_functions = Some(true);
        }
        if self.no_llm_supports_functions {
            settings.llm.supports_functions = Some(false);
        }
        if let Some(text) = &self.custom_instructions {
            settings.custom_instructions.clone_from(text);
        }
        settings
    }

    fn config(&self) -> anyhow::Result<ServerConfig> {
        let mut config = ServerConfig::from_env(|k| std::env::var(k).ok())?;
        if let Some(host) = &self.host {
            config.host.clone_from(host);
        }
        if let Some(port) = self.port {
            config.port = port;
        }
        config.allow_network_auto_run = self.allow_network_auto_run;
        config.allow_network_credentials = self.allow_network_credentials;
        if self.queue {
            config.interrupt_mode = InterruptMode::Queue;
        }
        if let Some(n) = self.max_sessions {
            config.max_sessions = n;
        }
        if let Some(mode) = &self.sandbox {
            config.sandbox.mode = mode.parse().unwrap_or(config.sandbox.mode);
        }
        if self.deny_network {
            config.sandbox.network = false;
        }
        config.sandbox.allow_unsandboxed_fallback |= self.sandbox_fallback;
        for name in &self.pass_env {
            config.sandbox = config.sandbox.with_pass_env(name.clone());
        }
        config.limits.max_processes = self.max_processes;
        config.limits.max_memory_bytes = self.max_memory;
        config.limits.max_cpu_seconds = self.max_cpu_seconds;
        if let Some(secs) = self.session_idle_timeout {
            config.session_idle_timeout = Duration::from_secs(secs);
        }
        config
            .allowed_hosts
            .extend(self.allowed_host.iter().cloned());
        config.insecure_no_key |= self.insecure_no_key;
        if let Some(n) = self.max_connections {
            config.max_connections = n;
        }
        if let Some(secs) = self.header_timeout {
            config.header_read_timeout = Duration::from_secs(secs);
        }
        if let Some(n) = self.max_message_bytes {
            config.max_frame_bytes = n;
        }
        if let Some(n) = self.max_pending_bytes {
            config.max_pending_bytes = n;
        }
        Ok(config)
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let config = args.config()?;
    // The error already says what went wrong and what to do (one line).
    oi_server::run(config, args.settings(), oi_server::shutdown_signal()).await?;
    Ok(())
}
