//! Settings: `serde_json::from_str::<Settings>` never panics and round-trips; the server's
//! `apply_patch` never panics, and with the default network policy a patch that is accepted
//! never loosens approval (auto_run, approval_policy, allow, deny, hard_deny) nor changes the
//! model's credentials.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oi_core::{ApprovalPolicy, RuntimeState, Settings};
use oi_server::settings_patch::{NetworkPolicy, apply_patch};
use serde_json::Value;

fn strictness(policy: ApprovalPolicy) -> u8 {
    match policy {
        ApprovalPolicy::Auto => 0,
        ApprovalPolicy::AlwaysAsk => 1,
        ApprovalPolicy::NeverRun => 2,
    }
}

fn check(current: &Settings, patch: &Value) {
    let Ok(patched) = apply_patch(
        current,
        &RuntimeState::default(),
        patch,
        NetworkPolicy::default(),
    ) else {
        return;
    };
    let new = &patched.settings;
    assert!(
        !new.auto_run || current.auto_run,
        "auto_run turned on over the network"
    );
    assert!(
        strictness(new.approval_policy) >= strictness(current.approval_policy),
        "approval_policy loosened over the network"
    );
    assert!(
        new.allow.iter().all(|r| current.allow.contains(r)),
        "allow rule added over the network"
    );
    assert!(
        current.deny.iter().all(|r| new.deny.contains(r)),
        "deny rule removed over the network"
    );
    assert!(
        new.hard_deny || !current.hard_deny,
        "hard_deny turned off over the network"
    );
    assert_eq!(new.llm.api_key, current.llm.api_key, "api_key changed");
    assert_eq!(new.llm.api_base, current.llm.api_base, "api_base changed");
    // Whatever is accepted must stay a valid settings value.
    let json = serde_json::to_string(new).unwrap_or_default();
    if let Err(e) = serde_json::from_str::<Settings>(&json) {
        panic!("patched settings do not parse again: {e}\n{json}");
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(settings) = serde_json::from_str::<Settings>(text) {
        let json = serde_json::to_string(&settings).unwrap_or_default();
        match serde_json::from_str::<Settings>(&json) {
            Ok(again) => assert_eq!(again, settings, "settings round trip changed them: {json}"),
            Err(e) => panic!("parsed settings do not parse again: {e}\n{json}"),
        }
    }
    if let Ok(patch) = serde_json::from_str::<Value>(text) {
        check(&Settings::default(), &patch);
        let strict = Settings {
            approval_policy: ApprovalPolicy::NeverRun,
            deny: vec!["rm ".to_owned(), "curl".to_owned()],
            allow: vec!["ls".to_owned()],
            llm: oi_core::LlmSettings {
                api_key: Some("sk-secret".to_owned()),
                api_base: Some("http://127.0.0.1:1/v1".to_owned()),
                ..oi_core::LlmSettings::default()
            },
            ..Settings::default()
        };
        check(&strict, &patch);
    }
});
