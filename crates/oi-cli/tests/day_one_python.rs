//! The Python models write after training on notebooks, through the real `oi` and the scripted
//! model: `!cmd` lines and magics run and their output reaches the model; the same lines are
//! still judged by the hard-deny list (the attack: a model hiding `rm -rf ~` in a shell line,
//! an alias magic, a `%%bash` cell or `get_ipython().system`, with `-y`); and `{{ expr }}` in
//! the system message is rendered as the original rendered it.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

use oi_testkit::{Reply, Script, ScriptedServer};

fn have_python() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("python3").is_file()));
    if !found {
        oi_testkit::skipped!("skipped: python3 is not installed");
    }
    found
}

fn oi(server: &ScriptedServer, home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oi"))
        .args(["--api_base", &server.base_url(), "--api_key", "k"])
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap()
}

fn start(replies: Vec<Reply>) -> (tokio::runtime::Runtime, ScriptedServer) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(ScriptedServer::start(Script::new(replies)))
        .unwrap();
    (runtime, server)
}

#[test]
fn shell_lines_and_magics_run_and_the_model_reads_their_output() {
    if !have_python() {
        return;
    }
    let code = "word = 'notebook'\n!echo shell says {word}\n%env OI_DAY_ONE=yes\nimport os\nprint(os.environ['OI_DAY_ONE'])\ndisplay('shown')";
    let (_rt, server) = start(vec![
        Reply::tool_call("python", code),
        Reply::text("All ran."),
    ]);
    let home = tempfile::tempdir().unwrap();
    let out = oi(&server, home.path(), &["-y", "run the notebook cell"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("shell says notebook"), "{stdout}");
    assert!(stdout.contains("All ran."), "{stdout}");
    let second = server.requests()[1].body.to_string();
    for seen in [
        "shell says notebook",
        "env: OI_DAY_ONE=yes",
        "yes",
        "'shown'",
    ] {
        assert!(
            second.contains(seen),
            "the model did not see {seen:?}: {second}"
        );
    }
    assert!(!second.contains("SyntaxError"), "{second}");
}

#[test]
fn an_unknown_magic_is_one_line_for_the_model() {
    if !have_python() {
        return;
    }
    let (_rt, server) = start(vec![
        Reply::tool_call("python", "%autoreload 2\nprint('not reached')"),
        Reply::text("Understood."),
    ]);
    let home = tempfile::tempdir().unwrap();
    let out = oi(&server, home.path(), &["-y", "reload"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let second = &server.requests()[1].body;
    let result = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap()
        .to_owned();
    assert!(result.starts_with("%autoreload is not a magic"), "{result}");
    assert_eq!(result.trim_end().lines().count(), 1, "{result}");
}

#[test]
fn rm_rf_home_hidden_in_notebook_lines_is_blocked_even_with_auto_run() {
    if !have_python() {
        return;
    }
    let attacks = [
        "!rm -rf ~",
        "import os\ntarget = os.path.expanduser('~')\n!rm -rf {target}",
        "%rm -rf ~",
        "%%bash\nrm -rf ~",
        "get_ipython().system('rm -rf ~')",
        "import os, shutil\n%time shutil.rmtree(os.path.expanduser('~'))",
    ];
    for attack in attacks {
        let (_rt, server) = start(vec![
            Reply::tool_call("python", attack),
            Reply::text("Done."),
        ]);
        let home = tempfile::tempdir().unwrap();
        let precious = home.path().join("precious.txt");
        std::fs::write(&precious, "keep me").unwrap();
        let out = oi(&server, home.path(), &["-y", "clean up my home"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            precious.exists(),
            "{attack:?} deleted the home directory: {stdout}"
        );
        let second = server.requests()[1].body.to_string();
        assert!(
            second.contains("oi blocked this code"),
            "{attack:?} was not blocked: {second}"
        );
    }
}

#[test]
fn a_template_in_the_system_message_is_rendered() {
    if !have_python() {
        return;
    }
    let (_rt, server) = start(vec![Reply::text("ok")]);
    let home = tempfile::tempdir().unwrap();
    let message = "Six times seven is {{ 6*7 }}. Home: {{\n    import os\n    print(os.path.basename(os.getcwd()))\n}}";
    let out = oi(
        &server,
        home.path(),
        &["-y", "--system_message", message, "hi"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let request = server.requests().pop().unwrap();
    let system = request.body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    let dir = home
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    // The packaged default profile imports the computer API (as the original's): its section
    // follows the rendered message.
    assert_eq!(
        system,
        format!(
            "Six times seven is 42. Home: {dir}\n\n{}",
            oi_core::prompts::COMPUTER_API_SYSTEM_MESSAGE
        )
    );
}
