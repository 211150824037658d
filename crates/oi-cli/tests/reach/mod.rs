//! What the tests of sandboxed code against the host share: `oi` run against the scripted
//! model with a temporary HOME, what the code printed, and skipping (or failing under
//! `OI_TEST_REQUIRE_ALL=1`) where the machine cannot run a test.

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::process::{Command, Output, Stdio};

use oi_testkit::{Reply, Script, ScriptedServer};

pub struct Setup {
    pub runtime: tokio::runtime::Runtime,
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
}

pub fn setup() -> Setup {
    Setup {
        runtime: tokio::runtime::Runtime::new().unwrap(),
        home: tempfile::tempdir().unwrap(),
        work: tempfile::tempdir().unwrap(),
    }
}

impl Setup {
    /// `oi -y --plain --no_hard_deny <args> go` (the sandbox must hold without the judge) answering with `python` code, with a temporary HOME, in the
    /// work directory; returns what the code printed.
    pub fn run_python(&self, code: &str, args: &[&str], env: &[(&str, &str)]) -> String {
        self.run_python_with_stderr(code, args, env).0
    }

    /// [`Setup::run_python`], with what oi wrote on stderr.
    pub fn run_python_with_stderr(
        &self,
        code: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (String, String) {
        let server = self
            .runtime
            .block_on(ScriptedServer::start(Script::new(vec![
                Reply::tool_call("python", code),
                Reply::text("Done."),
            ])))
            .unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_oi"));
        command
            .args([
                "--api_base",
                &server.base_url(),
                "--api_key",
                "sk-test-0123456789",
            ])
            .args(["-y", "--plain", "--no_hard_deny"])
            .args(args)
            .arg("go")
            .current_dir(self.work.path())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("TERM", "dumb")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let out = command.output().unwrap();
        let text = printed(&out);
        assert!(
            text.contains("CODE RAN"),
            "the code did not run ({args:?}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (text, String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// What the code printed: the ```output blocks of oi's plain transcript.
pub fn printed(out: &Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    let mut printed = String::new();
    for block in text.split("```output\n").skip(1) {
        printed.push_str(block.split("\n```").next().unwrap_or(""));
        printed.push('\n');
    }
    printed
}

/// Says why a test cannot run here and returns false; a failure instead under
/// `OI_TEST_REQUIRE_ALL=1` (CI), where every test must run.
pub fn cannot_run(test: &str, why: &str) -> bool {
    assert!(
        std::env::var_os("OI_TEST_REQUIRE_ALL").is_none_or(|v| v != "1"),
        "{test} cannot run ({why}) but OI_TEST_REQUIRE_ALL=1"
    );
    oi_testkit::skipped!("skipped {test}: {why}");
    false
}

pub fn can_run(test: &str, programs: &[&str]) -> bool {
    for program in programs {
        let found = std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()));
        if !found {
            return cannot_run(test, &format!("`{program}` is not installed"));
        }
    }
    let support = oi_computer::probe();
    if !support.filesystem() {
        return cannot_run(
            test,
            &format!("this kernel cannot enforce the sandbox ({support})"),
        );
    }
    true
}

pub fn py(text: &str) -> String {
    format!("{text:?}")
}

pub fn unique(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{what}-{}-{nanos}", std::process::id())
}

pub const SANDBOXES: [&str; 2] = ["workspace", "readonly"];
