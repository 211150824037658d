//! Reading and changing settings over the network (`GET /settings/{name}`,
//! `POST /settings`), with the changes that must not come from the network refused.

use oi_core::runtime::settings_with_runtime;
use oi_core::settings::{SettingsPatch, check_keys};
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

/// The value of setting `name` (`messages`, a top-level setting, `llm`, or `llm.model`).
pub fn get_setting(
    settings: &Settings,
    runtime: &RuntimeState,
    messages: &[Message],
    name: &str,
) -> Option<Value> {
    if name == "messages" {
        return serde_json::to_value(messages).ok();
    }
    let all = settings_json(settings, runtime);
    let pointer = format!("/{}", name.replace('.', "/"));
    all.pointer(&pointer).cloned()
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
    let messages =
        match object.remove("messages") {
            Some(list) => Some(serde_json::from_value::<Vec<Message>>(list).map_err(|e| {
                PatchError::Invalid {
                    key: "messages".to_owned(),
                    reason: e.to_string(),
                }
            })?),
            None => None,
        };
    let object = Value::Object(object);
    if let Some(unknown) = check_keys(&object).into_iter().next() {
        return Err(PatchError::Unknown(unknown.key));
    }
    let changes: SettingsPatch =
        serde_json::from_value(object.clone()).map_err(|e| PatchError::Invalid {
            key: object
                .as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>().join(", "))
                .unwrap_or_default(),
            reason: e.to_string(),
        })?;
    let mut settings = current.patched(&changes);
    settle_workspace(current, &mut settings)?;
    let moves_file = changes
        .conversation_filename
        .as_ref()
        .is_some_and(|name| *name != runtime.conversation_filename);
    check_fixed(current, &settings, moves_file)?;
    check_policy(current, &settings, policy)?;
    rebind_key(current, &mut settings, policy);
    Ok(Patched { settings, messages })
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

/// The patch split into one patch per key: top-level keys, and each key of the `llm` and
/// `computer` sections on its own (`llm.model`, `llm.api_base`, …).
fn single_keys(object: &serde_json::Map<String, Value>) -> Vec<(String, Value)> {
    let mut keys = Vec::new();
    for (key, value) in object {
        match value {
            Value::Object(section) if matches!(key.as_str(), "llm" | "computer") => {
                for (sub, sub_value) in section {
                    let mut one = serde_json::Map::new();
                    one.insert(sub.clone(), sub_value.clone());
                    let mut outer = serde_json::Map::new();
                    outer.insert(key.clone(), Value::Object(one));
                    keys.push((format!("{key}.{sub}"), Value::Object(outer)));
                }
            }
            _ => {
                let mut one = serde_json::Map::new();
                one.insert(key.clone(), value.clone());
                keys.push((key.clone(), Value::Object(one)));
            }
        }
    }
    keys
}

/// Applies `patch` to `current` key by key, each key through [`apply_patch`] (the same
/// rules): a refused key is named with its reason and the others are applied. The result as
/// a whole is checked against `current` once more.
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
    for (key, one) in single_keys(object) {
        match apply_patch(&settings, runtime, &one, policy) {
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
