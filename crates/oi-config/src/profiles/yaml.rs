//! Reading a YAML (or JSON) profile into a settings patch: the original's keys, unknown keys
//! warned about (with their line) and skipped, wrong types refused with the line and key.

use oi_core::settings::{SettingsPatch, check_keys};
use serde_json::Value;

use super::{MAX_PROFILE_NESTING, ProfileError, ProfileNote, nesting};

/// Keys a profile may carry that set nothing in oi: the original's profile `version` and the
/// settings of its separate `wtf` command.
/// `mcp_servers` is read apart ([`mcp_servers`]): it sets no setting but the MCP servers oi
/// connects to.
const IGNORED_KEYS: &[&str] = &["version", "wtf", "mcp_servers"];

/// The profile's `mcp_servers:` map (name to `{command, args, env}` or `{url, headers}`), as
/// written; `None` when it has none or cannot be read (then [`read`] says why).
pub fn mcp_servers(text: &str, origin: &str) -> Option<Value> {
    let tree: Value = if origin.ends_with(".json") {
        serde_json::from_str(text).ok()?
    } else {
        let yaml: serde_norway::Value = serde_norway::from_str(text).ok()?;
        serde_json::to_value(yaml).ok()?
    };
    tree.get("mcp_servers").filter(|v| !v.is_null()).cloned()
}

/// The 1-based line where `key` (a top-level key, or `section.key`) is written, if found.
fn line_of(text: &str, key: &str) -> Option<usize> {
    let (section, name) = match key.split_once('.') {
        Some((section, name)) => (Some(section), name),
        None => (None, key),
    };
    let mut in_section = section.is_none();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indented = trimmed.len() != line.len();
        let key_here = trimmed
            .strip_prefix(name)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
            || trimmed
                .strip_prefix(&format!("\"{name}\""))
                .is_some_and(|rest| rest.trim_start().starts_with(':'));
        if let Some(section) = section {
            if !indented && !trimmed.is_empty() && !trimmed.starts_with('#') {
                in_section = trimmed.starts_with(section);
            }
            if in_section && indented && key_here {
                return Some(index + 1);
            }
        } else if !indented && key_here {
            return Some(index + 1);
        }
    }
    None
}

/// Parses a YAML or JSON profile `text` (named `origin` in messages).
pub fn read(text: &str, origin: &str) -> Result<(SettingsPatch, Vec<ProfileNote>), ProfileError> {
    let error = |message: String| ProfileError(format!("profile {origin}: {message}"));
    nesting::check(text, MAX_PROFILE_NESTING).map_err(|deep| {
        error(format!(
            "line {}: nested more than {} levels deep. Profiles need two or three levels (`llm:` and its keys); check that this is the profile you meant.",
            deep.line, deep.limit
        ))
    })?;
    let json = origin.ends_with(".json");
    let tree: Value = if json {
        serde_json::from_str(text).map_err(|e| error(e.to_string()))?
    } else {
        let yaml: Option<serde_norway::Value> =
            serde_norway::from_str(text).map_err(|e| error(e.to_string()))?;
        serde_json::to_value(yaml).map_err(|e| error(e.to_string()))?
    };
    let mut tree = match tree {
        Value::Null => return Ok((SettingsPatch::default(), Vec::new())),
        Value::Object(map) => map,
        other => {
            return Err(error(format!(
                "a profile is a mapping of settings (`llm:`, `auto_run: true`, …), not {other}"
            )));
        }
    };
    for key in IGNORED_KEYS {
        tree.remove(*key);
    }
    let mut notes = Vec::new();
    for unknown in check_keys(&Value::Object(tree.clone())) {
        notes.push(ProfileNote {
            line: line_of(text, &unknown.key),
            text: format!("{unknown}; skipped"),
        });
    }
    // Type errors come from parsing the text itself, so they name the line and column.
    let patch: SettingsPatch = if json {
        serde_json::from_str(text).map_err(|e| error(e.to_string()))?
    } else {
        serde_norway::from_str::<Option<SettingsPatch>>(text)
            .map(Option::unwrap_or_default)
            .map_err(|e| error(e.to_string()))?
    };
    Ok((patch, notes))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn unknown_keys_are_noted_with_their_line_and_skipped() {
        let (patch, notes) = read(
            "version: 0.2.5\nllm:\n  model: gpt-4o\n  modle: x\nauto_run: true\nspeak_messages: true\n",
            "my.yaml",
        )
        .unwrap();
        assert_eq!(patch.llm.and_then(|l| l.model).as_deref(), Some("gpt-4o"));
        assert_eq!(patch.auto_run, Some(true));
        let shown: Vec<String> = notes.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "line 4: unknown setting `llm.modle` (did you mean `llm.model`?); skipped",
                "line 6: unknown setting `speak_messages`; skipped",
            ]
        );
    }

    #[test]
    fn bad_types_name_the_file_line_and_key() {
        let error = read("auto_run: sometimes\n", "p.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("p.yaml") && error.contains("auto_run") && error.contains("line 1"),
            "{error}"
        );
        let error = read("llm:\n  model: gpt-4o\n  temperature: hot\n", "p.yaml")
            .unwrap_err()
            .to_string();
        assert!(error.contains("line 3"), "{error}");
    }
}
