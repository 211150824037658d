//! Interpreter and model settings with Open Interpreter 0.4.3's defaults (spec f.2).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::policy::{ApprovalPolicy, Rules};
use crate::prompts;

mod address;
pub mod computer;
mod keys;
mod patch;

pub use address::{SettingError, by_name};
pub use computer::{ComputerSettings, ResourceLimits, SandboxMode, SandboxPolicy};
pub use keys::{KeyError, SECTIONS, SHORTCUTS, check_keys, known_keys};
pub use patch::{ComputerPatch, LimitsPatch, LlmPatch, SandboxPatch, SandboxSpec, SettingsPatch};

/// Who receives code output in text mode (spec b.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum OutputSender {
    /// Output goes back as a user message built from the output templates (default).
    #[default]
    User,
    /// Output is appended to the assistant's turn as an ```` ```output ```` block.
    Assistant,
}

/// Safe mode (only the CLI acts on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SafeMode {
    /// No scanning (default).
    #[default]
    Off,
    /// Offer a scan before approval.
    Ask,
    /// Always scan before approval.
    Auto,
}

/// Everything a model provider needs to know about the model (spec f.2, `Llm`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmSettings {
    /// The model name as users write it (`gpt-4o`, `openai/local`, `ollama/llama3`, …).
    pub model: String,
    /// Sampling temperature.
    pub temperature: f64,
    /// Whether the model takes the `execute` tool (`None` = decide from the model name).
    pub supports_functions: Option<bool>,
    /// Whether the model takes images (`None` = decide from the model name).
    pub supports_vision: Option<bool>,
    /// Appended to the system message in text mode.
    pub execution_instructions: String,
    /// Context window in tokens.
    pub context_window: Option<u64>,
    /// Maximum tokens in a reply.
    pub max_tokens: Option<u64>,
    /// Base URL of the provider's API.
    pub api_base: Option<String>,
    /// The provider's API key.
    pub api_key: Option<String>,
    /// The endpoint (`provider base-URL`, as `oi_llm::endpoint::key_target` names it) that
    /// `api_key` was configured for: when set, the key is sent only to that endpoint, so that
    /// a client who points the model elsewhere (`POST /settings {"llm": {"model":
    /// "ollama/x"}}`) does not receive it. `None`: not bound (the CLI, where the user who
    /// typed the key also picks the model). Never serialised: neither read from a profile, a
    /// patch or a store nor shown.
    #[serde(skip)]
    pub api_key_for: Option<String>,
    /// Azure-style API version.
    pub api_version: Option<String>,
    /// Spending cap in USD.
    pub max_budget: Option<f64>,
}

impl Default for LlmSettings {
    fn default() -> Self {
        LlmSettings {
            model: "gpt-4o".to_owned(),
            temperature: 0.0,
            supports_functions: None,
            supports_vision: None,
            execution_instructions: prompts::EXECUTION_INSTRUCTIONS.to_owned(),
            context_window: None,
            max_tokens: None,
            api_base: None,
            api_key: None,
            api_key_for: None,
            api_version: None,
            max_budget: None,
        }
    }
}

/// How a model's reply is turned back into messages for the next request (spec b.6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Templates {
    /// Applied to the last user message (`{content}` is replaced).
    pub user_message_template: String,
    /// Apply the user template to every user message.
    pub always_apply_user_message_template: bool,
    /// Text-mode wrapper for code output.
    pub code_output_template: String,
    /// Text-mode message for code that printed nothing.
    pub empty_code_output_template: String,
    /// Who "says" code output in text mode.
    pub code_output_sender: OutputSender,
    /// Shrink an image whose data URL is over 5 MiB before sending it (`shrink_images`).
    pub shrink_images: bool,
}

/// All interpreter settings, defaults exactly as Open Interpreter 0.4.3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Run code without asking (default false).
    pub auto_run: bool,
    /// Characters of console output kept in the stored conversation (default 2800).
    pub max_output: usize,
    /// Keep going with a hidden "Proceed" message until a loop breaker phrase appears.
    #[serde(rename = "loop")]
    pub loop_mode: bool,
    /// The hidden loop message.
    pub loop_message: String,
    /// Phrases that end loop mode.
    pub loop_breakers: Vec<String>,
    /// The system message.
    pub system_message: String,
    /// Appended to the system message.
    pub custom_instructions: String,
    /// Applied to the last user message.
    pub user_message_template: String,
    /// Apply the user template to every user message.
    pub always_apply_user_message_template: bool,
    /// Text-mode wrapper for code output.
    pub code_output_template: String,
    /// Text-mode message for code that printed nothing.
    pub empty_code_output_template: String,
    /// Who "says" code output in text mode.
    pub code_output_sender: OutputSender,
    /// No network but the model provider.
    pub offline: bool,
    /// Print internals.
    pub verbose: bool,
    /// Print even more internals.
    pub debug: bool,
    /// Safe mode (CLI only).
    pub safe_mode: SafeMode,
    /// Shrink large images before sending them.
    pub shrink_images: bool,
    /// Save the conversation after each turn.
    pub conversation_history: bool,
    /// Where conversations are saved (default: `<config dir>/open-interpreter/conversations`).
    pub conversation_history_path: Option<PathBuf>,
    /// Import the headless `computer` API into the code's Python session, describe it in the
    /// system message ("THE COMPUTER API") and point the truncation notice at
    /// `computer.ai.summarize`.
    pub import_computer_api: bool,
    /// Plain-text display in the CLI.
    pub plain_text_display: bool,
    /// Highlight the running line in the CLI.
    pub highlight_active_line: bool,
    /// Accept `"""` multi-line input in the CLI.
    pub multi_line: bool,
    /// Disable telemetry (oi never sends any; kept for compatibility).
    pub disable_telemetry: bool,
    /// How code blocks are approved (`auto_run: true` means `auto`; `never-run` always wins).
    pub approval_policy: ApprovalPolicy,
    /// Commands that run without asking: a shell block runs when it is one literal command (or
    /// a pipe of them) whose words start with a rule's words (see `policy`).
    pub allow: Vec<String>,
    /// Text that blocks a code block when it appears in the raw code or in a shell command's
    /// normalised words (deny wins over allow).
    pub deny: Vec<String>,
    /// The hard-deny list (a seat belt, not a wall): recursive deletes of `/`, system and home
    /// directories and the working directory's parents, disk formatting and overwriting, fork
    /// bombs, decoded payloads run by a shell — even with `auto_run`, unless turned off.
    pub hard_deny: bool,
    /// Model settings.
    pub llm: LlmSettings,
    /// What the computer that runs code may do: sandbox and resource limits.
    pub computer: ComputerSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            auto_run: false,
            max_output: 2800,
            loop_mode: false,
            loop_message: prompts::LOOP_MESSAGE.to_owned(),
            loop_breakers: prompts::LOOP_BREAKERS
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            system_message: prompts::default_system_message(),
            custom_instructions: String::new(),
            user_message_template: prompts::USER_MESSAGE_TEMPLATE.to_owned(),
            always_apply_user_message_template: false,
            code_output_template: prompts::CODE_OUTPUT_TEMPLATE.to_owned(),
            empty_code_output_template: prompts::EMPTY_CODE_OUTPUT_TEMPLATE.to_owned(),
            code_output_sender: OutputSender::User,
            offline: false,
            verbose: false,
            debug: false,
            safe_mode: SafeMode::Off,
            shrink_images: true,
            conversation_history: true,
            conversation_history_path: None,
            import_computer_api: false,
            plain_text_display: false,
            highlight_active_line: true,
            multi_line: true,
            disable_telemetry: false,
            approval_policy: ApprovalPolicy::AlwaysAsk,
            allow: Vec::new(),
            deny: Vec::new(),
            hard_deny: true,
            llm: LlmSettings::default(),
            computer: ComputerSettings::default(),
        }
    }
}

impl Settings {
    /// The templates the model provider needs to convert history.
    pub fn templates(&self) -> Templates {
        Templates {
            user_message_template: self.user_message_template.clone(),
            always_apply_user_message_template: self.always_apply_user_message_template,
            code_output_template: self.code_output_template.clone(),
            empty_code_output_template: self.empty_code_output_template.clone(),
            code_output_sender: self.code_output_sender,
            shrink_images: self.shrink_images,
        }
    }

    /// The approval rules in force: `never-run` wins, then `auto_run`, then the policy.
    pub fn rules(&self) -> Rules {
        let policy = match (self.approval_policy, self.auto_run) {
            (ApprovalPolicy::NeverRun, _) => ApprovalPolicy::NeverRun,
            (_, true) => ApprovalPolicy::Auto,
            (policy, false) => policy,
        };
        Rules {
            policy,
            allow: self.allow.clone(),
            deny: self.deny.clone(),
            hard_deny: self.hard_deny,
            home: dirs::home_dir(),
            cwd: std::env::current_dir().ok(),
        }
    }

    /// The sandbox and limits of a run of `language`, with the computer API imported into a
    /// Python session when `import_computer_api` is on (spec d.1).
    pub fn run_policy(&self, language: &str) -> ComputerSettings {
        let mut policy = self.computer.clone();
        policy.api = self.import_computer_api
            && crate::languages::kind(language) == crate::languages::LanguageKind::Python;
        policy
    }

    /// Where conversations are saved.
    pub fn conversations_dir(&self) -> Option<PathBuf> {
        self.conversation_history_path
            .clone()
            .or_else(|| config_dir().map(|dir| dir.join("conversations")))
    }
}

/// Open Interpreter's config directory (`~/.config/open-interpreter` on Linux,
/// `~/Library/Application Support/open-interpreter` on macOS).
pub fn config_dir() -> Option<PathBuf> {
    dirs::config_dir().map(|dir| dir.join("open-interpreter"))
}
