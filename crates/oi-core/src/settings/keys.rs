//! Which setting names exist: for profiles (an unknown key is warned about and skipped) and
//! network clients (an unknown key is refused), with the nearest known name as a hint.

use std::collections::BTreeSet;

use serde_json::Value;

use super::Settings;

/// Keys a patch accepts besides the settings' own (the original's spellings and `oi`'s
/// top-level shortcuts).
const EXTRA_KEYS: &[&str] = &[
    // Runtime state shown among the settings (crate::runtime), as the original has it.
    "conversation_filename",
    "sandbox",
    "limits",
    "pass_env",
    "computer.import_computer_api",
    "computer.offline",
    "computer.verbose",
    "computer.pass_env",
];

/// Sections whose keys are checked one level down.
const SECTIONS: &[&str] = &["llm", "computer"];

/// Every key a settings patch understands, dotted for sections (`llm.model`).
pub fn known_keys() -> BTreeSet<String> {
    let mut keys: BTreeSet<String> = EXTRA_KEYS.iter().map(|k| (*k).to_owned()).collect();
    if let Ok(Value::Object(settings)) = serde_json::to_value(Settings::default()) {
        for (key, value) in &settings {
            match value {
                Value::Object(section) if SECTIONS.contains(&key.as_str()) => {
                    keys.insert(key.clone());
                    keys.extend(section.keys().map(|sub| format!("{key}.{sub}")));
                }
                _ => {
                    keys.insert(key.clone());
                }
            }
        }
    }
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
fn nearest(key: &str, known: &BTreeSet<String>) -> Option<String> {
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
