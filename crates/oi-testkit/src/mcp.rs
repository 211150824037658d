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

/// The calculator served over Streamable HTTP by the Python SDK
/// (crates/oi-mcp/tests/py/calc_http_server.py) on 127.0.0.1, answering only requests with the
/// header `X-Calc-Key: key`; stopped when dropped.
pub struct CalcHttpServer {
    child: std::process::Child,
    /// Its MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl CalcHttpServer {
    /// Starts it and waits (up to 30 s) until it listens.
    ///
    /// # Panics
    /// When it cannot be started or does not listen in time.
    #[allow(clippy::expect_used)]
    pub fn start(key: &str) -> CalcHttpServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../oi-mcp/tests/py/calc_http_server.py");
        let child = std::process::Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .arg(key)
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("start calc_http_server.py");
        let server = CalcHttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "calc_http_server.py did not listen on {port} within 30 s"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        server
    }
}

impl Drop for CalcHttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
