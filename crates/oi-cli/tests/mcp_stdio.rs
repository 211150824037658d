//! `oi --mcp` driven by a client nobody here wrote: the official Python MCP SDK
//! (`pip install mcp`), through crates/oi-mcp/tests/py/oi_client.py. It lists the tools, runs
//! Python twice with state kept, runs shell, meets an error and the hard-deny list, cancels a
//! sleeping run, gets a matplotlib figure as image content, and reads and writes files.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::process::Command;

use serde_json::Value;

#[path = "../../oi-mcp/tests/py/check_report.rs"]
mod check_report;
use check_report::check_report;

/// Whether `python3` with the `mcp` package and matplotlib is here.
fn python_mcp() -> bool {
    Command::new("python3")
        .args(["-c", "import mcp, matplotlib"])
        .output()
        .is_ok_and(|out| out.status.success())
}

fn client_script() -> String {
    format!(
        "{}/../oi-mcp/tests/py/oi_client.py",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn the_python_sdk_drives_oi_over_stdio() {
    if !python_mcp() {
        oi_testkit::skipped!(
            "skipped the_python_sdk_drives_oi_over_stdio: python3 lacks the mcp package or matplotlib (pip install mcp matplotlib)"
        );
        return;
    }
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let out = Command::new("python3")
        .arg(client_script())
        .args(["stdio", env!("CARGO_BIN_EXE_oi"), "--mcp"])
        .current_dir(workspace.path())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("MPLBACKEND", "Agg")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "client failed:\n{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(stdout.trim()).expect("one JSON report");
    check_report(&report);
    assert_eq!(
        std::fs::read_to_string(workspace.path().join("mcp/note.txt")).unwrap(),
        "hi"
    );
}
