//! What a replica takes from a session's stored settings when it adopts the session: data,
//! never policy. Whoever can write the store (Redis) must not be able to make a replica run
//! code unattended or write elsewhere, so approval (`auto_run`, `approval_policy`, `allow`,
//! `deny`, `hard_deny`, `safe_mode`), the sandbox, the limits and where conversations are
//! written always come from the replica's own configuration; the model's key and base URL
//! too. What remains (instructions, templates, the model name, …) is applied as a network
//! client's `POST /settings` would be, key by key through the same rule
//! ([`crate::sessions::settings_patch::apply_each`]): a key that rule refuses keeps the replica's value.

use oi_core::{RuntimeState, Settings};
use serde_json::Value;

use crate::sessions::settings_patch::{NetworkPolicy, apply_each};

/// Top-level keys that are policy: never taken from the store.
const POLICY_KEYS: &[&str] = &[
    "auto_run",
    "approval_policy",
    "allow",
    "deny",
    "hard_deny",
    "safe_mode",
    "computer",
    "sandbox",
    "limits",
    "pass_env",
    "conversation_history",
    "conversation_history_path",
    "conversation_filename",
    // Loop mode sends the model a hidden message after every turn, unattended: a stored
    // `loop: true` made a replica call the model without end, on its key (issue 21 review).
    "loop",
    "loop_message",
    "loop_breakers",
];

/// Keys of the `llm` section that are credentials or spend policy: never taken from the
/// store.
const CREDENTIAL_KEYS: &[&str] = &["api_key", "api_base", "max_budget"];

/// The settings a replica serves an adopted session with: `own` (the replica's), with the
/// data of `stored` laid over it through the network rule; the keys left out are named in
/// the second value.
pub fn adopt_settings(
    own: &Settings,
    stored: &Settings,
    policy: NetworkPolicy,
) -> (Settings, Vec<String>) {
    let Ok(Value::Object(mut patch)) = serde_json::to_value(stored) else {
        return (own.clone(), vec!["settings".to_owned()]);
    };
    for key in POLICY_KEYS {
        patch.remove(*key);
    }
    if let Some(Value::Object(llm)) = patch.get_mut("llm") {
        for key in CREDENTIAL_KEYS {
            llm.remove(*key);
        }
    }
    // The runtime state (the conversation file) is the replica's own: stored settings never
    // name it (`conversation_filename` was among them before it moved beside them).
    match apply_each(own, &RuntimeState::default(), &Value::Object(patch), policy) {
        Ok(applied) => (
            applied.settings,
            applied.refused.into_iter().map(|(key, _)| key).collect(),
        ),
        Err(_) => (own.clone(), vec!["settings".to_owned()]),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use oi_core::settings::SandboxMode;

    fn own() -> Settings {
        let mut own = Settings::default();
        own.computer.sandbox.mode = SandboxMode::Workspace;
        own.computer.limits.max_processes = Some(16);
        own.conversation_history_path = Some("/srv/oi/conversations".into());
        own.llm.api_key = Some("replica-key".into());
        own.llm.api_key_for = Some("https://api.openai.com/v1".into());
        own.deny = vec!["curl".into()];
        own
    }

    #[test]
    fn policy_from_the_store_is_ignored_and_data_is_kept() {
        let mut poisoned = own();
        poisoned.auto_run = true;
        poisoned.hard_deny = false;
        poisoned.approval_policy = oi_core::ApprovalPolicy::Auto;
        poisoned.allow = vec!["rm ".into()];
        poisoned.deny.clear();
        poisoned.computer.sandbox.mode = SandboxMode::Off;
        poisoned.computer.limits.max_processes = None;
        poisoned.conversation_history_path = Some("/etc/cron.d".into());
        poisoned.llm.api_base = Some("http://evil".into());
        poisoned.llm.api_key = None;
        poisoned.custom_instructions = "be brief".into();
        poisoned.llm.model = "gpt-4o-mini".into();
        poisoned.llm.max_budget = Some(1e9);
        poisoned.loop_mode = true;
        poisoned.loop_message = "Proceed, forever.".into();
        poisoned.loop_breakers.clear();
        let open = NetworkPolicy {
            allow_auto_run: true,
            allow_credentials: true,
        };
        for policy in [NetworkPolicy::default(), open] {
            let (adopted, _) = adopt_settings(&own(), &poisoned, policy);
            let mut expected = own();
            expected.custom_instructions = "be brief".into();
            expected.llm.model = "gpt-4o-mini".into();
            if policy.allow_credentials {
                expected.llm.api_key_for = adopted.llm.api_key_for.clone();
            }
            assert_eq!(adopted, expected, "{policy:?}");
        }
    }

    #[test]
    fn a_key_the_network_rule_refuses_keeps_the_replicas_value() {
        let mut stored = own();
        stored.llm.model = "ollama/x".into();
        stored.max_output = 10;
        let (adopted, refused) = adopt_settings(&own(), &stored, NetworkPolicy::default());
        assert!(refused.is_empty(), "{refused:?}");
        assert_eq!(adopted.max_output, 10);
        // The model moved; the key stays bound where the replica configured it.
        assert_eq!(adopted.llm.model, "ollama/x");
        assert_eq!(
            adopted.llm.api_key_for.as_deref(),
            Some("https://api.openai.com/v1")
        );
    }
}
