//! The environment's layer: the variables Open Interpreter reads as settings. (Provider keys
//! and base URLs, `OPENAI_API_KEY` and the like, are read by the providers when a request is
//! made; the server's `INTERPRETER_*` variables are its configuration, not settings.)
//!
//! The original's interpreter also reads `INTERPRETER_ACTIVE_LINE_DETECTION` (not "true": no
//! active-line markers), `INTERPRETER_TERMINAL_INPUT_PATIENCE` (seconds of silence before the
//! model is asked what to type into the running program) and
//! `INTERPRETER_REQUIRE_AUTHENTICATION` ("true": a tool call the judge layer did not review
//! is an error). oi takes the first as `highlight_active_line: false` (its markers never reach
//! the code's output, so only the display changes), and says what the other two mean here
//! ([`env_notes`]): oi never types into a running program, and its judge reads every block
//! before it runs, whatever the variable says. None of them is a server switch: oi-server's
//! key rule (INTERPRETER_API_KEY, INTERPRETER_INSECURE_NO_KEY) is not touched by them.

use oi_core::settings::SettingsPatch;

/// Whether `value` is the original's "true" (any case; oi also takes `1` and `yes`).
fn truthy(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "true" | "1" | "yes"
    )
}

/// The settings the environment sets, looked up through `get` (use
/// `|k| std::env::var(k).ok()` for this process's environment).
pub fn env_patch(get: impl Fn(&str) -> Option<String>) -> SettingsPatch {
    let is_true = |name: &str| get(name).is_some_and(|v| truthy(&v));
    SettingsPatch {
        // The original's CLI reads DISABLE_TELEMETRY; oi never sends telemetry either way.
        disable_telemetry: is_true("DISABLE_TELEMETRY").then_some(true),
        // The original: anything but "true" turns the markers off.
        highlight_active_line: get("INTERPRETER_ACTIVE_LINE_DETECTION")
            .filter(|v| !truthy(v))
            .map(|_| false),
        ..SettingsPatch::default()
    }
}

/// What the original's variables that oi does not take as settings mean here, one line each
/// (printed on standard error when they are set).
pub fn env_notes(get: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(value) = get("INTERPRETER_TERMINAL_INPUT_PATIENCE") {
        notes.push(format!(
            "INTERPRETER_TERMINAL_INPUT_PATIENCE={}: oi does not have the model type into a \
             running program (the original asks it for keystrokes after that many silent \
             seconds); code that waits for input gets none. Ignored.",
            value.trim()
        ));
    }
    if let Some(value) = get("INTERPRETER_REQUIRE_AUTHENTICATION") {
        let meaning = if truthy(&value) {
            "what it asks is what oi always does: its judge reads every code block before it runs."
        } else {
            "it turns nothing off: oi's judge reads every code block before it runs, whatever \
             it says."
        };
        notes.push(format!(
            "INTERPRETER_REQUIRE_AUTHENTICATION={}: {meaning} It is not a server setting: \
             oi-server's key rule is INTERPRETER_API_KEY (docs/security.md).",
            value.trim()
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn active_line_detection_off_turns_the_highlight_off() {
        for value in ["False", "false", "0", "no"] {
            let patch = env_patch(env(&[("INTERPRETER_ACTIVE_LINE_DETECTION", value)]));
            assert_eq!(patch.highlight_active_line, Some(false), "{value}");
        }
        let patch = env_patch(env(&[("INTERPRETER_ACTIVE_LINE_DETECTION", "True")]));
        assert_eq!(patch.highlight_active_line, None);
        assert_eq!(env_patch(env(&[])), SettingsPatch::default());
    }

    #[test]
    fn patience_and_require_authentication_are_explained_and_weaken_nothing() {
        assert!(env_notes(env(&[])).is_empty());
        let notes = env_notes(env(&[
            ("INTERPRETER_TERMINAL_INPUT_PATIENCE", "15"),
            ("INTERPRETER_REQUIRE_AUTHENTICATION", "False"),
        ]));
        assert_eq!(notes.len(), 2);
        assert!(notes[0].contains("Ignored"), "{notes:?}");
        assert!(notes[1].contains("turns nothing off"), "{notes:?}");
        assert!(notes[1].contains("INTERPRETER_API_KEY"), "{notes:?}");
        let patch = env_patch(env(&[("INTERPRETER_REQUIRE_AUTHENTICATION", "False")]));
        assert_eq!(patch, SettingsPatch::default(), "no setting changes");
    }
}
