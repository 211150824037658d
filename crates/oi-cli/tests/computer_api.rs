//! The headless computer API inside the code's Python session (`import_computer_api`), through
//! the real `oi` binary, its respond loop and the scripted model server over HTTP: the
//! model's code calls `computer.ai.summarize` (the scripted model answers that inner request
//! too, sent by oi, not by the session), edits a file with `computer.files.edit`, saves a
//! skill and uses it in a later block; and the door's attacks: no key in the session, no call
//! with the API off, no more calls than a block may make, no request over the size bound.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use oi_testkit::{Reply, Script, ScriptedServer};
use serde_json::Value;

struct Setup {
    _runtime: tokio::runtime::Runtime,
    server: ScriptedServer,
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

fn setup(replies: Vec<Reply>) -> Setup {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(ScriptedServer::start(Script::new(replies)))
        .unwrap();
    Setup {
        _runtime: runtime,
        server,
        home: tempfile::tempdir().unwrap(),
        work: tempfile::tempdir().unwrap(),
    }
}

const KEY: &str = "sk-computer-api-test-key-0123456789";

impl Setup {
    fn config(&self) -> PathBuf {
        self.home.path().join(".config")
    }

    /// Runs `oi -y` with a profile that turns the computer API `on` (or off), in the work
    /// directory, the key in oi's environment.
    fn oi(&self, api: bool, extra: &[&str], message: &str) -> Output {
        self.run(api, extra, message, false)
    }

    /// [`Setup::oi`]; `priced`: the server stands for OpenAI's own endpoint
    /// (`OPENAI_BASE_URL`), so gpt-4o is priced as OpenAI's.
    fn run(&self, api: bool, extra: &[&str], message: &str, priced: bool) -> Output {
        let profile = self.home.path().join("api.yaml");
        let setting = if api { "True" } else { "False" };
        std::fs::write(
            &profile,
            format!("computer:\n  import_computer_api: {setting}\n"),
        )
        .unwrap();
        let mut args = vec!["-y", "--profile", profile.to_str().unwrap()];
        let base = self.server.base_url();
        if !priced {
            args.extend(["--api_base", &base]);
        }
        args.extend(["--model", "gpt-4o"]);
        args.extend(extra);
        args.push(message);
        Command::new(env!("CARGO_BIN_EXE_oi"))
            .args(&args)
            .current_dir(self.work.path())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.config())
            .env("OPENAI_API_KEY", KEY)
            .env("OPENAI_BASE_URL", if priced { base.as_str() } else { "" })
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap()
    }

    /// The messages of every chat request the server received.
    fn requests(&self) -> Vec<Value> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.path.ends_with("/chat/completions"))
            .map(|r| r.body["messages"].clone())
            .collect()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn python_available() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn the_code_summarizes_through_oi_and_the_model_answers_the_inner_call() {
    if !python_available() {
        return oi_testkit::skipped!("python3 is not installed");
    }
    let s = setup(vec![
        Reply::tool_call(
            "python",
            "s = computer.ai.summarize('A long report about apples. ' * 50)\nprint('SUMMARY:', s)",
        ),
        Reply::text("Apples, in short."),
        Reply::text("Done."),
    ]);
    let out = s.oi(true, &[], "summarize the report");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("SUMMARY: Apples, in short."),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    let requests = s.requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    let system = requests[0][0]["content"].as_str().unwrap_or_default();
    assert!(system.contains("# THE COMPUTER API"), "{system}");
    assert!(system.contains("computer.ai.summarize(text)"), "{system}");
    assert!(!system.contains("computer.mouse"), "{system}");
    let inner = requests[1].to_string();
    assert!(
        inner.contains("summarize it into a concise abstract paragraph"),
        "{inner}"
    );
    assert!(inner.contains("A long report about apples."), "{inner}");
    assert!(
        requests[2]
            .to_string()
            .contains("SUMMARY: Apples, in short."),
        "the output went back to the model"
    );
}

#[test]
fn the_code_edits_a_file_and_saves_a_skill_that_a_later_block_uses() {
    if !python_available() {
        return oi_testkit::skipped!("python3 is not installed");
    }
    let s = setup(vec![
        Reply::tool_call(
            "python",
            "computer.files.edit('notes.txt', 'draft', 'final')\nprint(open('notes.txt').read())\nprint(computer.skills.save('greet', 'def greet(name):\\n    return \"hello \" + name\\n'))",
        ),
        Reply::tool_call(
            "python",
            "print(computer.skills.list())\ncomputer.skills.import_skills()\nprint(greet('skill'))",
        ),
        Reply::text("Done."),
    ]);
    std::fs::write(s.work.path().join("notes.txt"), "a draft note\n").unwrap();
    let out = s.oi(true, &[], "edit and save");
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(
        std::fs::read_to_string(s.work.path().join("notes.txt")).unwrap(),
        "a final note\n",
        "{stdout}\n{stderr}"
    );
    let skill = s.config().join("open-interpreter/skills/greet.py");
    assert!(
        std::fs::read_to_string(&skill)
            .unwrap_or_default()
            .contains("def greet"),
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains("['greet()']"), "{stdout}");
    assert!(stdout.contains("hello skill"), "{stdout}");
}

#[test]
fn the_door_refuses_beyond_its_bounds_and_never_shows_the_key() {
    if !python_available() {
        return oi_testkit::skipped!("python3 is not installed");
    }
    let code = "import os\n\
        print('KEY IN ENV', any('computer-api-test' in v for v in os.environ.values()))\n\
        answers, errors = 0, []\n\
        for i in range(20):\n\
        \x20   try:\n\
        \x20       computer.ai.chat('q%d' % i); answers += 1\n\
        \x20   except RuntimeError as e:\n\
        \x20       errors.append(str(e))\n\
        print('ANSWERS', answers)\n\
        print('ERROR', errors[0] if errors else None)\n\
        for forged in ({'op': 'ai.chat', 'text': 'x' * 300000}, {'op': 'read.key'}):\n\
        \x20   try:\n\
        \x20       computer._door(forged)\n\
        \x20   except RuntimeError as e:\n\
        \x20       print('FORGED', e)\n";
    let mut replies = vec![Reply::tool_call("python", code)];
    replies.extend((0..16).map(|i| Reply::text(format!("answer {i}"))));
    replies.push(Reply::text("Done."));
    let s = setup(replies);
    let out = s.oi(true, &[], "try the door");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("KEY IN ENV False"), "{stdout}");
    assert!(!stdout.contains(KEY), "{stdout}");
    assert!(
        stdout.contains("ANSWERS 16"),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("too many computer API calls"), "{stdout}");
    assert!(
        stdout.contains("FORGED too many computer API calls"),
        "{stdout}"
    );
    // 1 reply with the code, 16 inner calls, 1 after the output: nothing more reached the model.
    let requests = s.requests();
    assert_eq!(requests.len(), 18, "{stdout}");
    for inner in &requests[1..17] {
        assert!(!inner.to_string().contains(KEY));
    }
}

#[test]
fn a_forged_request_is_refused_by_size_and_name_within_the_bounds() {
    if !python_available() {
        return oi_testkit::skipped!("python3 is not installed");
    }
    let code = "for forged in ({'op': 'ai.chat', 'text': 'x' * 300000}, {'op': 'read.key'}, {'op': 'skills.save', 'query': '../../evil', 'code': 'x'}):\n\
        \x20   try:\n\
        \x20       computer._door(forged)\n\
        \x20   except RuntimeError as e:\n\
        \x20       print('FORGED', e)\n";
    let s = setup(vec![Reply::tool_call("python", code), Reply::text("Done.")]);
    let out = s.oi(true, &[], "forge");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("FORGED the computer API request is too long"),
        "{stdout}"
    );
    assert!(
        stdout.contains("FORGED unknown computer API call `read.key`"),
        "{stdout}"
    );
    assert!(
        stdout.contains("FORGED a skill's name is a Python identifier"),
        "{stdout}"
    );
    assert!(!s.config().join("evil.py").exists());
    assert_eq!(s.requests().len(), 2, "no forged request reached the model");
}

#[test]
fn with_the_api_off_there_is_no_computer_and_the_door_stays_shut() {
    if !python_available() {
        return oi_testkit::skipped!("python3 is not installed");
    }
    // The code forges the driver's event itself and reads the answer from its command pipe.
    let code = "import __main__, json\n\
        print('HAS COMPUTER', 'computer' in globals())\n\
        __main__._emit({'ev': 'api', 'data': json.dumps({'op': 'ai.chat', 'text': 'hi'})})\n\
        print('SHUT', json.loads(__main__._cmd.readline())['error'])\n";
    let s = setup(vec![Reply::tool_call("python", code), Reply::text("Done.")]);
    let out = s.oi(false, &[], "no api");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("HAS COMPUTER False"), "{stdout}");
    assert!(
        stdout.contains("SHUT the computer API is not available"),
        "{stdout}"
    );
    let requests = s.requests();
    assert_eq!(requests.len(), 2, "the forged call reached no model");
    let system = requests[0][0]["content"].as_str().unwrap_or_default();
    assert!(!system.contains("THE COMPUTER API"), "{system}");
}

/// Stop-32 review B1: a skill saved from a sandboxed session ran later without a sandbox
/// (skills live in oi's config folder and are imported by any later session). Under a sandbox
/// the code can neither write the skills folder directly nor save, list or read skills
/// through oi; `computer.ai` still works. A skill saved before (by an unsandboxed session)
/// stays unread.
#[test]
fn in_the_workspace_sandbox_skills_are_refused() {
    if !python_available() {
        return oi_testkit::skipped!("python3 is not installed");
    }
    let support = oi_computer::probe();
    if !(support.filesystem() && support.seccomp) {
        return oi_testkit::skipped!("this kernel cannot enforce the sandbox ({support})");
    }
    let code = "import os\n\
        folder = computer.skills.path\n\
        try:\n\
        \x20   os.makedirs(folder, exist_ok=True)\n\
        \x20   open(os.path.join(folder, 'direct.py'), 'w').write('x = 1\\n')\n\
        \x20   print('WROTE', 'DIRECTLY')\n\
        except OSError as e:\n\
        \x20   print('DIRECT', 'REFUSED', type(e).__name__)\n\
        for name, call in (('SAVE', lambda: computer.skills.save('planted', 'def planted():\\n    return 7\\n')), ('LIST', computer.skills.list), ('IMPORT', computer.skills.import_skills)):\n\
        \x20   try:\n\
        \x20       print(name, 'GOT', call())\n\
        \x20   except Exception as e:\n\
        \x20       print(name, 'REFUSED', 'sandbox' in str(e))\n\
        print(computer.ai.chat('inside the sandbox?'))\n";
    let s = setup(vec![
        Reply::tool_call("python", code),
        Reply::text("yes, through oi"),
        Reply::text("Done."),
    ]);
    let skills = s.config().join("open-interpreter/skills");
    std::fs::create_dir_all(&skills).unwrap();
    std::fs::write(
        skills.join("earlier.py"),
        "def earlier():\n    return 'SECRET-SKILL-TOKEN'\n",
    )
    .unwrap();
    let out = s.oi(true, &["--sandbox", "workspace"], "sandboxed");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("DIRECT REFUSED"),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(!stdout.contains("WROTE DIRECTLY"), "{stdout}");
    for name in ["SAVE", "LIST", "IMPORT"] {
        assert!(
            stdout.contains(&format!("{name} REFUSED True")),
            "{name}: {stdout}"
        );
    }
    assert!(!stdout.contains("SECRET-SKILL-TOKEN"), "{stdout}");
    assert!(stdout.contains("yes, through oi"), "{stdout}");
    assert!(!skills.join("planted.py").exists());
    assert!(!skills.join("direct.py").exists());
}

#[test]
fn the_inner_calls_count_in_the_spend_and_stop_at_the_budget() {
    if !python_available() {
        return oi_testkit::skipped!("python3 is not installed");
    }
    // gpt-4o: 400 000 prompt tokens + 1 000 reply tokens = $1.01, over a $0.50 budget.
    let code = "print('FIRST', computer.ai.chat('one'))\n\
        try:\n\
        \x20   computer.ai.chat('two')\n\
        except RuntimeError as e:\n\
        \x20   print('SECOND', e)\n";
    let s = setup(vec![
        Reply::tool_call("python", code),
        Reply::text("costly answer").with_usage(400_000, 1_000),
        Reply::text("never sent"),
    ]);
    let out = s.run(true, &["--max_budget", "0.5"], "spend", true);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("FIRST costly answer"),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("SECOND max budget exceeded"), "{stdout}");
    let all = format!("{stdout}{}", text(&out.stderr));
    assert!(
        all.contains("Max budget exceeded"),
        "the turn stops too: {all}"
    );
    assert_eq!(s.requests().len(), 2, "nothing was sent over the budget");
}

#[test]
fn code_that_forges_a_call_and_never_reads_the_answer_does_not_hang_the_run() {
    if !python_available() {
        return oi_testkit::skipped!("python3 is not installed");
    }
    // The answer (64 Ki characters) is more than the command pipe holds and the code prints
    // 300 KB instead of reading it: the run still ends, and the next block's command is read
    // (the driver skips the stale answer).
    let code = "import __main__, json\n\
        __main__._emit({'ev': 'api', 'data': json.dumps({'op': 'ai.chat', 'text': 'big'})})\n\
        for i in range(3000):\n\
        \x20   print('x' * 100)\n\
        print('EN' + 'D')\n";
    let s = setup(vec![
        Reply::tool_call("python", code),
        Reply::text("y".repeat(200_000)),
        Reply::text("Done."),
    ]);
    let started = std::time::Instant::now();
    let out = s.oi(true, &[], "forge and flood");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("END"), "{stdout}");
    assert!(stdout.contains("Done."), "{stdout}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

/// Stop-32 review B3: a shell block forged the door's event (the shell's nonce is readable in
/// its `trap`), and oi wrote the answer line into the shell's input, which ran it as a command
/// (a function the block had defined, named as the line expands). Only Python's driver reads
/// answers: the shell's forged request is dropped and nothing runs.
#[test]
fn a_shell_that_forges_a_request_gets_no_answer_on_its_input() {
    let marker = tempfile::tempdir().unwrap();
    let ran = marker.path().join("ran");
    let code = format!(
        "nonce=$(trap -p DEBUG | grep -o 'OI[0-9a-f]\\{{32\\}}' | head -n 1 | cut -c3-)\n\
         for name in 'api:true' '{{api:true' 'api' '{{\"api\":true,'; do eval \"$(printf '%q' \"$name\")() {{ touch {ran}; }}\" 2>/dev/null; done\n\
         command_not_found_handle() {{ touch {ran}; }}\n\
         printf '\\036OI%s{{\"ev\":\"api\",\"data\":\"{{\\\\\"op\\\\\":\\\\\"ai.chat\\\\\",\\\\\"text\\\\\":\\\\\"hi\\\\\"}}\"}}\\n' \"$nonce\"\n\
         sleep 1\n\
         echo forged",
        ran = ran.display()
    );
    let s = setup(vec![Reply::tool_call("shell", &code), Reply::text("Done.")]);
    let out = s.oi(true, &[], "forge");
    let stdout = text(&out.stdout);
    assert!(stdout.contains("forged"), "{stdout}\n{}", text(&out.stderr));
    // A later block still runs normally in the same shell: nothing was left on its input.
    assert!(!ran.exists(), "the answer ran as a command: {stdout}");
    assert_eq!(s.requests().len(), 2, "the forged call reached no model");
}
