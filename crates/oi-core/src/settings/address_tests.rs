//! Tests of address.rs: one setting read and written by its dotted name.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;

use super::*;

#[test]
fn names_are_every_setting_once_in_order() {
    let names = Settings::names();
    assert_eq!(names.first().map(String::as_str), Some("auto_run"));
    let at = |name: &str| names.iter().position(|n| n == name).unwrap();
    assert_eq!(
        at(CONVERSATION_FILENAME),
        at("conversation_history_path") + 1
    );
    assert!(at("llm.model") < at("llm.temperature") && at("llm.api_key") < at("llm.max_budget"));
    for name in ["loop", "computer.sandbox", "computer.limits", "hard_deny"] {
        assert!(names.iter().any(|n| n == name), "{name}");
    }
    assert!(!names.iter().any(|n| n == "llm" || n == "llm.api_key_for"));
    let mut sorted = names.to_vec();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "each name once");
}

#[test]
fn every_name_reads_and_writes_back() {
    let changed = {
        let mut s = Settings {
            auto_run: true,
            ..Settings::default()
        };
        s.llm.context_window = Some(9);
        s.computer.limits.max_processes = Some(3);
        s
    };
    for name in Settings::names() {
        if name == CONVERSATION_FILENAME {
            continue;
        }
        let value = changed.get(name).unwrap();
        let mut settings = Settings::default();
        settings.set(name, value.clone()).unwrap();
        assert_eq!(settings.get(name).unwrap(), value, "{name}");
    }
}

#[test]
fn shortcuts_follow_the_patch_rules() {
    let mut settings = Settings::default();
    settings.set("sandbox", json!("workspace")).unwrap();
    assert_eq!(
        settings.get("computer.sandbox.mode").unwrap(),
        json!("workspace")
    );
    assert_eq!(settings.get("sandbox").unwrap()["mode"], json!("workspace"));
    settings
        .set("computer.import_computer_api", json!(true))
        .unwrap();
    assert!(settings.import_computer_api);
    settings.set("pass_env", json!(["A"])).unwrap();
    settings.set("computer.pass_env", json!(["B"])).unwrap();
    assert_eq!(settings.get("pass_env").unwrap(), json!(["A", "B"]));
    settings.set("llm", json!({"model": "x"})).unwrap();
    assert_eq!(settings.get("llm").unwrap()["model"], json!("x"));
}

#[test]
fn unknown_names_and_wrong_values_are_refused_and_change_nothing() {
    let mut settings = Settings::default();
    let error = settings.set("auto_rum", json!(true)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "there is no setting `auto_rum` (did you mean `auto_run`?)"
    );
    assert!(matches!(
        settings.get("llm.modle"),
        Err(SettingError::Unknown { nearest: Some(n), .. }) if n == "llm.model"
    ));
    assert_eq!(
        settings
            .set("auto_run", json!("yes"))
            .unwrap_err()
            .to_string(),
        "`auto_run` cannot be \"yes\": invalid type: string \"yes\", expected a boolean"
    );
    assert_eq!(
        settings
            .set("max_output", json!(null))
            .unwrap_err()
            .to_string(),
        "`max_output` cannot be null: invalid type: null, expected usize"
    );
    assert!(settings.set("llm.temperature", json!("hot")).is_err());
    assert!(settings.set("computer.sandbox.mode", json!("off")).is_err());
    assert_eq!(settings, Settings::default());
    settings.set("llm.api_base", json!("http://x")).unwrap();
    settings.set("llm.api_base", json!(null)).unwrap();
    assert_eq!(settings.llm.api_base, None);
}

#[test]
fn the_conversation_file_is_runtime_state() {
    let mut settings = Settings::default();
    assert!(matches!(
        settings.set(CONVERSATION_FILENAME, json!("a.json")),
        Err(SettingError::Runtime { .. })
    ));
    assert!(settings.get(CONVERSATION_FILENAME).is_err());
    let named =
        |value| SettingsPatch::one(CONVERSATION_FILENAME, value).map(|p| p.conversation_filename);
    assert_eq!(named(json!("a.json")), Ok(Some(Some("a.json".to_owned()))));
    assert_eq!(named(json!(null)), Ok(Some(None)));
    assert!(named(json!(1)).is_err());
}

#[test]
fn set_all_is_all_or_nothing() {
    let mut settings = Settings::default();
    let object = json!({"auto_run": true, "llm": {"model": "m", "temperature": "hot"}});
    assert!(settings.set_all(object.as_object().unwrap()).is_err());
    assert_eq!(settings, Settings::default());
    let object = json!({"auto_run": true, "llm": {"model": "m"}, "nope": 1});
    assert!(matches!(
        settings.set_all(object.as_object().unwrap()),
        Err(SettingError::Unknown { .. })
    ));
    let object = json!({"auto_run": true, "llm": {"model": "m"}});
    settings.set_all(object.as_object().unwrap()).unwrap();
    assert!(settings.auto_run && settings.llm.model == "m");
}
