//! Reading and writing one setting by its dotted name (`auto_run`, `llm.model`), through the
//! settings' own serde form, so every value is checked by the same rules as a profile and a
//! wrong one is refused with the setting named. `conversation_filename` is runtime state
//! beside the settings (`oi_core::runtime`), read and written here under the same rules.

use oi_core::runtime::CONVERSATION_FILENAME;
use oi_core::{RuntimeState, Settings};
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
    let updated: Settings = serde_json::from_value(json).map_err(|e| refusal(name, &shown, &e))?;
    *settings = updated;
    Ok(())
}

/// Why `name` cannot be `shown`, in serde's words without its position.
fn refusal(name: &str, shown: &str, error: &serde_json::Error) -> String {
    let reason = error.to_string();
    let reason = reason.split(" at line ").next().unwrap_or(&reason);
    format!("`{name}` cannot be {shown}: {reason}")
}

/// The conversation's file name (`None` → `null`).
pub fn get_filename(runtime: &RuntimeState) -> Value {
    runtime
        .conversation_filename
        .clone()
        .map_or(Value::Null, Value::String)
}

/// Sets the conversation's file name: a string or `None`; on an error nothing changes.
pub fn set_filename(runtime: &mut RuntimeState, value: Value) -> Result<(), String> {
    let shown = value.to_string();
    let name: Option<String> =
        serde_json::from_value(value).map_err(|e| refusal(CONVERSATION_FILENAME, &shown, &e))?;
    runtime.conversation_filename = name;
    Ok(())
}
