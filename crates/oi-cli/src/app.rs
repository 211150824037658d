//! Wiring: settings from every layer (`oi_config`), the interpreter built from them.

use oi_config::{Assembly, Layers, ProfileError};
use oi_core::{Interpreter, RuntimeState, Settings};

use crate::args::Args;

/// The version line.
pub fn version_line() -> String {
    format!(
        "oi {} (Open Interpreter 0.4.3 compatible)",
        env!("CARGO_PKG_VERSION")
    )
}

/// Settings: Open Interpreter's defaults, then the profile, then the environment, then flags
/// (flags win), and the runtime state they start with (a conversation file a profile names).
/// What the profile skipped is printed on standard error.
pub fn settings_from(args: &Args) -> Result<(Settings, RuntimeState), ProfileError> {
    let layers = Layers::from_args(&args.settings)?;
    for note in layers.notes() {
        eprintln!("{}", crate::sanitize::clean(&note));
    }
    let mut settings = layers.settings();
    settings.plain_text_display |= args.plain || args.stdin;
    settings.disable_telemetry = true;
    Ok((settings, layers.runtime()))
}

/// Builds the interpreter from settings, saying once what the sandbox enforces. The provider
/// follows the model name; settings that cannot work (an unknown provider, a missing local
/// model file, a build without the `local` feature) give a model whose first request reports
/// why, in one sentence, before anything is sent.
pub fn interpreter(settings: Settings) -> Interpreter {
    let assembly = Assembly::new(&settings, None);
    for note in assembly.notes(&settings) {
        eprintln!("{note}");
    }
    assembly.interpreter(settings)
}
