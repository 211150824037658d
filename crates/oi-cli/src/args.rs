//! Command-line flags, spelled as Open Interpreter spells them (spec e.2). Underscore and
//! kebab-case spellings both work, and so do the original's multi-letter short flags (`-ab`).

use clap::Parser;

/// The original's short flags that are longer than one letter, and the long flag each means.
const MULTI_LETTER_SHORTS: &[(&str, &str)] = &[
    ("-ab", "--api_base"),
    ("-ak", "--api_key"),
    ("-av", "--api_version"),
    ("-ci", "--custom_instructions"),
    ("-sm", "--system_message"),
    ("-cw", "--context_window"),
    ("-xo", "--max_output"),
    ("-lsf", "--llm_supports_functions"),
    ("-lsv", "--llm_supports_vision"),
    ("-nhl", "--no_highlight_active_line"),
    ("-dt", "--disable_telemetry"),
    ("-pl", "--plain"),
    ("-vi", "--vision"),
    ("-ml", "--multi_line"),
    ("-sp", "--speak_messages"),
    ("-safe", "--safe_mode"),
    ("-debug", "--debug"),
    ("-os", "--os"),
];

/// Rewrites argv so clap sees one spelling: `-ab` → `--api_base`, `--api-base` → `--api_base`,
/// `--no-llm-supports-functions` → `--no-llm_supports_functions`. Stops at a bare `--`.
pub fn normalize(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest_is_positional = false;
    for arg in args {
        if rest_is_positional || !arg.starts_with('-') || arg == "-" {
            out.push(arg);
            continue;
        }
        if arg == "--" {
            rest_is_positional = true;
            out.push(arg);
            continue;
        }
        if let Some((_, long)) = MULTI_LETTER_SHORTS.iter().find(|(short, _)| *short == arg) {
            out.push((*long).to_owned());
            continue;
        }
        let Some(body) = arg.strip_prefix("--") else {
            out.push(arg);
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (body, None),
        };
        let name = match name
            .strip_prefix("no-")
            .or_else(|| name.strip_prefix("no_"))
        {
            Some(positive) if positive.starts_with("llm") => {
                format!("no-{}", positive.replace('-', "_"))
            }
            _ => name.replace('-', "_"),
        };
        out.push(match value {
            Some(value) => format!("--{name}={value}"),
            None => format!("--{name}"),
        });
    }
    out
}

/// `oi`: Open Interpreter, rebuilt in Rust.
#[derive(Debug, Parser)]
#[command(
    name = "oi",
    about = "Open Interpreter, rebuilt in Rust: a language model writes code and runs it on your machine.",
    after_help = "Underscore and kebab-case spellings both work (--api_base, --api-base).\nUse \"\"\" to write multi-line messages.",
    disable_version_flag = true
)]
pub struct Args {
    /// Run this message as one turn and exit (no message: interactive session).
    pub message: Vec<String>,

    /// Model to use, e.g. gpt-4o, openai/local, ollama/llama3.
    #[arg(short = 'm', long = "model")]
    pub model: Option<String>,
    /// Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8080/v1.
    #[arg(long = "api_base")]
    pub api_base: Option<String>,
    /// API key (default: the provider's env var, e.g. OPENAI_API_KEY).
    #[arg(long = "api_key")]
    pub api_key: Option<String>,
    /// Azure-style API version.
    #[arg(long = "api_version")]
    pub api_version: Option<String>,
    /// Sampling temperature.
    #[arg(short = 't', long = "temperature")]
    pub temperature: Option<f64>,
    /// Context window of the model, in tokens.
    #[arg(long = "context_window")]
    pub context_window: Option<u64>,
    /// Maximum tokens in a reply.
    #[arg(short = 'x', long = "max_tokens")]
    pub max_tokens: Option<u64>,
    /// The model takes the `execute` tool (function calling).
    #[arg(
        long = "llm_supports_functions",
        overrides_with = "no_llm_supports_functions"
    )]
    pub llm_supports_functions: bool,
    /// The model writes fenced code blocks instead of calling a tool.
    #[arg(long = "no-llm_supports_functions")]
    pub no_llm_supports_functions: bool,
    /// The model takes images.
    #[arg(
        long = "llm_supports_vision",
        overrides_with = "no_llm_supports_vision"
    )]
    pub llm_supports_vision: bool,
    /// The model does not take images.
    #[arg(long = "no-llm_supports_vision")]
    pub no_llm_supports_vision: bool,

    /// Run code without asking for approval.
    #[arg(short = 'y', long = "auto_run")]
    pub auto_run: bool,
    /// Characters of code output kept for the model (default 2800).
    #[arg(long = "max_output")]
    pub max_output: Option<usize>,
    /// Keep working until the model says the task is done.
    #[arg(long = "loop")]
    pub loop_mode: bool,
    /// Replace the system message.
    #[arg(long = "system_message")]
    pub system_message: Option<String>,
    /// Add to the system message.
    #[arg(long = "custom_instructions")]
    pub custom_instructions: Option<String>,
    /// Spending cap in USD (accepted; oi reports it in %info).
    #[arg(short = 'b', long = "max_budget")]
    pub max_budget: Option<f64>,
    /// No network but the model provider (oi never sends telemetry anyway).
    #[arg(short = 'o', long = "offline")]
    pub offline: bool,
    /// Print internals.
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    /// Print even more internals.
    #[arg(long = "debug")]
    pub debug: bool,
    /// Scan code with semgrep before approval: off, ask or auto.
    #[arg(long = "safe_mode", value_parser = ["off", "ask", "auto"])]
    pub safe_mode: Option<String>,
    /// How code is approved: always-ask (default), auto (= -y) or never-run. Whatever the policy, the hard-deny list and --deny rules are checked first; --allow rules skip the question.
    #[arg(long = "approval_policy", value_parser = ["always-ask", "auto", "never-run"])]
    pub approval_policy: Option<String>,
    /// Run a shell block without asking when it is one command (or a pipe of commands, none of them a shell) whose words start with COMMAND's words, e.g. "git status"; anything with ;, &&, $(…), $VAR or a redirection to a file still asks (repeatable). A convenience, not a safety boundary: the sandbox (--sandbox) is the wall.
    #[arg(long = "allow", value_name = "COMMAND")]
    pub allow: Vec<String>,
    /// Never run code that contains TEXT, in the raw code or in a shell command's words after quotes and expansions are resolved (so c''url matches curl) (repeatable; deny wins over allow).
    #[arg(long = "deny", value_name = "TEXT")]
    pub deny: Vec<String>,
    /// Turn off the hard-deny list: a seat belt that blocks, even with -y and when disguised, recursive deletes of /, system or home directories or the working directory and its parents, formatting or overwriting a disk, fork bombs and decoded payloads run by a shell. It is not a wall: the sandbox (--sandbox) is.
    #[arg(long = "no_hard_deny")]
    pub no_hard_deny: bool,
    /// What code may write: off (default), workspace (the working directory and the temp dir) or readonly.
    #[arg(long = "sandbox", value_parser = ["off", "workspace", "readonly"])]
    pub sandbox: Option<String>,
    /// Deny code network access (TCP/UDP sockets), with or without --sandbox.
    #[arg(long = "deny_network")]
    pub deny_network: bool,
    /// When the kernel cannot enforce the sandbox, run unsandboxed (saying so) instead of refusing.
    #[arg(long = "sandbox_fallback")]
    pub sandbox_fallback: bool,
    /// Let the code see this environment variable although oi withholds it (oi's own keys always, provider keys under a sandbox); repeatable.
    #[arg(long = "pass_env", value_name = "NAME")]
    pub pass_env: Vec<String>,
    /// Most processes a language session may have at once.
    #[arg(long = "max_processes")]
    pub max_processes: Option<u32>,
    /// Most memory (bytes) each process of a session may use.
    #[arg(long = "max_memory")]
    pub max_memory: Option<u64>,
    /// Most CPU seconds a session process may use.
    #[arg(long = "max_cpu_seconds")]
    pub max_cpu_seconds: Option<u64>,
    /// Print plain text: no colours, fenced code blocks.
    #[arg(long = "plain")]
    pub plain: bool,
    /// Read the message from standard input (implies --plain).
    #[arg(short = 's', long = "stdin")]
    pub stdin: bool,
    /// Do not highlight the running line.
    #[arg(long = "no_highlight_active_line")]
    pub no_highlight_active_line: bool,
    /// Accepted for compatibility: `"""` multi-line input is always on.
    #[arg(long = "multi_line")]
    pub multi_line: bool,
    /// Accepted for compatibility: oi never sends telemetry.
    #[arg(long = "disable_telemetry")]
    pub disable_telemetry: bool,

    /// Profile to load (a file, a name in the profiles folder, or a packaged one).
    #[arg(short = 'p', long = "profile")]
    pub profile: Option<String>,
    /// Use the packaged `fast.yaml` profile.
    #[arg(short = 'f', long = "fast")]
    pub fast: bool,
    /// Use the packaged `local.yaml` profile: the embedded local model (see `cargo xtask fetch-model`).
    #[arg(short = 'l', long = "local")]
    pub local: bool,
    /// Use the packaged `vision.yaml` profile.
    #[arg(long = "vision")]
    pub vision: bool,
    /// Not supported: OS control (mouse, keyboard, screen).
    #[arg(long = "os")]
    pub os: bool,
    /// Print the profiles folder (creating default.yaml there if missing) and exit.
    #[arg(long = "profiles")]
    pub profiles: bool,
    /// Restore a packaged profile (default: default.yaml) in the profiles folder and exit.
    #[arg(long = "reset_profile", num_args = 0..=1, default_missing_value = "default.yaml")]
    pub reset_profile: Option<String>,
    /// Pick a saved conversation (newest first) and continue it.
    #[arg(long = "conversations")]
    pub conversations: bool,
    /// Run the WebSocket/HTTP server (same as `oi-server`).
    #[arg(long = "server")]
    pub server: bool,
    /// With --server: address to bind (default INTERPRETER_HOST or 127.0.0.1).
    #[arg(long = "host", requires = "server")]
    pub host: Option<String>,
    /// With --server: port to bind (default INTERPRETER_PORT or 8000).
    #[arg(long = "port", requires = "server")]
    pub port: Option<u16>,
    /// With --server: another name (NAME or NAME:PORT) clients may use in Host and Origin;
    /// repeatable (adds to INTERPRETER_ALLOWED_HOSTS).
    #[arg(long = "allowed_host", value_name = "NAME", requires = "server")]
    pub allowed_host: Vec<String>,
    /// With --server: serve beyond loopback without INTERPRETER_API_KEY (anyone who can reach
    /// the port can run code).
    #[arg(long = "insecure_no_key", requires = "server")]
    pub insecure_no_key: bool,

    /// Print the version and exit.
    #[arg(long = "version")]
    pub version: bool,
}

impl Args {
    /// Parses the process arguments (after normalising their spelling).
    pub fn from_env() -> Self {
        Args::parse_from(normalize(std::env::args()))
    }

    /// `Some(true)` / `Some(false)` when a `--[no-]llm_supports_functions` flag was given.
    pub fn supports_functions(&self) -> Option<bool> {
        tri_state(self.llm_supports_functions, self.no_llm_supports_functions)
    }

    /// `Some(true)` / `Some(false)` when a `--[no-]llm_supports_vision` flag was given.
    pub fn supports_vision(&self) -> Option<bool> {
        tri_state(self.llm_supports_vision, self.no_llm_supports_vision)
    }

    /// The one-shot message, if any.
    pub fn message(&self) -> Option<String> {
        (!self.message.is_empty()).then(|| self.message.join(" "))
    }
}

fn tri_state(yes: bool, no: bool) -> Option<bool> {
    match (yes, no) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(args: &[&str]) -> Vec<String> {
        normalize(args.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn spellings_are_normalised() {
        assert_eq!(
            norm(&[
                "oi",
                "-ab",
                "http://x/v1",
                "--api-key=k",
                "--no-llm-supports-functions",
                "--",
                "-ab"
            ]),
            vec![
                "oi",
                "--api_base",
                "http://x/v1",
                "--api_key=k",
                "--no-llm_supports_functions",
                "--",
                "-ab"
            ]
        );
    }

    #[test]
    fn parses_the_originals_flags() {
        let args = Args::parse_from(norm(&[
            "oi",
            "-y",
            "-m",
            "openai/local",
            "-ab",
            "http://h/v1",
            "--no_llm_supports_functions",
            "hi",
            "there",
        ]));
        assert!(args.auto_run);
        assert_eq!(args.model.as_deref(), Some("openai/local"));
        assert_eq!(args.api_base.as_deref(), Some("http://h/v1"));
        assert_eq!(args.supports_functions(), Some(false));
        assert_eq!(args.message().as_deref(), Some("hi there"));
    }
}
