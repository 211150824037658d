//! Reading and writing one setting by its dotted name (`auto_run`, `llm.model`), through the
//! settings' own serde form, so every value is checked by the same rules as a profile and a
//! wrong one is refused with the setting named.

use oi_core::Settings;
use serde_json::Value;

/// The JSON pointer of a dotted setting name (`llm.model` → `/llm/model`).
fn pointer(name: &str) -> String {
    name.split('.').fold(String::new(), |mut out, part| {
        out.push('/');
        out.push_str(part);
        out
    })
}

/// The value of setting `name`, or `None` when there is no such setting.
pub fn get(settings: &Settings, name: &str) -> Option<Value> {
    let json = serde_json::to_value(settings).ok()?;
    json.pointer(&pointer(name)).cloned()
}

/// Sets `name` to `value`; on an error nothing changes and the message says what was wrong.
pub fn set(settings: &mut Settings, name: &str, value: Value) -> Result<(), String> {
    let mut json =
        serde_json::to_value(&*settings).map_err(|e| format!("settings unreadable: {e}"))?;
    let Some(slot) = json.pointer_mut(&pointer(name)) else {
        return Err(format!("there is no setting `{name}`"));
    };
    let shown = value.to_string();
    *slot = value;
    let updated: Settings = serde_json::from_value(json).map_err(|e| {
        let reason = e.to_string();
        let reason = reason
            .split(" at line ")
            .next()
            .unwrap_or(&reason)
            .to_owned();
        format!("`{name}` cannot be {shown}: {reason}")
    })?;
    *settings = updated;
    Ok(())
}
