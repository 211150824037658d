//! One address per setting: every setting is read with [`Settings::get`] and written with
//! [`Settings::set`] by its dotted name (`auto_run`, `llm.model`, `computer.sandbox`), and a
//! write goes through the patch rules ([`SettingsPatch`]: the shortcuts `sandbox`, `limits`,
//! `pass_env`, `computer.import_computer_api`, …, and the same type checks as a profile). The
//! server (which adds what a network client may not change) and the Python attributes use it;
//! [`Settings::names`] is the list both show.

use serde_json::{Map, Value};

use super::keys::{CONVERSATION_FILENAME, SECTIONS, SHORTCUTS, check_keys, nearest};
use super::{Settings, SettingsPatch};

/// Why a setting could not be read or written by name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// No setting has this name.
    #[error("there is no setting `{name}`{}", hint(.nearest.as_deref()))]
    Unknown {
        /// The name as given.
        name: String,
        /// The known name it most resembles, if one is close.
        nearest: Option<String>,
    },
    /// The value does not fit the setting (wrong type, unknown variant, `null` where a
    /// value is needed); nothing changed.
    #[error("`{name}` cannot be {shown}: {reason}")]
    Invalid {
        /// The setting.
        name: String,
        /// The value refused, as JSON.
        shown: String,
        /// What is wrong, in serde's words.
        reason: String,
    },
    /// The name is the conversation's runtime state shown among the settings
    /// (`conversation_filename`, kept by `oi_core::RuntimeState`, which takes it from
    /// [`SettingsPatch::one`]).
    #[error("`{name}` is the conversation's runtime state, not a setting")]
    Runtime {
        /// The name.
        name: String,
    },
}

fn hint(nearest: Option<&str>) -> String {
    nearest.map_or_else(String::new, |n| format!(" (did you mean `{n}`?)"))
}

impl SettingError {
    /// An unknown `name`, with the nearest known name.
    fn unknown(name: &str) -> Self {
        SettingError::Unknown {
            name: name.to_owned(),
            nearest: nearest(name, &super::keys::known_keys()),
        }
    }
}

/// The JSON pointer of a dotted name (`llm.model` → `/llm/model`).
fn pointer(name: &str) -> String {
    name.split('.').fold(String::new(), |mut out, part| {
        out.push('/');
        out.push_str(part);
        out
    })
}

/// The setting a name reads: a shortcut's target, or the name itself.
fn target(name: &str) -> &str {
    SHORTCUTS
        .iter()
        .find(|(shortcut, _)| *shortcut == name)
        .map_or(name, |(_, target)| target)
}

/// Whether `name` is a setting, a section or a shortcut.
fn is_known(name: &str) -> bool {
    Settings::names().iter().any(|n| n == name)
        || SECTIONS.contains(&name)
        || SHORTCUTS.iter().any(|(shortcut, _)| *shortcut == name)
}

/// Whether `name` is known or lies inside a known setting (`computer.sandbox.mode`).
fn is_readable(name: &str) -> bool {
    let mut prefix = String::new();
    name.split('.').any(|part| {
        if !prefix.is_empty() {
            prefix.push('.');
        }
        prefix.push_str(part);
        is_known(&prefix)
    })
}

/// `value` placed at `name` in a settings object: `{"llm": {"model": value}}`.
fn nest(name: &str, value: Value) -> Value {
    let mut inner = Map::new();
    match name.split_once('.') {
        Some((section, field)) => {
            inner.insert(field.to_owned(), value);
            let mut outer = Map::new();
            outer.insert(section.to_owned(), Value::Object(inner));
            Value::Object(outer)
        }
        None => {
            inner.insert(name.to_owned(), value);
            Value::Object(inner)
        }
    }
}

/// serde's message without its position.
fn reason(error: &serde_json::Error) -> String {
    let text = error.to_string();
    text.split(" at line ").next().unwrap_or(&text).to_owned()
}

/// Why `name` cannot be `null`, in the words the settings' own type gives.
fn null_reason(name: &str) -> String {
    if let Ok(mut json) = serde_json::to_value(Settings::default()) {
        if let Some(slot) = json.pointer_mut(&pointer(target(name))) {
            *slot = Value::Null;
            if let Err(e) = serde_json::from_value::<Settings>(json) {
                return reason(&e);
            }
        }
    }
    "a value is needed, not null".to_owned()
}

impl SettingsPatch {
    /// The patch that sets `name` (a dotted name, a shortcut or a section) to `value`, checked
    /// as a profile's value is: an unknown name names the nearest known one; a value of the
    /// wrong type, or `null` for a setting that needs a value, is [`SettingError::Invalid`].
    pub fn one(name: &str, value: Value) -> Result<SettingsPatch, SettingError> {
        if !is_known(name) {
            return Err(SettingError::unknown(name));
        }
        let nested = nest(name, value.clone());
        if let Some(unknown) = check_keys(&nested).into_iter().next() {
            return Err(SettingError::Unknown {
                name: unknown.key,
                nearest: unknown.nearest,
            });
        }
        let invalid = |reason: String| SettingError::Invalid {
            name: name.to_owned(),
            shown: value.to_string(),
            reason,
        };
        let patch: SettingsPatch =
            serde_json::from_value(nested).map_err(|e| invalid(reason(&e)))?;
        // A patch field left `None` by the value changes nothing: `null` for a setting that
        // cannot be "none".
        let empty = match name.split_once('.') {
            Some((section, _)) => nest(section, Value::Object(Map::new())),
            None => Value::Object(Map::new()),
        };
        if serde_json::from_value::<SettingsPatch>(empty).ok().as_ref() == Some(&patch) {
            return Err(invalid(null_reason(name)));
        }
        Ok(patch)
    }
}

impl Settings {
    /// The value of the setting `name` (a dotted name, a shortcut, a section, or a path
    /// inside one such as `computer.sandbox.mode`) as JSON.
    pub fn get(&self, name: &str) -> Result<Value, SettingError> {
        if name == CONVERSATION_FILENAME {
            return Err(SettingError::Runtime {
                name: name.to_owned(),
            });
        }
        if !is_readable(name) {
            return Err(SettingError::unknown(name));
        }
        serde_json::to_value(self)
            .ok()
            .and_then(|json| json.pointer(&pointer(target(name))).cloned())
            .ok_or_else(|| SettingError::unknown(name))
    }

    /// Sets `name` to `value` by the patch rules ([`SettingsPatch::one`]); on an error
    /// nothing changes.
    pub fn set(&mut self, name: &str, value: Value) -> Result<(), SettingError> {
        if name == CONVERSATION_FILENAME {
            return Err(SettingError::Runtime {
                name: name.to_owned(),
            });
        }
        self.apply(&SettingsPatch::one(name, value)?);
        Ok(())
    }

    /// Sets every setting of `object` (a JSON object of settings, sections nested as a
    /// profile writes them), all or nothing; `conversation_filename` (runtime state) is
    /// checked and left to `RuntimeState::apply`. Unknown names are reported before wrong values.
    pub fn set_all(&mut self, object: &Map<String, Value>) -> Result<(), SettingError> {
        let entries = by_name(object);
        if let Some((name, _)) = entries.iter().find(|(name, _)| !is_known(name)) {
            return Err(SettingError::unknown(name));
        }
        let mut settings = self.clone();
        for (name, value) in entries {
            if name == CONVERSATION_FILENAME {
                SettingsPatch::one(&name, value)?;
            } else {
                settings.set(&name, value)?;
            }
        }
        *self = settings;
        Ok(())
    }
}

/// A JSON object of settings as dotted names and values: top-level keys, and each key of an
/// `llm` or `computer` section on its own (`llm.model`, `computer.sandbox`).
pub fn by_name(object: &Map<String, Value>) -> Vec<(String, Value)> {
    let mut entries = Vec::new();
    for (key, value) in object {
        match value {
            Value::Object(section) if SECTIONS.contains(&key.as_str()) => entries.extend(
                section
                    .iter()
                    .map(|(field, value)| (format!("{key}.{field}"), value.clone())),
            ),
            _ => entries.push((key.clone(), value.clone())),
        }
    }
    entries
}

#[cfg(test)]
#[path = "address_tests.rs"]
mod tests;
