//! The interactive session as users drive it: through a pipe (magic commands, profiles) and
//! through a real pseudo-terminal (approval, CTRL-C during a running program, the next turn).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::process::{Command, Output, Stdio};

mod oi_common;

use oi_testkit::{Reply, Script, ScriptedServer};

struct Setup {
    runtime: tokio::runtime::Runtime,
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

fn setup() -> Setup {
    Setup {
        runtime: tokio::runtime::Runtime::new().unwrap(),
        home: tempfile::tempdir().unwrap(),
        work: tempfile::tempdir().unwrap(),
    }
}

impl Setup {
    fn server(&self, script: Script) -> ScriptedServer {
        self.runtime
            .block_on(ScriptedServer::start(script))
            .unwrap()
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_oi"));
        command
            .args(args)
            .current_dir(self.work.path())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("USER", "tester")
            .env("LOGNAME", "tester")
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL");
        command
    }

    fn piped(&self, args: &[&str], stdin: &str) -> Output {
        let mut command = self.command(args);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        oi_common::typed_in(&mut command, stdin)
    }

    fn redact(&self, text: &str) -> String {
        text.replace(&self.work.path().display().to_string(), "[WORK]")
            .replace(&self.home.path().display().to_string(), "[HOME]")
    }
}

#[test]
fn help_lists_the_originals_flags() {
    let s = setup();
    let out = s.piped(&["--help"], "");
    assert!(out.status.success());
    insta::assert_snapshot!("help", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn magic_commands_in_a_session() {
    let s = setup();
    let server = s.server(Script::calculator());
    let base = server.base_url();
    let input = "%help\n%auto_run\ncompute 6*7\n%tokens what next\n%save_message saved\n%undo\n%load_message saved.json\n%load_message missing\n%markdown conv\n%jupyter conv\n%verbose false\n%auto_run false\n%reset\n%nonsense\n";
    let out = s.piped(&["--api_base", &base, "--api_key", "k"], input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!(
        "magic_session",
        s.redact(&String::from_utf8_lossy(&out.stdout))
    );
    let notebook: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(s.work.path().join("conv.ipynb")).unwrap())
            .unwrap();
    insta::assert_json_snapshot!("magic_notebook", notebook);
    insta::assert_snapshot!(
        "magic_markdown",
        std::fs::read_to_string(s.work.path().join("conv.md")).unwrap()
    );
}

#[test]
fn a_profile_applies_and_flags_override_it() {
    let s = setup();
    let server = s.server(Script::calculator());
    let profile = s.work.path().join("mine.yaml");
    std::fs::write(
        &profile,
        format!(
            "llm:\n  model: from-profile\n  api_base: {}\n  api_key: k\nauto_run: true\n",
            server.base_url()
        ),
    )
    .unwrap();
    let out = s.piped(&["--profile", profile.to_str().unwrap(), "compute 2*2"], "");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("The result is 4."),
        "{out:?}"
    );
    let out = s.piped(
        &[
            "-p",
            profile.to_str().unwrap(),
            "-m",
            "from-flag",
            "compute 3*3",
        ],
        "",
    );
    assert!(out.status.success(), "{out:?}");
    let models: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        models,
        ["from-profile", "from-profile", "from-flag", "from-flag"]
    );
}

#[test]
fn profiles_people_already_have_load_and_bad_ones_name_the_line() {
    let s = setup();
    let server = s.server(Script::new([
        Reply::text("from yaml"),
        Reply::text("from python"),
    ]));
    let base = server.base_url();
    // An unknown key (the original's profiles carry many) is named with its line and skipped.
    let yaml = s.work.path().join("mine.yaml");
    std::fs::write(
        &yaml,
        format!(
            "llm:\n  model: gpt-4o\n  api_base: {base}\n  api_key: k\n  temprature: 0\nspeak_messages: true\n"
        ),
    )
    .unwrap();
    let out = s.piped(&["-p", yaml.to_str().unwrap(), "--plain", "hi"], "");
    let stderr = s.redact(&String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("from yaml"));
    assert!(
        stderr.contains("profile [WORK]/mine.yaml: line 5: unknown setting `llm.temprature` (did you mean `llm.temperature`?); skipped")
            && stderr.contains("line 6: unknown setting `speak_messages`; skipped"),
        "{stderr}"
    );
    // The original's Python profile in the profiles folder is read, never run.
    let profiles = s.home.path().join(".config/open-interpreter/profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    let canary = s.work.path().join("ran");
    std::fs::write(
        profiles.join("mine.py"),
        format!(
            "from interpreter import interpreter\nimport os\n\ninterpreter.llm.model = \"gpt-4o\"\ninterpreter.llm.api_base = \"{base}\"\ninterpreter.llm.api_key = \"k\"\ninterpreter.llm.supports_functions = False\nos.system(\"touch {}\")\n",
            canary.display()
        ),
    )
    .unwrap();
    let out = s.piped(&["-p", "mine", "--plain", "hi"], "");
    let stderr = s.redact(&String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("from python"));
    assert!(stderr.contains("mine.py: line 8: `os.system("), "{stderr}");
    assert!(!canary.exists(), "profile code must never run");
    // A wrong type stops oi with the file, line and key.
    std::fs::write(&yaml, "llm:\n  model: x\n  temperature: hot\n").unwrap();
    let out = s.piped(&["-p", yaml.to_str().unwrap(), "hi"], "");
    assert_eq!(out.status.code(), Some(1));
    let stderr = s.redact(&String::from_utf8_lossy(&out.stderr));
    assert!(
        stderr.contains("[WORK]/mine.yaml")
            && stderr.contains("temperature")
            && stderr.contains("line 3"),
        "{stderr}"
    );
}

#[test]
fn os_mode_is_refused_clearly() {
    let s = setup();
    let out = s.piped(&["--os"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--os is not supported"));
}

#[test]
fn ctrl_c_stops_a_running_program_and_the_session_goes_on() {
    let s = setup();
    let server = s.server(Script::new([
        Reply::tool_call(
            "python",
            "import time\nprint('sleeping', flush=True)\ntime.sleep(600)",
        ),
        Reply::text("Still here."),
    ]));
    let base = server.base_url();
    let mut command = s.command(&["--api_base", &base, "--api_key", "k", "--plain"]);
    command.env("TERM", "dumb");
    let mut session = rexpect::session::spawn_command(command, Some(20_000)).unwrap();
    session.exp_string("> ").unwrap();
    session.send_line("sleep for a while").unwrap();
    session
        .exp_string("Would you like to run this code? (y/n)")
        .unwrap();
    session.send_line("y").unwrap();
    session.exp_string("sleeping").unwrap();
    let pressed = std::time::Instant::now();
    session.send_control('c').unwrap();
    session.exp_string("Stopped.").unwrap();
    assert!(pressed.elapsed() < std::time::Duration::from_secs(5));
    session.exp_string("> ").unwrap();
    session.send_line("are you there?").unwrap();
    session.exp_string("Still here.").unwrap();
    session.exp_string("> ").unwrap();
    session.send_control('d').unwrap();
    session.exp_eof().unwrap();
}

#[test]
fn the_workspace_sandbox_blocks_writes_outside_the_working_directory() {
    if !oi_computer::probe().filesystem() {
        eprintln!("SKIPPED: this kernel cannot enforce Landlock");
        return;
    }
    let s = setup();
    let outside = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("oi-sandbox-{}", std::process::id()));
    let code = format!(
        "open('inside.txt', 'w').write('ok')\ntry:\n    open({:?}, 'w')\n    print('WROTE OUTSIDE')\nexcept OSError:\n    print('denied outside')",
        outside.display().to_string()
    );
    let server = s.server(Script::new([
        Reply::tool_call("python", &code),
        Reply::text("Done."),
    ]));
    let base = server.base_url();
    // `workspace` lets code write the temp directory too: oi's is a folder of its own here,
    // so the target directory stays outside wherever the checkout is (under /tmp as well).
    let own_tmp = s.home.path().join("tmp");
    std::fs::create_dir_all(&own_tmp).unwrap();
    let mut command = s.command(&[
        "--sandbox",
        "workspace",
        "-y",
        "--plain",
        "--api_base",
        &base,
        "--api_key",
        "k",
        "write files",
    ]);
    command
        .env("TMPDIR", &own_tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = oi_common::typed_in(&mut command, "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("```output\ndenied outside\n```"),
        "{stdout}"
    );
    assert!(s.work.path().join("inside.txt").exists());
    assert!(!outside.exists());
    assert!(String::from_utf8_lossy(&out.stderr).contains("sandbox: workspace"));
}

#[test]
fn a_flag_given_twice_takes_its_last_value() {
    let s = setup();
    let server = s.server(Script::new([Reply::text("hello")]));
    let base = server.base_url();
    let out = s.piped(
        &[
            "-ab",
            "http://127.0.0.1:9/v1",
            "--api_base",
            &base,
            "-ak",
            "k",
            "-m",
            "first",
            "--model",
            "second",
            "--plain",
            "hi",
        ],
        "",
    );
    assert!(out.status.success(), "{out:?}");
    let models: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(models, ["second"]);
}
