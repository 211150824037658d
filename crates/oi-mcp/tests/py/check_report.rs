//! What every transport of oi's MCP server must give to oi_client.py (the official Python
//! MCP SDK): shared by crates/oi-cli/tests/mcp_stdio.rs and crates/oi-server/tests/mcp_http.rs.

#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

/// What every transport must give (the `/mcp` test in oi-server checks the same report).
pub fn check_report(report: &Value) {
    assert_eq!(
        report["tools"],
        json!([
            "execute",
            "languages",
            "read_file",
            "reset",
            "stop",
            "write_file"
        ])
    );
    assert_eq!(report["execute_required"], json!(["code", "language"]));
    let languages = report["languages_enum"].as_array().unwrap();
    assert!(languages.contains(&json!("python")) && languages.contains(&json!("shell")));
    assert_eq!(report["state"], json!(["42", false]));
    assert_eq!(report["other_session"], json!("None"));
    assert_eq!(report["shell"], json!(["shell-42", false]));
    assert_eq!(report["error"], json!([true, true]));
    assert_eq!(report["hard_deny"][0], json!(true), "{report}");
    assert!(
        report["hard_deny"][1]
            .as_str()
            .unwrap()
            .starts_with("oi blocked this code")
    );
    assert_ne!(report["cancel"], json!("not cancelled"));
    // The sleep was stopped: `late` never set, `x` kept, and well before 30 seconds.
    assert_eq!(report["after_cancel"][0], json!("None 42"), "{report}");
    assert!(
        report["after_cancel"][1].as_f64().unwrap() < 20.0,
        "{report}"
    );
    assert_eq!(report["progress"], json!(["slow done", true]));
    assert_eq!(report["image"], json!([1, "image/png", true]), "{report}");
    assert_eq!(report["files"], json!([false, "hi", true]));
    assert_eq!(report["listing"]["sessions"], json!(["default", "other"]));
    assert_eq!(report["reset"], json!([false, "None"]));
}
