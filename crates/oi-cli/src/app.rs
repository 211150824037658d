//! Wiring: settings from defaults, the profile and flags; the interpreter from settings.

use std::sync::Arc;

use oi_core::{Interpreter, SafeMode, Settings};

use crate::args::Args;
use crate::profiles::{self, CliOptions, ProfileError};

/// The version line.
pub fn version_line() -> String {
    format!(
        "oi {} (Open Interpreter 0.4.3 compatible)",
        env!("CARGO_PKG_VERSION")
    )
}

/// The profile the flags select: `--profile`, else `--fast`/`--local`/`--vision`, else default.
fn profile_name(args: &Args) -> &str {
    if let Some(name) = &args.profile {
        return name;
    }
    if args.fast {
        "fast.yaml"
    } else if args.local {
        "local.yaml"
    } else if args.vision {
        "vision.yaml"
    } else {
        "default.yaml"
    }
}

/// Settings: Open Interpreter's defaults, then the profile, then flags (flags win).
pub fn settings_from(args: &Args) -> Result<(Settings, CliOptions), ProfileError> {
    let mut settings = Settings::default();
    let mut cli = CliOptions::default();
    let dir = profiles::profiles_dir();
    profiles::load(profile_name(args), dir.as_deref())?.apply(&mut settings, &mut cli);
    apply_flags(args, &mut settings, &mut cli);
    Ok((settings, cli))
}

fn apply_flags(args: &Args, settings: &mut Settings, cli: &mut CliOptions) {
    let llm = &mut settings.llm;
    if let Some(model) = &args.model {
        llm.model = model.clone();
    }
    llm.api_base = args.api_base.clone().or(llm.api_base.take());
    llm.api_key = args.api_key.clone().or(llm.api_key.take());
    llm.api_version = args.api_version.clone().or(llm.api_version.take());
    if let Some(t) = args.temperature {
        llm.temperature = t;
    }
    llm.context_window = args.context_window.or(llm.context_window);
    llm.max_tokens = args.max_tokens.or(llm.max_tokens);
    llm.max_budget = args.max_budget.or(llm.max_budget);
    llm.supports_functions = args.supports_functions().or(llm.supports_functions);
    llm.supports_vision = args.supports_vision().or(llm.supports_vision);
    settings.auto_run |= args.auto_run;
    if let Some(max_output) = args.max_output {
        settings.max_output = max_output;
    }
    settings.loop_mode |= args.loop_mode;
    if let Some(system_message) = &args.system_message {
        settings.system_message = system_message.clone();
    }
    if let Some(custom) = &args.custom_instructions {
        settings.custom_instructions = custom.clone();
    }
    if let Some(mode) = &args.safe_mode {
        settings.safe_mode = match mode.as_str() {
            "ask" => SafeMode::Ask,
            "auto" => SafeMode::Auto,
            _ => SafeMode::Off,
        };
    }
    if let Some(policy) = &args.approval_policy {
        settings.approval_policy = match policy.as_str() {
            "auto" => oi_core::ApprovalPolicy::Auto,
            "never-run" => oi_core::ApprovalPolicy::NeverRun,
            _ => oi_core::ApprovalPolicy::AlwaysAsk,
        };
    }
    settings.allow.extend(args.allow.iter().cloned());
    settings.deny.extend(args.deny.iter().cloned());
    if args.no_hard_deny {
        settings.hard_deny = false;
    }
    settings.offline |= args.offline;
    settings.verbose |= args.verbose;
    settings.debug |= args.debug;
    settings.plain_text_display |= args.plain || args.stdin;
    settings.disable_telemetry = true;
    if args.no_highlight_active_line {
        cli.highlight_active_line = false;
    }
    if let Some(mode) = &args.sandbox {
        cli.sandbox.mode = mode.parse().unwrap_or(cli.sandbox.mode);
    }
    if args.deny_network {
        cli.sandbox.network = false;
    }
    cli.sandbox.allow_unsandboxed_fallback |= args.sandbox_fallback;
    for name in &args.pass_env {
        if !cli.sandbox.pass_env.contains(name) {
            cli.sandbox.pass_env.push(name.clone());
        }
    }
    cli.limits.max_processes = args.max_processes.or(cli.limits.max_processes);
    cli.limits.max_memory_bytes = args.max_memory.or(cli.limits.max_memory_bytes);
    cli.limits.max_cpu_seconds = args.max_cpu_seconds.or(cli.limits.max_cpu_seconds);
}

/// Builds the interpreter from settings. The provider follows the model name (OpenAI-compatible,
/// Anthropic, or the embedded `local` model); settings that cannot work (an unknown provider,
/// a missing local model file, a build without the `local` feature) give a model whose first
/// request reports why, in one sentence, before anything is sent.
pub fn interpreter(settings: Settings, cli: &CliOptions) -> Interpreter {
    let model = oi_llm::provider_for(&settings.llm, oi_llm::Env::from_process())
        .unwrap_or_else(oi_llm::unavailable);
    let computer = computer(cli, &settings);
    Interpreter::new(settings, model, Arc::new(computer))
}

/// The local computer with the sandbox and limits asked for, withholding oi's secrets (the
/// server key variable, the model key's variables and the model key's value) from the code
/// and keeping sandboxed code out of the conversations directory; says once what is enforced.
pub fn computer(cli: &CliOptions, settings: &Settings) -> oi_computer::LocalComputer {
    let key_vars = oi_llm::env::KNOWN_VARS
        .into_iter()
        .filter(|name| name.ends_with("_API_KEY"));
    let secrets = oi_computer::Secrets::of_oi(settings.llm.api_key.as_deref(), key_vars, |name| {
        std::env::var(name).ok()
    });
    let mut computer = oi_computer::LocalComputer::new()
        .with_limits(cli.limits)
        .with_secrets(secrets);
    if let Some(dir) = settings.conversations_dir() {
        computer = computer.with_protected_dir(dir);
    }
    computer = computer.with_sandbox(cli.sandbox.clone());
    if cli.sandbox.restricts() {
        let network = if cli.sandbox.network {
            "network allowed"
        } else {
            "network denied"
        };
        let support = computer.sandbox_support();
        eprintln!(
            "sandbox: {}, {network} ({support})",
            cli.sandbox.mode.as_str()
        );
    }
    if let Some(warning) = cli.sandbox.broad_workspace_warning() {
        eprintln!("sandbox: {warning}");
    }
    computer
}
