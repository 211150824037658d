//! What a conversation is doing, kept beside its settings rather than in them: the file it is
//! saved to and what its model requests have cost. Settings are what a user, a profile or a
//! client configures (and what a store may carry to another replica); this is what the
//! interpreter finds out while it runs, so no settings patch overwrites it and no copy of
//! the settings carries it to another conversation.

use serde_json::Value;

use crate::settings::{Settings, SettingsPatch};

/// The key under which [`RuntimeState::conversation_filename`] is shown beside the settings
/// (`GET /settings`, Python's `interpreter.conversation_filename`), as the original shows it.
pub const CONVERSATION_FILENAME: &str = "conversation_filename";

/// One conversation's runtime state (owned by its [`Interpreter`](crate::Interpreter)).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuntimeState {
    /// The file name of this conversation in the conversations folder: chosen by the first
    /// save, or set by whoever resumes a saved conversation; cleared by a reset.
    pub conversation_filename: Option<String>,
    /// What this conversation's model requests have cost so far, in USD (kept across a
    /// reset); `max_budget` is checked against it before every request.
    pub spent: f64,
}

impl RuntimeState {
    /// Takes what `patch` says about the runtime state (a profile or a flag may name the
    /// conversation file to start with).
    pub fn apply(&mut self, patch: &SettingsPatch) {
        if let Some(name) = &patch.conversation_filename {
            self.conversation_filename.clone_from(name);
        }
    }
}

/// `settings` as JSON with the runtime state a client sees among them
/// (`conversation_filename`, right after `conversation_history_path`, where the original
/// lists it): what `GET /settings` and the Python attributes show.
pub fn settings_with_runtime(settings: &Settings, runtime: &RuntimeState) -> Value {
    let Ok(Value::Object(fields)) = serde_json::to_value(settings) else {
        return Value::Null;
    };
    let filename = runtime
        .conversation_filename
        .clone()
        .map_or(Value::Null, Value::String);
    let mut shown = serde_json::Map::with_capacity(fields.len() + 1);
    let mut pending = Some(filename);
    for (key, value) in fields {
        let after = key == "conversation_history_path";
        shown.insert(key, value);
        if after {
            if let Some(filename) = pending.take() {
                shown.insert(CONVERSATION_FILENAME.to_owned(), filename);
            }
        }
    }
    if let Some(filename) = pending {
        shown.insert(CONVERSATION_FILENAME.to_owned(), filename);
    }
    Value::Object(shown)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn the_file_name_is_shown_beside_the_settings_not_stored_in_them() {
        let settings = Settings::default();
        let plain = serde_json::to_value(&settings).unwrap();
        assert!(plain.get(CONVERSATION_FILENAME).is_none());
        let shown = settings_with_runtime(&settings, &RuntimeState::default());
        assert_eq!(shown[CONVERSATION_FILENAME], Value::Null);
        let runtime = RuntimeState {
            conversation_filename: Some("a.json".into()),
            spent: 1.0,
        };
        let shown = settings_with_runtime(&settings, &runtime);
        assert_eq!(shown[CONVERSATION_FILENAME], "a.json");
        assert!(shown.get("spent").is_none());
        let keys: Vec<&String> = shown.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), plain.as_object().unwrap().len() + 1);
    }

    #[test]
    fn a_patch_names_the_file_to_start_with() {
        let mut runtime = RuntimeState::default();
        runtime.apply(&SettingsPatch::default());
        assert_eq!(runtime.conversation_filename, None);
        let patch = SettingsPatch {
            conversation_filename: Some(Some("b.json".into())),
            ..SettingsPatch::default()
        };
        runtime.apply(&patch);
        assert_eq!(runtime.conversation_filename.as_deref(), Some("b.json"));
    }
}
