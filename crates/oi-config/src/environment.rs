//! The environment's layer: the variables Open Interpreter reads as settings. (Provider keys
//! and base URLs, `OPENAI_API_KEY` and the like, are read by the providers when a request is
//! made; the server's `INTERPRETER_*` variables are its configuration, not settings.)

use oi_core::settings::SettingsPatch;

/// The settings the environment sets, looked up through `get` (use
/// `|k| std::env::var(k).ok()` for this process's environment).
pub fn env_patch(get: impl Fn(&str) -> Option<String>) -> SettingsPatch {
    let is_true = |name: &str| {
        get(name)
            .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes"))
    };
    SettingsPatch {
        // The original's CLI reads DISABLE_TELEMETRY; oi never sends telemetry either way.
        disable_telemetry: is_true("DISABLE_TELEMETRY").then_some(true),
        ..SettingsPatch::default()
    }
}
