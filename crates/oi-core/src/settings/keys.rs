//! Which setting names exist: for profiles (an unknown key is warned about and skipped) and
//! network clients (an unknown key is refused), with the nearest known name as a hint.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use serde::Serialize;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::Settings;

/// Runtime state shown among the settings (`crate::runtime::CONVERSATION_FILENAME`, not
/// imported: the runtime module builds on this one).
pub(crate) const CONVERSATION_FILENAME: &str = "conversation_filename";

/// The sections of the settings (whose keys are checked one level down): a dotted name
/// addresses a field inside one (`llm.model`).
pub const SECTIONS: &[&str] = &["llm", "computer"];

/// The shortcut names a patch accepts besides [`Settings::names`], each with the setting it
/// reads (writing one follows the patch's rule: `pass_env` adds names, the others replace).
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("sandbox", "computer.sandbox"),
    ("limits", "computer.limits"),
    ("pass_env", "computer.sandbox.pass_env"),
    ("computer.pass_env", "computer.sandbox.pass_env"),
    ("computer.import_computer_api", "import_computer_api"),
    ("computer.offline", "offline"),
    ("computer.verbose", "verbose"),
];

/// Collects an object's keys in the order they are written (serde_json's own map is sorted).
struct KeysInOrder;

impl<'de> Visitor<'de> for KeysInOrder {
    type Value = Vec<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
        let mut keys = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            map.next_value::<IgnoredAny>()?;
            keys.push(key);
        }
        Ok(keys)
    }
}

/// The serialised field names of `value`, in declaration order.
fn field_names<T: Serialize>(value: &T) -> Vec<String> {
    let Ok(text) = serde_json::to_string(value) else {
        return Vec::new();
    };
    let mut reader = serde_json::Deserializer::from_str(&text);
    serde::Deserializer::deserialize_map(&mut reader, KeysInOrder).unwrap_or_default()
}

impl Settings {
    /// Every setting's dotted name, once, in the order the settings list them
    /// (`auto_run`, …, `llm.model`, …, `computer.sandbox`, `computer.limits`), with
    /// `conversation_filename` (runtime state shown among them). [`SHORTCUTS`] and
    /// [`SECTIONS`] are addressable too.
    pub fn names() -> &'static [String] {
        static NAMES: OnceLock<Vec<String>> = OnceLock::new();
        NAMES.get_or_init(|| {
            let defaults = Settings::default();
            let mut names = Vec::new();
            for key in field_names(&defaults) {
                let fields = match key.as_str() {
                    "llm" => field_names(&defaults.llm),
                    "computer" => field_names(&defaults.computer),
                    _ => {
                        let then_filename = key == "conversation_history_path";
                        names.push(key);
                        if then_filename {
                            names.push(CONVERSATION_FILENAME.to_owned());
                        }
                        continue;
                    }
                };
                names.extend(fields.into_iter().map(|field| format!("{key}.{field}")));
            }
            names
        })
    }
}

/// Every key a settings patch understands, dotted for sections (`llm.model`): the settings'
/// names ([`Settings::names`]), their sections and the patch's shortcuts.
pub fn known_keys() -> BTreeSet<String> {
    let mut keys: BTreeSet<String> = Settings::names().iter().cloned().collect();
    keys.extend(SECTIONS.iter().map(|k| (*k).to_owned()));
    keys.extend(SHORTCUTS.iter().map(|(k, _)| (*k).to_owned()));
    keys
}

/// An unknown key in a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError {
    /// The key as written, dotted for sections (`llm.modle`).
    pub key: String,
    /// The known key it most resembles, if one is close.
    pub nearest: Option<String>,
}

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown setting `{}`", self.key)?;
        if let Some(nearest) = &self.nearest {
            write!(f, " (did you mean `{nearest}`?)")?;
        }
        Ok(())
    }
}

/// The unknown keys of `patch` (a JSON object of settings), in order of appearance.
pub fn check_keys(patch: &Value) -> Vec<KeyError> {
    let known = known_keys();
    let Value::Object(top) = patch else {
        return Vec::new();
    };
    let mut unknown = Vec::new();
    for (key, value) in top {
        if !known.contains(key) {
            unknown.push(key.clone());
            continue;
        }
        if let (true, Value::Object(section)) = (SECTIONS.contains(&key.as_str()), value) {
            unknown.extend(
                section
                    .keys()
                    .map(|sub| format!("{key}.{sub}"))
                    .filter(|dotted| !known.contains(dotted)),
            );
        }
    }
    unknown
        .into_iter()
        .map(|key| KeyError {
            nearest: nearest(&key, &known),
            key,
        })
        .collect()
}

/// The known key closest to `key` by edit distance, when it is close enough to be a typo.
pub(crate) fn nearest(key: &str, known: &BTreeSet<String>) -> Option<String> {
    known
        .iter()
        .map(|candidate| (edit_distance(key, candidate), candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).max(2))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate.clone())
}

/// Levenshtein distance over characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_named_with_the_nearest_known_one() {
        let patch = serde_json::json!({
            "auto_run": true,
            "custom_instructon": "x",
            "llm": {"modle": "gpt-4o", "model": "gpt-4o"},
            "sandbox": "workspace",
            "nonsense_key_here": 1
        });
        let errors = check_keys(&patch);
        let shown: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "unknown setting `custom_instructon` (did you mean `custom_instructions`?)",
                "unknown setting `llm.modle` (did you mean `llm.model`?)",
                "unknown setting `nonsense_key_here`",
            ]
        );
        assert!(known_keys().contains("llm.api_base") && known_keys().contains("loop"));
    }
}
