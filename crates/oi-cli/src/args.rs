//! Command-line flags, spelled as Open Interpreter spells them (spec e.2). Underscore and
//! kebab-case spellings both work, and so do the original's multi-letter short flags (`-ab`)
//! (see `oi_config::normalize`). The settings flags and the server's flags are shared with
//! `oi-server` (`oi_config::SettingsArgs`, `oi_server::ServerArgs`).

use clap::{CommandFactory, Parser};
use oi_config::SettingsArgs;
use oi_server::ServerArgs;

/// Said after the flags in `--help`.
const AFTER_HELP: &str = "Models (--model, -m):
  gpt-4o                                  OpenAI (OPENAI_API_KEY or --api_key)
  anthropic/claude-3-5-sonnet-20240620    Anthropic (ANTHROPIC_API_KEY)
  ollama/llama3.1                         Ollama on this machine (pulled once you agree)
  groq/llama-3.1-70b-versatile            Groq (GROQ_API_KEY)
  openai/NAME --api_base URL              any OpenAI-compatible server (LM Studio, llama.cpp, vLLM, ...)
  --local                                 the embedded model (cargo xtask fetch-model)

Underscore and kebab-case spellings both work (--api_base, --api-base), and so do the original's short flags (-ab, -ak, -ci, -sm, -cw, -nhl, ...). A flag given twice takes its last value.
Use \"\"\" to write multi-line messages.

oi runs on Linux (x86-64 and arm64); on macOS everything but the sandbox (--sandbox, --deny_network) and its session containment; Windows is not supported yet.";

/// `oi`: Open Interpreter, rebuilt in Rust.
#[derive(Debug, Parser)]
#[command(
    name = "oi",
    about = "Open Interpreter, rebuilt in Rust: a language model writes code and runs it on your machine.",
    after_help = AFTER_HELP,
    disable_version_flag = true,
    disable_help_flag = true,
    args_override_self = true
)]
pub struct Args {
    /// Run this message as one turn and exit (no message: interactive session).
    pub message: Vec<String>,

    /// Settings (shared with oi-server).
    #[command(flatten)]
    pub settings: SettingsArgs,

    /// Print plain text: no colours, fenced code blocks.
    #[arg(long = "plain")]
    pub plain: bool,
    /// Read the message from standard input (implies --plain).
    #[arg(short = 's', long = "stdin")]
    pub stdin: bool,
    /// Not supported: OS control (mouse, keyboard, screen).
    #[arg(long = "os")]
    pub os: bool,
    /// Print the profiles folder (creating default.yaml there if missing) and exit.
    #[arg(long = "profiles")]
    pub profiles: bool,
    /// Print the folder of the embedded model's files (`--local`; `cargo xtask fetch-model`
    /// puts them there, OI_MODEL_PATH names another file) and the Ollama models, and exit.
    #[arg(long = "local_models")]
    pub local_models: bool,
    /// Restore a packaged profile (default: default.yaml) in the profiles folder and exit.
    #[arg(long = "reset_profile", num_args = 0..=1, default_missing_value = "default.yaml")]
    pub reset_profile: Option<String>,
    /// Pick a saved conversation (newest first) and continue it.
    #[arg(long = "conversations")]
    pub conversations: bool,
    /// Run the WebSocket/HTTP server (same as `oi-server`; the server flags below apply).
    #[arg(long = "server")]
    pub server: bool,
    /// Serve oi's code interpreter over MCP on standard input and output, for another agent
    /// (tools: execute, stop, reset, languages, read_file, write_file); with --server, serve it
    /// at `/mcp` instead.
    #[arg(long = "mcp")]
    pub mcp: bool,
    /// The server's flags (with --server).
    #[command(flatten)]
    pub server_args: ServerArgs,

    /// Print the version and exit.
    #[arg(long = "version")]
    pub version: bool,
    /// Print this help and exit.
    #[arg(short = 'h', long = "help")]
    pub help: bool,
}

impl Args {
    /// Parses the process arguments (after normalising their spelling).
    pub fn from_env() -> Self {
        Args::parse_from(oi_config::normalize(std::env::args()))
    }

    /// The help text: clap's, with the original's multi-letter short flags beside their long
    /// flags (`-ab, --api_base <API_BASE>`).
    pub fn help_text() -> String {
        let help = Args::command().render_help().to_string();
        let mut out = String::new();
        for line in help.lines() {
            let alias = oi_config::spelling::multi_letter_shorts()
                .iter()
                .find(|(_, long)| {
                    line.strip_prefix("      ")
                        .and_then(|rest| rest.strip_prefix(long))
                        .is_some_and(|after| after.is_empty() || after.starts_with(' '))
                });
            match alias {
                Some((short, _)) => out.push_str(&format!("  {short}, {}", line.trim_start())),
                None => out.push_str(line),
            }
            out.push('\n');
        }
        out
    }

    /// The one-shot message, if any.
    pub fn message(&self) -> Option<String> {
        (!self.message.is_empty()).then(|| self.message.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Args {
        Args::parse_from(oi_config::normalize(args.iter().map(|s| (*s).to_owned())))
    }

    #[test]
    fn parses_the_originals_flags() {
        let args = parse(&[
            "oi",
            "-y",
            "-m",
            "openai/local",
            "-ab",
            "http://h/v1",
            "--no_llm_supports_functions",
            "hi",
            "there",
        ]);
        let patch = args.settings.patch();
        assert_eq!(patch.auto_run, Some(true));
        let llm = patch.llm.unwrap_or_default();
        assert_eq!(llm.model.as_deref(), Some("openai/local"));
        assert_eq!(llm.api_base, Some(Some("http://h/v1".to_owned())));
        assert_eq!(llm.supports_functions, Some(Some(false)));
        assert_eq!(args.message().as_deref(), Some("hi there"));
    }

    #[test]
    fn a_repeated_flag_takes_its_last_value_and_lists_still_add_up() {
        let args = parse(&[
            "oi", "-m", "first", "--model", "second", "-y", "-y", "--allow", "ls", "--allow", "git",
        ]);
        assert_eq!(args.settings.model.as_deref(), Some("second"));
        assert!(args.settings.auto_run);
        assert_eq!(args.settings.allow, ["ls", "git"]);
    }

    #[test]
    fn the_originals_remaining_flags_are_accepted() {
        let args = parse(&[
            "oi",
            "--local_models",
            "--llama3",
            "-sp",
            "--assistant",
            "--codestral",
        ]);
        assert!(args.local_models && args.settings.llama3 && args.settings.speak_messages);
        assert!(args.settings.assistant && args.settings.codestral);
    }

    #[test]
    fn help_shows_the_originals_short_flags() {
        let help = Args::help_text();
        for alias in [
            "-ci, --custom_instructions",
            "-sm, --system_message",
            "-cw, --context_window",
            "-nhl, --no_highlight_active_line",
            "-ab, --api_base",
            "-ak, --api_key",
        ] {
            assert!(help.contains(alias), "{alias} missing:\n{help}");
        }
        assert!(help.contains("Windows is not supported yet."));
    }
}
