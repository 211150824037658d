//! The flags `oi` and `oi-server` share: every setting a flag can set, as one clap group, and
//! the [`SettingsPatch`] it makes. A flag left out sets nothing, so the profile's value holds.

use std::path::PathBuf;

use clap::Args;
use oi_core::ApprovalPolicy;
use oi_core::settings::{
    LimitsPatch, LlmPatch, SafeMode, SandboxMode, SandboxPatch, SandboxSpec, SettingsPatch,
};

/// Flags that set settings (spec e.2, plus oi's safety flags).
#[derive(Debug, Clone, Default, Args)]
pub struct SettingsArgs {
    /// Model to use, e.g. gpt-4o, anthropic/claude-3-5-sonnet-20240620, ollama/llama3.1,
    /// groq/llama-3.1-70b-versatile, or openai/NAME with --api_base URL (any OpenAI-compatible
    /// server).
    #[arg(short = 'm', long = "model")]
    pub model: Option<String>,
    /// Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8080/v1.
    #[arg(long = "api_base")]
    pub api_base: Option<String>,
    /// API key (default: the provider's variable, e.g. OPENAI_API_KEY).
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
    /// Spending cap in USD for the session, counted from the usage the provider reports; the
    /// session stops asking the model once it is reached.
    #[arg(short = 'b', long = "max_budget")]
    pub max_budget: Option<f64>,
    /// The model takes the `execute` tool (function calling).
    #[arg(
        long = "llm_supports_functions",
        overrides_with = "no_llm_supports_functions"
    )]
    pub llm_supports_functions: bool,
    /// The model writes fenced code blocks instead of calling a tool.
    #[arg(
        long = "no-llm_supports_functions",
        overrides_with = "llm_supports_functions"
    )]
    pub no_llm_supports_functions: bool,
    /// The model takes images.
    #[arg(
        long = "llm_supports_vision",
        overrides_with = "no_llm_supports_vision"
    )]
    pub llm_supports_vision: bool,
    /// The model does not take images.
    #[arg(
        long = "no-llm_supports_vision",
        overrides_with = "llm_supports_vision"
    )]
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
    /// No network but the model provider: oi never sends telemetry or checks for updates
    /// anyway; with this flag it also never pulls an Ollama model and skips the intro.
    #[arg(short = 'o', long = "offline")]
    pub offline: bool,
    /// Log the model requests and the respond loop's decisions on standard error.
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    /// Log more: request bodies and every decision in detail.
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
    /// The directory --sandbox workspace lets code write in (default: the current directory).
    #[arg(long = "workspace", value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Deny code network access (TCP/UDP sockets), with or without --sandbox.
    #[arg(long = "deny_network")]
    pub deny_network: bool,
    /// When the kernel cannot enforce the sandbox, run unsandboxed (saying so) instead of refusing.
    #[arg(long = "sandbox_fallback")]
    pub sandbox_fallback: bool,
    /// Under --sandbox workspace, let code write the workspace's .git/config and .git/hooks (read-only by default: a hook or core.fsmonitor set there runs outside the sandbox at your next git command).
    #[arg(long = "sandbox_git_writable")]
    pub sandbox_git_writable: bool,
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
    /// Do not highlight the running line.
    #[arg(long = "no_highlight_active_line")]
    pub no_highlight_active_line: bool,
    /// Accepted for compatibility: `"""` multi-line input is always on in the terminal.
    #[arg(long = "multi_line")]
    pub multi_line: bool,
    /// Accepted for compatibility: oi never sends telemetry.
    #[arg(long = "disable_telemetry")]
    pub disable_telemetry: bool,

    /// Profile to load: a path you write (it has a `/`, or starts with `.` or `~`), or a name in
    /// the profiles folder (`oi --profiles` prints it), then a packaged one.
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
    /// Use the packaged `llama3.yaml` profile: Llama 3 through Ollama on this machine.
    #[arg(long = "llama3")]
    pub llama3: bool,
    /// Use the packaged `codestral.yaml` profile: Codestral through Ollama on this machine.
    #[arg(long = "codestral")]
    pub codestral: bool,
    /// Use the packaged `assistant.yaml` profile (the original's 01 assistant: gpt-4o, loop
    /// mode, short plain answers); code still asks before it runs unless -y.
    #[arg(long = "assistant")]
    pub assistant: bool,
    /// Accepted for compatibility: the original reads messages aloud with macOS `say` in OS
    /// mode; oi has no OS mode and does not speak (it says so and goes on).
    #[arg(long = "speak_messages")]
    pub speak_messages: bool,
}

fn tri_state(yes: bool, no: bool) -> Option<bool> {
    match (yes, no) {
        (true, _) => Some(true),
        (_, true) => Some(false),
        _ => None,
    }
}

/// `Some(true)` for a flag given, `None` for one left out (so the profile's value holds).
fn given(flag: bool) -> Option<bool> {
    flag.then_some(true)
}

impl SettingsArgs {
    /// What the flags oi accepts but cannot do say, one line each (`--speak_messages`).
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.speak_messages {
            notes.push(
                "--speak_messages: oi does not read messages aloud (the original does it with \
                 macOS `say` in OS mode, which oi does not have); going on without speech."
                    .to_owned(),
            );
        }
        notes
    }

    /// The profile these flags select: `--profile`, else `--fast`/`--local`/`--llama3`/
    /// `--codestral`/`--assistant`/`--vision`, else `default.yaml`.
    pub fn profile_name(&self) -> &str {
        if let Some(name) = &self.profile {
            return name;
        }
        if self.llama3 {
            "llama3.yaml"
        } else if self.codestral {
            "codestral.yaml"
        } else if self.assistant {
            "assistant.yaml"
        } else if self.fast {
            "fast.yaml"
        } else if self.local {
            "local.yaml"
        } else if self.vision {
            "vision.yaml"
        } else {
            "default.yaml"
        }
    }

    /// The settings these flags set.
    pub fn patch(&self) -> SettingsPatch {
        let llm = LlmPatch {
            model: self.model.clone(),
            temperature: self.temperature,
            supports_functions: tri_state(
                self.llm_supports_functions,
                self.no_llm_supports_functions,
            )
            .map(Some),
            supports_vision: tri_state(self.llm_supports_vision, self.no_llm_supports_vision)
                .map(Some),
            execution_instructions: None,
            context_window: self.context_window.map(Some),
            max_tokens: self.max_tokens.map(Some),
            api_base: self.api_base.clone().map(Some),
            api_key: self.api_key.clone().map(Some),
            api_version: self.api_version.clone().map(Some),
            max_budget: self.max_budget.map(Some),
        };
        let sandbox = SandboxPatch {
            mode: self
                .sandbox
                .as_deref()
                .and_then(|m| m.parse::<SandboxMode>().ok()),
            network: self.deny_network.then_some(false),
            allow_unsandboxed_fallback: given(self.sandbox_fallback),
            workspace: self.workspace.clone(),
            pass_env: (!self.pass_env.is_empty()).then(|| self.pass_env.clone()),
            git_writable: given(self.sandbox_git_writable),
        };
        let limits = LimitsPatch {
            max_processes: self.max_processes,
            max_memory_bytes: self.max_memory,
            max_cpu_seconds: self.max_cpu_seconds,
        };
        SettingsPatch {
            auto_run: given(self.auto_run),
            max_output: self.max_output,
            loop_mode: given(self.loop_mode),
            system_message: self.system_message.clone(),
            custom_instructions: self.custom_instructions.clone(),
            offline: given(self.offline),
            verbose: given(self.verbose),
            debug: given(self.debug),
            safe_mode: self.safe_mode.as_deref().map(|mode| match mode {
                "ask" => SafeMode::Ask,
                "auto" => SafeMode::Auto,
                _ => SafeMode::Off,
            }),
            approval_policy: self.approval_policy.as_deref().map(|policy| match policy {
                "auto" => ApprovalPolicy::Auto,
                "never-run" => ApprovalPolicy::NeverRun,
                _ => ApprovalPolicy::AlwaysAsk,
            }),
            more_allow: self.allow.clone(),
            more_deny: self.deny.clone(),
            hard_deny: self.no_hard_deny.then_some(false),
            highlight_active_line: self.no_highlight_active_line.then_some(false),
            multi_line: given(self.multi_line),
            disable_telemetry: given(self.disable_telemetry),
            llm: Some(llm),
            sandbox: (sandbox != SandboxPatch::default()).then_some(SandboxSpec::Policy(sandbox)),
            limits: (limits != LimitsPatch::default()).then_some(limits),
            ..SettingsPatch::default()
        }
    }
}
