//! Reading and changing settings over the network (`GET /settings/{name}`,
//! `POST /settings`), with the changes that must not come from the network refused.

use oi_core::settings::{SettingsPatch, check_keys};
use oi_core::{Message, Settings};
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

/// The settings as JSON, with the API key redacted.
pub fn settings_json(settings: &Settings) -> Value {
    let mut value = serde_json::to_value(settings).unwrap_or(Value::Null);
    if let Some(key) = value.pointer_mut("/llm/api_key").filter(|k| !k.is_null()) {
        *key = Value::String(REDACTED.to_owned());
    }
    value
}

/// The value of setting `name` (`messages`, a top-level setting, `llm`, or `llm.model`).
pub fn get_setting(settings: &Settings, messages: &[Message], name: &str) -> Option<Value> {
    if name == "messages" {
        return serde_json::to_value(messages).ok();
    }
    let all = settings_json(settings);
    let pointer = format!("/{}", name.replace('.', "/"));
    all.pointer(&pointer).cloned()
}

/// Applies `patch` (a JSON object of settings, as `POST /settings` sends it) to `current`, all
/// or nothing.
pub fn apply_patch(
    current: &Settings,
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
        match apply_patch(&settings, &one, policy) {
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
/// server's owner put it.
fn check_fixed(old: &Settings, new: &Settings) -> Result<(), PatchError> {
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
    if old.conversation_history_path != new.conversation_history_path
        || old.conversation_filename != new.conversation_filename
    {
        return Err(PatchError::Refused {
            key: "conversation_history_path",
            reason: "where the server writes conversations cannot be changed over the network",
        });
    }
    Ok(())
}

fn check_policy(old: &Settings, new: &Settings, policy: NetworkPolicy) -> Result<(), PatchError> {
    check_fixed(old, new)?;
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
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn patch(value: Value) -> Result<Patched, PatchError> {
        apply_patch(&Settings::default(), &value, NetworkPolicy::default())
    }

    #[test]
    fn sets_plain_and_nested_settings() {
        let patched =
            patch(json!({"custom_instructions": "be brief", "llm": {"model": "gpt-4o-mini"}}))
                .unwrap();
        assert_eq!(patched.settings.custom_instructions, "be brief");
        assert_eq!(patched.settings.llm.model, "gpt-4o-mini");
        assert_eq!(patched.settings.llm.temperature, 0.0);
    }

    #[test]
    fn refuses_unknown_and_bad_values() {
        assert_eq!(
            patch(json!({"nope": 1})),
            Err(PatchError::Unknown("nope".into()))
        );
        assert_eq!(
            patch(json!({"llm": {"nope": 1}})),
            Err(PatchError::Unknown("llm.nope".into()))
        );
        assert!(matches!(
            patch(json!({"max_output": "lots"})),
            Err(PatchError::Invalid { .. })
        ));
        assert_eq!(patch(json!([1])), Err(PatchError::NotAnObject));
    }

    #[test]
    fn refuses_loosening_approval_but_allows_tightening() {
        for (patch_json, key) in [
            (json!({"approval_policy": "auto"}), "approval_policy"),
            (json!({"allow": ["rm "]}), "allow"),
            (json!({"hard_deny": false}), "hard_deny"),
        ] {
            assert!(
                matches!(patch(patch_json.clone()), Err(PatchError::Forbidden { key: k, .. }) if k == key),
                "{patch_json}"
            );
        }
        assert!(patch(json!({"approval_policy": "never-run", "deny": ["curl"]})).is_ok());
    }

    #[test]
    fn refuses_auto_run_and_credentials_unless_allowed() {
        let err = patch(json!({"auto_run": true})).unwrap_err();
        assert!(err.to_string().contains(AUTO_RUN_FLAG));
        assert!(patch(json!({"auto_run": false})).is_ok());
        assert!(matches!(
            patch(json!({"llm": {"api_key": "x"}})),
            Err(PatchError::Forbidden {
                key: "llm.api_key",
                ..
            })
        ));
        let open = NetworkPolicy {
            allow_auto_run: true,
            allow_credentials: true,
        };
        let ok = apply_patch(
            &Settings::default(),
            &json!({"auto_run": true, "llm": {"api_base": "http://x"}}),
            open,
        )
        .unwrap();
        assert!(ok.settings.auto_run);
    }

    #[test]
    fn the_sandbox_limits_and_conversation_path_only_tighten_whatever_the_flags() {
        let mut server = Settings::default();
        server.computer.sandbox.mode = oi_core::settings::SandboxMode::Workspace;
        server.computer.limits.max_processes = Some(64);
        let open = NetworkPolicy {
            allow_auto_run: true,
            allow_credentials: true,
        };
        let refused = |patch: Value| match apply_patch(&server, &patch, open) {
            Err(PatchError::Refused { key, .. }) => key,
            other => panic!("{patch}: {other:?}"),
        };
        assert_eq!(refused(json!({"sandbox": "off"})), "sandbox");
        assert_eq!(
            refused(json!({"sandbox": {"network": true, "mode": "workspace", "pass_env": ["X"]}})),
            "sandbox"
        );
        assert_eq!(
            refused(json!({"limits": {"max_processes": 1000}})),
            "limits"
        );
        assert_eq!(
            refused(json!({"conversation_history_path": "/etc"})),
            "conversation_history_path"
        );
        let tighter = apply_patch(
            &server,
            &json!({"sandbox": "readonly", "limits": {"max_processes": 8}, "deny_network": null}),
            open,
        );
        assert!(matches!(tighter, Err(PatchError::Unknown(ref k)) if k == "deny_network"));
        let tighter = apply_patch(
            &server,
            &json!({"sandbox": "readonly", "limits": {"max_processes": 8}}),
            open,
        )
        .unwrap();
        assert_eq!(
            tighter.settings.computer.sandbox.mode,
            oi_core::settings::SandboxMode::ReadOnly
        );
        assert_eq!(tighter.settings.computer.limits.max_processes, Some(8));
    }

    #[test]
    fn a_patch_applies_key_by_key_and_names_each_refusal() {
        let applied = apply_each(
            &Settings::default(),
            &json!({
                "auto_run": true,
                "custom_instructions": "be brief",
                "llm": {"model": "gpt-4o-mini", "api_base": "http://evil"},
                "messages": [{"role": "user", "type": "message", "content": "hi"}],
            }),
            NetworkPolicy::default(),
        )
        .unwrap();
        assert_eq!(applied.settings.custom_instructions, "be brief");
        assert_eq!(applied.settings.llm.model, "gpt-4o-mini");
        assert!(!applied.settings.auto_run);
        assert_eq!(applied.settings.llm.api_base, None);
        assert_eq!(applied.messages, Some(vec![Message::user("hi")]));
        let refused: Vec<&str> = applied.refused.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(refused, ["auto_run", "llm.api_base"]);
        assert!(applied.refused[0].1.to_string().contains(AUTO_RUN_FLAG));
    }

    #[test]
    fn a_workspace_from_the_network_is_an_existing_directory_beneath_the_servers() {
        let top = tempfile::tempdir().unwrap();
        let work = top.path().join("w");
        std::fs::create_dir_all(work.join("sub")).unwrap();
        std::os::unix::fs::symlink("/", work.join("out")).unwrap();
        let mut server = Settings::default();
        server.computer.sandbox.mode = oi_core::settings::SandboxMode::Workspace;
        server.computer.sandbox.workspace = work.clone();
        let open = NetworkPolicy {
            allow_auto_run: true,
            allow_credentials: true,
        };
        for out in [
            format!("{}/../../..", work.display()),
            format!("{}/sub/../..", work.display()),
            format!("{}/out", work.display()),
            format!("{}/out/tmp", work.display()),
            format!("{}/missing", work.display()),
        ] {
            let patched = apply_patch(&server, &json!({"sandbox": {"workspace": out}}), open);
            assert!(
                matches!(patched, Err(PatchError::Refused { key: "sandbox", .. })),
                "{out}: {patched:?}"
            );
        }
        let inner = format!("{}/sub/.", work.display());
        let patched =
            apply_patch(&server, &json!({"sandbox": {"workspace": inner}}), open).unwrap();
        assert_eq!(
            patched.settings.computer.sandbox.workspace,
            work.join("sub").canonicalize().unwrap()
        );
    }

    #[test]
    fn moving_the_model_keeps_the_key_bound_unless_credentials_may_move() {
        let mut server = Settings::default();
        server.llm.api_key = Some("sk".into());
        server.llm.api_key_for = Some("https://api.openai.com/v1".into());
        let moved = apply_patch(
            &server,
            &json!({"llm": {"model": "ollama/x"}}),
            NetworkPolicy::default(),
        )
        .unwrap();
        assert_eq!(moved.settings.llm.model, "ollama/x");
        assert_eq!(
            moved.settings.llm.api_key_for.as_deref(),
            Some("https://api.openai.com/v1")
        );
        let open = NetworkPolicy {
            allow_auto_run: false,
            allow_credentials: true,
        };
        let moved = apply_patch(&server, &json!({"llm": {"model": "ollama/x"}}), open).unwrap();
        assert_ne!(
            moved.settings.llm.api_key_for.as_deref(),
            Some("https://api.openai.com/v1")
        );
    }

    #[test]
    fn messages_and_getters() {
        let patched =
            patch(json!({"messages": [{"role": "user", "type": "message", "content": "hi"}]}))
                .unwrap();
        assert_eq!(patched.messages, Some(vec![Message::user("hi")]));
        let mut settings = Settings::default();
        settings.llm.api_key = Some("secret".into());
        assert_eq!(get_setting(&settings, &[], "auto_run"), Some(json!(false)));
        assert_eq!(
            get_setting(&settings, &[], "llm.api_key"),
            Some(json!(REDACTED))
        );
        assert_eq!(get_setting(&settings, &[], "nope"), None);
    }
}
