//! Reading and writing one setting by its dotted name (`auto_run`, `llm.model`) for the Python
//! attributes, through oi-core's one address ([`Settings::get`], [`Settings::set`]): the same
//! names, shortcuts and checks as a profile and the server, a wrong value refused with the
//! setting named. `conversation_filename` is runtime state beside the settings
//! (`oi_core::runtime`), read and written here under the same rules.

use oi_core::runtime::CONVERSATION_FILENAME;
use oi_core::settings::SettingsPatch;
use oi_core::{RuntimeState, Settings};
use serde_json::Value;

/// The value of setting `name`, or `None` when there is no such setting.
pub fn get(settings: &Settings, name: &str) -> Option<Value> {
    settings.get(name).ok()
}

/// Sets `name` to `value`; on an error nothing changes and the message says what was wrong.
pub fn set(settings: &mut Settings, name: &str, value: Value) -> Result<(), String> {
    settings.set(name, value).map_err(|e| e.to_string())
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
    let patch = SettingsPatch::one(CONVERSATION_FILENAME, value).map_err(|e| e.to_string())?;
    runtime.apply(&patch);
    Ok(())
}
