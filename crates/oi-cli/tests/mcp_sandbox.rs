//! `oi --mcp` keeps oi's walls for the code an MCP caller sends, spoken to in raw JSON-RPC
//! (no SDK needed): the provider key oi was started with is withheld from the code, and under
//! `--sandbox workspace` the code writes inside the workspace but not outside it.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

const SECRET: &str = "sk-mcp-test-secret-0123456789";

struct Mcp {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Mcp {
    fn start(workspace: &std::path::Path, home: &std::path::Path, args: &[&str]) -> Mcp {
        let mut child = Command::new(env!("CARGO_BIN_EXE_oi"))
            .arg("--mcp")
            .args(args)
            .current_dir(workspace)
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("OPENAI_API_KEY", SECRET)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut mcp = Mcp {
            child,
            stdin,
            stdout,
            next: 0,
        };
        mcp.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}),
        );
        mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "oi --mcp closed"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// The text of an `execute` of `code` in `language`.
    fn execute(&mut self, language: &str, code: &str) -> String {
        let answer = self.request(
            "tools/call",
            json!({"name": "execute", "arguments": {"language": language, "code": code}}),
        );
        answer["result"]["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_mcp_caller_gets_no_secret_and_stays_in_the_sandbox() {
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    // Not under /tmp: the workspace sandbox lets code write the temp directory.
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();

    let mut open = Mcp::start(workspace.path(), home.path(), &[]);
    let seen = open.execute("shell", "echo \"key=[$OPENAI_API_KEY]\"");
    assert!(seen.contains("key=[]"), "{seen}");
    assert!(!seen.contains(SECRET));
    let python = open.execute(
        "python",
        "import os\nprint([k for k, v in os.environ.items() if 'sk-mcp' in v])",
    );
    assert_eq!(python.trim(), "[]", "{python}");
    drop(open);

    if !oi_computer::probe().filesystem() {
        oi_testkit::skipped!(
            "skipped the sandbox half of an_mcp_caller_gets_no_secret_and_stays_in_the_sandbox: no Landlock here"
        );
        return;
    }
    let mut sandboxed = Mcp::start(workspace.path(), home.path(), &["--sandbox", "workspace"]);
    let escape = outside.path().join("escaped");
    let said = sandboxed.execute(
        "shell",
        &format!("touch inside.txt; touch {}", escape.display()),
    );
    assert!(workspace.path().join("inside.txt").exists(), "{said}");
    assert!(!escape.exists(), "{said}");
}
