//! Shared set-up: a real scripted model server, the real OpenAI-compatible provider and the real
//! local computer, wired into the real core.

#![allow(dead_code, clippy::expect_used, clippy::unwrap_used)]

use std::sync::Arc;

use futures::StreamExt;
use oi_core::{ApprovalRequest, Chunk, Interpreter, Message, Settings, Turn, TurnEvent};
use oi_testkit::{Script, ScriptedServer};

/// Settings for tests: auto_run on, a short fixed system message (the default names the user),
/// no history files, the scripted server as the model.
pub fn settings(server: &ScriptedServer, tool_mode: bool) -> Settings {
    let mut settings = Settings {
        auto_run: true,
        system_message: "You are oi under test.".to_owned(),
        conversation_history: false,
        ..Settings::default()
    };
    settings.llm.model = "gpt-4o".to_owned();
    settings.llm.api_base = Some(server.base_url());
    settings.llm.api_key = Some("test-key".to_owned());
    settings.llm.supports_functions = Some(tool_mode);
    settings
}

/// An interpreter over the real provider and computer.
pub fn interpreter(settings: Settings) -> Interpreter {
    let model = Arc::new(oi_llm::OpenAiCompatible::new().with_env(oi_llm::Env::empty()));
    let computer = Arc::new(oi_computer::LocalComputer::new());
    Interpreter::new(settings, model, computer, oi_judge::judge())
}

/// Starts the scripted server and an interpreter talking to it.
pub async fn setup(
    script: Script,
    tool_mode: bool,
    adjust: impl FnOnce(&mut Settings),
) -> (ScriptedServer, Interpreter) {
    let server = ScriptedServer::start(script)
        .await
        .expect("scripted server starts");
    let mut settings = settings(&server, tool_mode);
    adjust(&mut settings);
    (server, interpreter(settings))
}

/// One JSON line per item, for snapshots that read like the wire.
pub fn json_lines<T: serde::Serialize>(items: &[T]) -> String {
    items
        .iter()
        .map(|i| serde_json::to_string(i).expect("serialises"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The chunk stream as JSON lines, with consecutive console `output` chunks joined: how a
/// program's output is cut into reads depends on timing, everything else is deterministic.
pub fn wire(chunks: &[Chunk]) -> String {
    let mut joined: Vec<Chunk> = Vec::new();
    for chunk in chunks {
        if let Some(prev) = joined.last_mut().filter(|p| {
            p.has_format("output") && chunk.has_format("output") && p.role == chunk.role
        }) {
            let text = format!(
                "{}{}",
                prev.text().unwrap_or(""),
                chunk.text().unwrap_or("")
            );
            prev.content = Some(oi_core::Content::Text(text));
            continue;
        }
        joined.push(chunk.clone());
    }
    json_lines(&joined)
}

/// Reads a whole turn as wire chunks (an approval request shows as its confirmation chunk);
/// `decide` answers each approval request. Panics if the turn fails.
pub async fn drain(mut turn: Turn, mut decide: impl FnMut(ApprovalRequest)) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    while let Some(event) = turn.next().await {
        match event {
            TurnEvent::Chunk(chunk) => chunks.push(chunk),
            TurnEvent::Approval(request) => {
                chunks.push(request.confirmation());
                decide(request);
            }
            TurnEvent::Error(error) => panic!("the turn failed: {error}"),
            TurnEvent::Complete => {}
        }
    }
    chunks
}

/// The stored conversation as JSON lines.
pub fn stored(interpreter: &Interpreter) -> String {
    json_lines(&interpreter.messages())
}

/// The messages the model received in request `n` (0-based), as JSON lines.
pub fn sent_messages(server: &ScriptedServer, n: usize) -> String {
    let requests = server.requests();
    let messages = requests[n].body["messages"]
        .as_array()
        .expect("messages")
        .clone();
    json_lines(&messages)
}

/// Shorthand for a stored message list.
pub fn messages(list: &[Message]) -> String {
    json_lines(list)
}
