//! Tests of settings_patch.rs: what a network client may change, key by key.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use serde_json::json;

fn patch(value: Value) -> Result<Patched, PatchError> {
    apply_patch(
        &Settings::default(),
        &RuntimeState::default(),
        &value,
        NetworkPolicy::default(),
    )
}

#[test]
fn sets_plain_and_nested_settings() {
    let patched =
        patch(json!({"custom_instructions": "be brief", "llm": {"model": "gpt-4o-mini"}})).unwrap();
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
        &RuntimeState::default(),
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
    let refused = |patch: Value| match apply_patch(&server, &RuntimeState::default(), &patch, open)
    {
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
    assert_eq!(
        refused(json!({"conversation_filename": "elsewhere.json"})),
        "conversation_history_path"
    );
    let runtime = RuntimeState {
        conversation_filename: Some("mine.json".into()),
        ..RuntimeState::default()
    };
    let same = json!({"conversation_filename": "mine.json"});
    assert!(apply_patch(&server, &runtime, &same, open).is_ok());
    let tighter = apply_patch(
        &server,
        &RuntimeState::default(),
        &json!({"sandbox": "readonly", "limits": {"max_processes": 8}, "deny_network": null}),
        open,
    );
    assert!(matches!(tighter, Err(PatchError::Unknown(ref k)) if k == "deny_network"));
    let tighter = apply_patch(
        &server,
        &RuntimeState::default(),
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
        &RuntimeState::default(),
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
        let patched = apply_patch(
            &server,
            &RuntimeState::default(),
            &json!({"sandbox": {"workspace": out}}),
            open,
        );
        assert!(
            matches!(patched, Err(PatchError::Refused { key: "sandbox", .. })),
            "{out}: {patched:?}"
        );
    }
    let inner = format!("{}/sub/.", work.display());
    let patched = apply_patch(
        &server,
        &RuntimeState::default(),
        &json!({"sandbox": {"workspace": inner}}),
        open,
    )
    .unwrap();
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
        &RuntimeState::default(),
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
    let moved = apply_patch(
        &server,
        &RuntimeState::default(),
        &json!({"llm": {"model": "ollama/x"}}),
        open,
    )
    .unwrap();
    assert_ne!(
        moved.settings.llm.api_key_for.as_deref(),
        Some("https://api.openai.com/v1")
    );
}

#[test]
fn messages_and_getters() {
    let patched =
        patch(json!({"messages": [{"role": "user", "type": "message", "content": "hi"}]})).unwrap();
    assert_eq!(patched.messages, Some(vec![Message::user("hi")]));
    let mut settings = Settings::default();
    settings.llm.api_key = Some("secret".into());
    let runtime = RuntimeState::default();
    assert_eq!(
        get_setting(&settings, &runtime, &[], "auto_run"),
        Some(json!(false))
    );
    assert_eq!(
        get_setting(&settings, &runtime, &[], "llm.api_key"),
        Some(json!(REDACTED))
    );
    assert_eq!(get_setting(&settings, &runtime, &[], "nope"), None);
    assert_eq!(
        get_setting(&settings, &runtime, &[], "conversation_filename"),
        Some(Value::Null)
    );
}
