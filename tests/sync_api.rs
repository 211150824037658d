//! The blocking face end to end: "compute 239023*79043" through the scripted calculator model
//! over real HTTP, with the code run by a real Python session.

#![allow(clippy::expect_used)]

mod common;

use std::sync::Arc;

use oi_core::{Decision, Message, OpenInterpreter, TurnEvent};
use oi_testkit::{Script, ScriptedServer};

fn start_calculator() -> (tokio::runtime::Runtime, ScriptedServer) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let server = runtime
        .block_on(ScriptedServer::start(Script::calculator()))
        .expect("server");
    (runtime, server)
}

fn open_interpreter(server: &ScriptedServer, tool_mode: bool) -> OpenInterpreter {
    let settings = common::settings(server, tool_mode);
    let model = Arc::new(oi_llm::OpenAiCompatible::new().with_env(oi_llm::Env::empty()));
    OpenInterpreter::new(
        settings,
        model,
        Arc::new(oi_computer::LocalComputer::new()),
        oi_judge::judge(),
    )
    .expect("interpreter")
}

#[test]
fn compute_in_tool_mode() {
    let (_runtime, server) = start_calculator();
    let oi = open_interpreter(&server, true);
    let new = oi.chat("compute 239023*79043").expect("turn");
    assert_eq!(
        new,
        [
            Message::code("python", "print(239023*79043)"),
            Message::console_output("18893094989\n"),
            Message::assistant("The result is 18893094989."),
        ]
    );
    assert_eq!(oi.messages()[0], Message::user("compute 239023*79043"));
}

#[test]
fn compute_in_text_mode_then_reset() {
    let (_runtime, server) = start_calculator();
    let oi = open_interpreter(&server, false);
    let new = oi.chat("compute 239023*79043").expect("turn");
    assert_eq!(
        new,
        [
            Message::assistant("Let me compute that.\n"),
            Message::code("python", "print(239023*79043)"),
            Message::console_output("18893094989\n"),
            Message::assistant("The result is 18893094989."),
        ]
    );
    oi.reset();
    assert!(oi.messages().is_empty());
}

#[test]
fn chat_with_a_list_replaces_history_and_the_session_persists() {
    let (_runtime, server) = start_calculator();
    let oi = open_interpreter(&server, true);
    oi.chat("compute 2*21").expect("first turn");
    let new = oi
        .chat(vec![Message::user("compute 6*7")])
        .expect("second turn");
    assert_eq!(new.last(), Some(&Message::assistant("The result is 42.")));
    assert_eq!(oi.messages().len(), 4, "the list replaced the first turn");
}

#[test]
fn chat_with_declines_and_streams() {
    let (_runtime, server) = start_calculator();
    let oi = open_interpreter(&server, true);
    oi.settings_mut().auto_run = false;
    let new = oi
        .chat_with("compute 1+1", |_| Decision::Decline)
        .expect("turn");
    assert_eq!(
        new,
        [
            Message::code("python", "print(1+1)"),
            Message::user("I have declined to run this code.")
        ]
    );
    let mut outputs = String::new();
    let mut asked = 0;
    for event in oi.chat_stream("compute 2+2") {
        match event {
            TurnEvent::Chunk(chunk) if chunk.has_format("output") => {
                outputs.push_str(chunk.text().unwrap_or(""));
            }
            TurnEvent::Approval(request) => {
                asked += 1;
                assert_eq!(request.code(), "print(2+2)");
                request.approve();
            }
            TurnEvent::Error(error) => panic!("{error}"),
            _ => {}
        }
    }
    assert_eq!(
        (outputs.as_str(), asked),
        ("4\n", 1),
        "the approved block ran"
    );
}

#[test]
fn history_is_saved_atomically_as_a_json_list() {
    let (_runtime, server) = start_calculator();
    let dir = tempfile::tempdir().expect("tempdir");
    let oi = open_interpreter(&server, true);
    {
        let mut settings = oi.settings_mut();
        settings.conversation_history = true;
        settings.conversation_history_path = Some(dir.path().to_owned());
    }
    oi.chat("compute 3*3").expect("turn");
    let files: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let name = files[0]
        .file_name()
        .and_then(|n| n.to_str())
        .expect("name")
        .to_owned();
    assert!(
        name.starts_with("compute__") && name.ends_with(".json"),
        "{name}"
    );
    let saved = oi_core::history::load(&files[0]).expect("valid");
    assert_eq!(saved, oi.messages());
}
