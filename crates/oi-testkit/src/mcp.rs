//! What the tests of oi as an MCP client share across crates: whether this machine has the
//! official Python MCP SDK (`pip install mcp`), and a profile naming the SDK-written calculator
//! server (crates/oi-mcp/tests/py/calc_server.py).

use std::path::{Path, PathBuf};

/// Whether `python3` can import the official MCP SDK.
pub fn python_has_mcp() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// `true` when the SDK is there; otherwise says that `test` is skipped (or fails under
/// `OI_TEST_REQUIRE_ALL=1`) and gives `false`.
pub fn require_python_mcp(test: &str) -> bool {
    if python_has_mcp() {
        return true;
    }
    crate::skipped!("skipped {test}: python3 lacks the mcp package (pip install mcp)");
    false
}

/// The calculator server written with the Python SDK (tools `add`, `fail`, `env`).
pub fn calc_server_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../oi-mcp/tests/py/calc_server.py")
}

/// Writes `dir/mcp.yaml`, a profile whose `mcp_servers:` is `calc` (the calculator over stdio)
/// and then `extra` (more YAML entries of the map, each indented by two spaces); its path.
///
/// # Panics
/// When the file cannot be written (a test's temporary directory).
#[allow(clippy::expect_used)]
pub fn calc_profile(dir: &Path, extra: &str) -> PathBuf {
    let profile = dir.join("mcp.yaml");
    let script = calc_server_script();
    std::fs::write(
        &profile,
        format!(
            "mcp_servers:\n  calc:\n    command: python3\n    args: [\"{}\"]\n{extra}",
            script.display()
        ),
    )
    .expect("write the profile");
    profile
}
