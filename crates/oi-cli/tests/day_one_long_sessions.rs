//! Long sessions do not fail at the provider: the real `oi` trims every request to the model
//! table's context window without any flag, keeps the system message and the newest messages,
//! and says once, in the reply the user sees, that older messages were left out.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

use oi_testkit::{RecordedRequest, Reply, Script, ScriptedServer};
use serde_json::Value;

const SYSTEM: &str = "You are oi under a long test.";

fn oi(server: &ScriptedServer, args: &[&str], stdin: &str) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_oi"))
        .args(["--api_base", &server.base_url(), "--api_key", "k", "-y"])
        .args(["--system_message", SYSTEM])
        .args(args)
        .current_dir(home.path())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let text = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(text.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn messages(request: &RecordedRequest) -> Vec<(String, String)> {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_owned(),
                m["content"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn characters(request: &RecordedRequest) -> usize {
    messages(request)
        .iter()
        .map(|(_, c)| c.chars().count())
        .sum()
}

#[test]
fn a_million_characters_to_gpt_4o_without_a_flag_fit_its_window() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(ScriptedServer::start(Script::new([Reply::text(
            "Read it.",
        )])))
        .unwrap();
    let message = format!("{}the end", "lorem ipsum dolor sit amet ".repeat(37_037));
    assert!(message.len() > 1_000_000);
    let out = oi(&server, &["-m", "gpt-4o", "-s"], &message);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Read it."), "{stdout}");
    let sent = server.requests().pop().unwrap();
    let sent_messages = messages(&sent);
    // The packaged profile imports the computer API, whose section follows the message.
    assert_eq!(sent_messages[0].0, "system");
    assert!(
        sent_messages[0].1.starts_with(SYSTEM),
        "{:?}",
        sent_messages[0]
    );
    let user = &sent_messages.last().unwrap().1;
    assert!(
        user.starts_with("lorem ipsum") && user.ends_with("the end"),
        "the newest text is kept from both ends"
    );
    assert!(user.contains("..."), "shortened from the middle");
    // gpt-4o: 128 000 tokens less 16 384 for the reply; these words are about 1 token each
    // 4-6 characters, so the request is far below the million characters and within the window.
    let chars = characters(&sent);
    assert!(chars < 700_000, "{chars} characters were sent");
    assert!(
        chars > 100_000,
        "only {chars} characters were sent: trimmed far too much"
    );
}

#[test]
fn a_conversation_past_the_window_keeps_the_system_and_newest_and_says_so_once() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let turns = 6;
    let replies: Vec<Reply> = (1..=turns)
        .map(|i| Reply::text(format!("Noted {i}.")))
        .collect();
    let server = runtime
        .block_on(ScriptedServer::start(Script::new(replies)))
        .unwrap();
    // gpt-4: an 8 192-token window (the model table), less 1 638 for the reply; each message
    // is about 2 000 tokens, so from the fourth turn on older messages must go.
    let mut input = String::new();
    for i in 1..=turns {
        input.push_str(&format!(
            "message {i}: {}\n",
            "alpha beta gamma delta ".repeat(500)
        ));
    }
    let out = oi(&server, &["-m", "gpt-4"], &input);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), turns, "{stdout}");
    for (i, request) in requests.iter().enumerate() {
        let sent = messages(request);
        assert_eq!(sent[0].0, "system");
        assert!(sent[0].1.starts_with(SYSTEM), "{:?}", sent[0]);
        let newest = &sent.last().unwrap().1;
        assert!(
            newest.starts_with(&format!("message {}:", i + 1)),
            "turn {i}: {newest:.40}"
        );
        // These words are at most 6 characters a token: 8 192 tokens are under 49 152
        // characters, while the whole conversation is 69 000 by the last turn.
        assert!(
            characters(request) < 8_192 * 6,
            "turn {i}: {} characters",
            characters(request)
        );
        for (role, content) in &sent {
            assert!(
                !content.contains("oi left out"),
                "the note went back to the model ({role})"
            );
        }
    }
    let last = messages(requests.last().unwrap());
    assert!(
        !last.iter().any(|(_, c)| c.starts_with("message 1:")),
        "the oldest message was left out"
    );
    let notes = stdout.matches("oi left out the").count();
    assert_eq!(notes, 1, "the note is shown once: {stdout}");
    let note_at = stdout.find("oi left out the").unwrap();
    assert!(
        stdout[note_at..].contains("gpt-4") && stdout[note_at..].contains("--context_window"),
        "{stdout}"
    );
}

#[test]
fn the_context_window_flag_still_wins() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(ScriptedServer::start(Script::new([Reply::text("ok")])))
        .unwrap();
    let message = "zeta eta theta ".repeat(20_000);
    let out = oi(
        &server,
        &["-m", "gpt-4o", "--context_window", "2000", "-s"],
        &message,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent = server.requests().pop().unwrap();
    assert!(characters(&sent) < 2_000 * 6, "{}", characters(&sent));
    let body: &Value = &sent.body;
    assert!(
        body.get("max_tokens").is_none(),
        "no max_tokens is sent unless set"
    );
}
