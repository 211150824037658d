//! Command-line flags, spelled as Open Interpreter spells them (spec e.2). Underscore and
//! kebab-case spellings both work, and so do the original's multi-letter short flags (`-ab`)
//! (see `oi_config::normalize`). The settings flags and the server's flags are shared with
//! `oi-server` (`oi_config::SettingsArgs`, `oi_server::ServerArgs`).

use clap::Parser;
use oi_config::SettingsArgs;
use oi_server::ServerArgs;

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
    /// Restore a packaged profile (default: default.yaml) in the profiles folder and exit.
    #[arg(long = "reset_profile", num_args = 0..=1, default_missing_value = "default.yaml")]
    pub reset_profile: Option<String>,
    /// Pick a saved conversation (newest first) and continue it.
    #[arg(long = "conversations")]
    pub conversations: bool,
    /// Run the WebSocket/HTTP server (same as `oi-server`; the server flags below apply).
    #[arg(long = "server")]
    pub server: bool,
    /// The server's flags (with --server).
    #[command(flatten)]
    pub server_args: ServerArgs,

    /// Print the version and exit.
    #[arg(long = "version")]
    pub version: bool,
}

impl Args {
    /// Parses the process arguments (after normalising their spelling).
    pub fn from_env() -> Self {
        Args::parse_from(oi_config::normalize(std::env::args()))
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
}
