//! Reading and changing settings over the network (`GET /settings/{name}`,
//! `POST /settings`), with the changes that must not come from the network refused. A setting
//! is read and written by its name through oi-core's one address ([`Settings::get`],
//! [`Settings::set`]: the patch's shortcuts and type checks); what is here is the network's
//! policy on top.

use oi_core::runtime::{CONVERSATION_FILENAME, settings_with_runtime};
use oi_core::settings::{SettingError, SettingsPatch, by_name};
use oi_core::{Message, RuntimeState, Settings};
use serde_json::Value;

/// What network clients may change beyond the ordinary settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NetworkPolicy {
    /// Turning `auto_run` on (flag `--allow-network-auto-run`).
    pub allow_auto_run: bool,
    /// Changing `llm.api_key` / `llm.api_base` (flag `--allow-network-credentials`).
    pub allow_credentials: bool,
}

/// The flag that allows turning `auto_run` on over the network.
pub const AUTO_RUN_FLAG: &str = "--allow-network-auto-run";
/// The flag that allows changing the model's key and base URL over the network.
pub const CREDENTIALS_FLAG: &str = "--allow-network-credentials";

/// Why a settings change was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The body is not a JSON object.
    #[error("the settings must be a JSON object, e.g. {{\"custom_instructions\": \"...\"}}")]
    NotAnObject,
    /// No such setting.
    #[error("Setting {0} not found")]
    Unknown(String),
    /// The value does not fit the setting.
    #[error("invalid value for {key}: {reason}")]
    Invalid {
        /// The setting.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// The setting must not be changed this way over the network, whatever the flags.
    #[error("{key}: {reason}")]
    Refused {
        /// The setting.
        key: &'static str,
        /// Why.
        reason: &'static str,
    },
    /// The setting must not be changed over the network.
    #[error("{key} cannot be changed over the network unless the server is started with {flag}")]
    Forbidden {
        /// The setting.
        key: &'static str,
        /// The server flag that would allow it.
        flag: &'static str,
    },
}

/// The result of a valid patch.
#[derive(Debug, Clone, PartialEq)]
pub struct Patched {
    /// The new settings.
    pub settings: Settings,
    /// The new conversation, if the patch set `messages`.
    pub messages: Option<Vec<Message>>,
}

const REDACTED: &str = "********";

/// The settings as JSON, with the runtime state shown among them (`conversation_filename`)
/// and the API key redacted.
pub fn settings_json(settings: &Settings, runtime: &RuntimeState) -> Value {
    let mut value = settings_with_runtime(settings, runtime);
    if let Some(key) = value.pointer_mut("/llm/api_key").filter(|k| !k.is_null()) {
        *key = Value::String(REDACTED.to_owned());
    }
    value
}

/// The value of setting `name` (`messages`, a setting, a section such as `llm`, or a path
/// inside one), the API key redacted.
pub fn get_setting(
    settings: &Settings,
    runtime: &RuntimeState,
    messages: &[Message],
    name: &str,
) -> Option<Value> {
    if name == "messages" {
        return serde_json::to_value(messages).ok();
    }
    if name == CONVERSATION_FILENAME {
        return settings_with_runtime(settings, runtime)
            .get(CONVERSATION_FILENAME)
            .cloned();
    }
    let mut shown = settings.clone();
    if shown.llm.api_key.is_some() {
        shown.llm.api_key = Some(REDACTED.to_owned());
    }
    shown.get(name).ok()
}

/// A refusal of oi-core's setter, as the network reports it.
fn refusal(error: SettingError) -> PatchError {
    match error {
        SettingError::Unknown { name, .. } | SettingError::Runtime { name } => {
            PatchError::Unknown(name)
        }
        SettingError::Invalid { name, reason, .. } => PatchError::Invalid { key: name, reason },
    }
}

/// The conversation `messages` of a patch.
fn parse_messages(list: Value) -> Result<Vec<Message>, PatchError> {
    serde_json::from_value(list).map_err(|e| PatchError::Invalid {
        key: "messages".to_owned(),
        reason: e.to_string(),
    })
}

/// Whether a `conversation_filename` in a patch names another file than the runtime's.
fn moves_file(value: Option<&Value>, runtime: &RuntimeState) -> Result<bool, PatchError> {
    let Some(value) = value else {
        return Ok(false);
    };
    let patch = SettingsPatch::one(CONVERSATION_FILENAME, value.clone()).map_err(refusal)?;
    Ok(patch
        .conversation_filename
        .is_some_and(|name| name != runtime.conversation_filename))
}

/// Applies `patch` (a JSON object of settings, as `POST /settings` sends it) to `current`, all
/// or nothing. `runtime` is the conversation's runtime state, which a patch may name
/// (`conversation_filename`) but never change.
pub fn apply_patch(
    current: &Settings,
    runtime: &RuntimeState,
    patch: &Value,
    policy: NetworkPolicy,
) -> Result<Patched, PatchError> {
    let Some(object) = patch.as_object() else {
        return Err(PatchError::NotAnObject);
    };
    let mut object = object.clone();
    let messages = object.remove("messages").map(parse_messages).transpose()?;
    let mut settings = current.clone();
    settings.set_all(&object).map_err(refusal)?;
    let moves_file = moves_file(object.get(CONVERSATION_FILENAME), runtime)?;
    let settings = checked(current, settings, moves_file, policy)?;
    Ok(Patched { settings, messages })
}

/// `new` (`current` with a patch applied) once what the network may not change is checked,
/// and the model's key bound to where the model now is.
fn checked(
    current: &Settings,
    mut new: Settings,
    moves_file: bool,
    policy: NetworkPolicy,
) -> Result<Settings, PatchError> {
    settle_workspace(current, &mut new)?;
    check_fixed(current, &new, moves_file)?;
    check_policy(current, &new, policy)?;
    rebind_key(current, &mut new, policy);
    Ok(new)
}

/// Sets the one setting `name` (or the conversation, for `messages`) under the same rules as
/// [`apply_patch`].
fn apply_one(
    current: &Settings,
    runtime: &RuntimeState,
    name: &str,
    value: Value,
    policy: NetworkPolicy,
) -> Result<Patched, PatchError> {
    if name == "messages" {
        return Ok(Patched {
            settings: current.clone(),
            messages: Some(parse_messages(value)?),
        });
    }
    let mut settings = current.clone();
    let moves = if name == CONVERSATION_FILENAME {
        moves_file(Some(&value), runtime)?
    } else {
        settings.set(name, value).map_err(refusal)?;
        false
    };
    let settings = checked(current, settings, moves, policy)?;
    Ok(Patched {
        settings,
        messages: None,
    })
}

/// What a patch applied key by key did.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The settings with every accepted key applied.
    pub settings: Settings,
    /// The new conversation, if the patch set `messages` (and it was valid).
    pub messages: Option<Vec<Message>>,
    /// The keys applied (`llm.model`, `custom_instructions`, …).
    pub applied: Vec<String>,
    /// The keys refused, each with why; nothing of them was applied.
    pub refused: Vec<(String, PatchError)>,
}

/// Applies `patch` to `current` key by key (each key of the `llm` and `computer` sections on
/// its own: `llm.model`, `llm.api_base`, …), each under the rules of [`apply_patch`]: a
/// refused key is named with its reason and the others are applied. The result as a whole
/// is checked against `current` once more.
pub fn apply_each(
    current: &Settings,
    runtime: &RuntimeState,
    patch: &Value,
    policy: NetworkPolicy,
) -> Result<Applied, PatchError> {
    let Some(object) = patch.as_object() else {
        return Err(PatchError::NotAnObject);
    };
    let mut settings = current.clone();
    let mut messages = None;
    let (mut applied, mut refused) = (Vec::new(), Vec::new());
    for (key, value) in by_name(object) {
        match apply_one(&settings, runtime, &key, value, policy) {
            Ok(patched) => {
                settings = patched.settings;
                messages = patched.messages.or(messages);
                applied.push(key);
            }
            Err(e) => refused.push((key, e)),
        }
    }
    // Each step only tightened what it touched; the whole must hold against the start too.
    if let Err(e) = check_policy(current, &settings, policy) {
        refused.extend(applied.drain(..).map(|key| (key, e.clone())));
        settings = current.clone();
        messages = None;
    }
    Ok(Applied {
        settings,
        messages,
        applied,
        refused,
    })
}

/// A workspace changed over the network must be an existing directory; it is kept in its
/// canonical form (no `..`, no links), the form the "only stricter" check compares.
fn settle_workspace(old: &Settings, new: &mut Settings) -> Result<(), PatchError> {
    let workspace = &mut new.computer.sandbox.workspace;
    if *workspace == old.computer.sandbox.workspace {
        return Ok(());
    }
    match workspace.canonicalize() {
        Ok(real) if real.is_dir() => {
            *workspace = real;
            Ok(())
        }
        _ => Err(PatchError::Refused {
            key: "sandbox",
            reason: "a workspace set over the network must be an existing directory",
        }),
    }
}

/// With `--allow-network-credentials`, a client that moves the model (model, base or key)
/// moves the server's key with it: the key is bound to the new endpoint. Without the flag
/// the binding stays, so the server's key is not sent to wherever the client pointed the
/// model (oi_llm::key_binding).
fn rebind_key(old: &Settings, new: &mut Settings, policy: NetworkPolicy) {
    let (before, after) = (&old.llm, &new.llm);
    let moved = before.model != after.model
        || before.api_base != after.api_base
        || before.api_key != after.api_key;
    if policy.allow_credentials && moved && before.api_key_for.is_some() {
        oi_llm::key_binding::bind_key(&mut new.llm, &oi_llm::Env::from_process());
    }
}

/// How permissive an approval policy is.
fn looseness(policy: oi_core::ApprovalPolicy) -> u8 {
    match policy {
        oi_core::ApprovalPolicy::NeverRun => 0,
        oi_core::ApprovalPolicy::AlwaysAsk => 1,
        oi_core::ApprovalPolicy::Auto => 2,
    }
}

/// The first approval setting that `new` loosens compared with `old`, if any.
fn loosened_approval(old: &Settings, new: &Settings) -> Option<&'static str> {
    if new.auto_run && !old.auto_run {
        return Some("auto_run");
    }
    if looseness(new.approval_policy) > looseness(old.approval_policy) {
        return Some("approval_policy");
    }
    if new.allow.iter().any(|rule| !old.allow.contains(rule)) {
        return Some("allow");
    }
    if old.deny.iter().any(|rule| !new.deny.contains(rule)) {
        return Some("deny");
    }
    if old.hard_deny && !new.hard_deny {
        return Some("hard_deny");
    }
    None
}

/// What a network client may never change, whatever the server's flags: the sandbox and
/// the limits may only get stricter, and where conversations are written stays where the
/// server's owner put it (`moves_file`: the patch names another conversation file).
fn check_fixed(old: &Settings, new: &Settings, moves_file: bool) -> Result<(), PatchError> {
    let (before, after) = (&old.computer, &new.computer);
    if before.sandbox.is_loosened_by(&after.sandbox) {
        return Err(PatchError::Refused {
            key: "sandbox",
            reason: "the server's sandbox can only be made stricter over the network",
        });
    }
    let raised = |old: Option<u64>, new: Option<u64>| match (old, new) {
        (Some(old), Some(new)) => new > old,
        (Some(_), None) => true,
        (None, _) => false,
    };
    let (l, m) = (before.limits, after.limits);
    if raised(
        l.max_processes.map(u64::from),
        m.max_processes.map(u64::from),
    ) || raised(l.max_memory_bytes, m.max_memory_bytes)
        || raised(l.max_cpu_seconds, m.max_cpu_seconds)
    {
        return Err(PatchError::Refused {
            key: "limits",
            reason: "the server's resource limits can only be lowered over the network",
        });
    }
    if old.conversation_history_path != new.conversation_history_path || moves_file {
        return Err(PatchError::Refused {
            key: "conversation_history_path",
            reason: "where the server writes conversations cannot be changed over the network",
        });
    }
    Ok(())
}

fn check_policy(old: &Settings, new: &Settings, policy: NetworkPolicy) -> Result<(), PatchError> {
    check_fixed(old, new, false)?;
    if !policy.allow_auto_run {
        if let Some(key) = loosened_approval(old, new) {
            return Err(PatchError::Forbidden {
                key,
                flag: AUTO_RUN_FLAG,
            });
        }
    }
    if !policy.allow_credentials {
        if new.llm.api_key != old.llm.api_key {
            return Err(PatchError::Forbidden {
                key: "llm.api_key",
                flag: CREDENTIALS_FLAG,
            });
        }
        if new.llm.api_base != old.llm.api_base {
            return Err(PatchError::Forbidden {
                key: "llm.api_base",
                flag: CREDENTIALS_FLAG,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "settings_patch_tests.rs"]
mod tests;
