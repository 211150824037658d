//! An in-process session for the engine's tests: a model that streams its scripted replies
//! one delta every [`PACE`] (so a turn can be stopped half-way, under paused time), a
//! recording computer, a judge that asks about every block, and helpers that read the output.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use oi_core::{
    Chunk, Interpreter, Judge, Kind, LanguageModel, LlmSettings, Message, ModelDelta, ModelRequest,
    ModelStream, Role, Rules, Settings, Verdict,
};
use oi_session::{AsyncInterpreter, Input, InputRef, InterruptMode, Outgoing, Step};
use oi_testkit::RecordingComputer;

/// How long the model takes for each delta.
pub const PACE: Duration = Duration::from_millis(10);

/// One scripted reply: deltas, then the end of the stream or (`hang`) nothing more, ever.
#[derive(Clone, Default)]
pub struct Reply {
    deltas: Vec<ModelDelta>,
    hang: bool,
}

impl Reply {
    /// `n` text deltas `"{tag}0 "`, `"{tag}1 "`, …
    pub fn words(tag: &str, n: usize) -> Self {
        Reply {
            deltas: (0..n)
                .map(|i| ModelDelta::Message(format!("{tag}{i} ")))
                .collect(),
            hang: false,
        }
    }

    /// One code block.
    pub fn code(code: &str) -> Self {
        Reply {
            deltas: vec![ModelDelta::Code {
                language: "python".to_owned(),
                code: code.to_owned(),
            }],
            hang: false,
        }
    }

    /// The same reply, then nothing more, ever.
    pub fn hang(mut self) -> Self {
        self.hang = true;
        self
    }
}

/// Counts a model stream while it is alive.
struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A model that streams its replies, one per request, at [`PACE`].
#[derive(Clone, Default)]
pub struct PacedModel {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    /// Streams not yet dropped.
    open: Arc<AtomicUsize>,
}

impl PacedModel {
    /// How many of its streams are alive (a stopped turn drops its stream).
    pub fn open_streams(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }
}

impl LanguageModel for PacedModel {
    fn uses_tool_calls(&self, _llm: &LlmSettings) -> bool {
        true
    }

    fn stream(&self, _request: ModelRequest) -> ModelStream {
        let reply = self
            .replies
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_else(|| Reply::words("spare", 1));
        self.open.fetch_add(1, Ordering::SeqCst);
        let open = Open(self.open.clone());
        let state = (reply.deltas.into_iter(), reply.hang, open);
        futures::stream::unfold(state, |(mut deltas, hang, open)| async move {
            tokio::time::sleep(PACE).await;
            match deltas.next() {
                Some(delta) => Some((Ok(delta), (deltas, hang, open))),
                None if hang => std::future::pending().await,
                None => None,
            }
        })
        .boxed()
    }
}

/// Asks about every block.
struct AskAlways;

impl Judge for AskAlways {
    fn judge(&self, _rules: &Rules, _language: &str, _code: &str) -> Verdict {
        Verdict::Ask
    }
}

/// A session under test.
pub struct Rig {
    pub oi: AsyncInterpreter,
    pub model: PacedModel,
    pub computer: RecordingComputer,
}

/// A session whose model gives `replies`, in `mode`.
pub fn rig(mode: InterruptMode, replies: impl IntoIterator<Item = Reply>) -> Rig {
    let model = PacedModel::default();
    model.replies.lock().unwrap().extend(replies);
    let computer = RecordingComputer::new();
    let settings = Settings {
        system_message: "You are oi under test.".to_owned(),
        conversation_history: false,
        ..Settings::default()
    };
    let interpreter = Interpreter::new(
        settings,
        Arc::new(model.clone()),
        Arc::new(computer.clone()),
        Arc::new(AskAlways),
    );
    Rig {
        oi: AsyncInterpreter::new(interpreter, mode),
        model,
        computer,
    }
}

/// Input `number` of connection `connection`.
pub fn input(connection: u64, number: u64) -> Option<InputRef> {
    Some(InputRef { connection, number })
}

/// Sends a user message as a connection does: its `start`, then its `end`.
pub fn say(oi: &AsyncInterpreter, text: &str, answers: Option<InputRef>) {
    oi.act(Step::Opened, answers);
    oi.act(
        Step::Ended(Input::Messages(vec![Message::user(text)])),
        answers,
    );
}

/// Sends a command (`go`, `stop`) as a connection does.
pub fn command(oi: &AsyncInterpreter, input: Input, answers: Option<InputRef>) {
    oi.act(Step::Opened, answers);
    oi.act(Step::Ended(input), answers);
}

/// A marker chunk put on the output (it goes out after everything the commands sent before it
/// put there).
pub fn marker(oi: &AsyncInterpreter, name: &str) {
    oi.emit(Chunk::console_output(format!("marker {name}")));
}

/// Whether `out` is the marker `name`.
pub fn is_marker(out: &Outgoing, name: &str) -> bool {
    out.chunk.text() == Some(format!("marker {name}").as_str())
}

/// Whether `out` is a `complete`.
pub fn is_complete(out: &Outgoing) -> bool {
    out.chunk == Chunk::complete()
}

/// Whether `out` is an error chunk.
pub fn is_error(out: &Outgoing) -> bool {
    out.chunk.role == Role::Server && out.chunk.kind == Some(Kind::Error)
}

/// Whether `out` is a confirmation chunk.
pub fn is_confirmation(out: &Outgoing) -> bool {
    out.chunk.kind == Some(Kind::Confirmation)
}

/// Whether `out` carries text that starts with `tag` (a word of that reply).
pub fn has_word(out: &Outgoing, tag: &str) -> bool {
    out.chunk.text().is_some_and(|text| text.starts_with(tag))
}

/// The next outgoing chunk; panics when none comes within a minute (of paused time).
pub async fn next(oi: &AsyncInterpreter) -> Outgoing {
    tokio::time::timeout(Duration::from_secs(60), oi.next_out())
        .await
        .expect("a chunk within a minute")
        .expect("the output is open")
}

/// Everything up to and including the next `complete`.
pub async fn until_complete(oi: &AsyncInterpreter) -> Vec<Outgoing> {
    let mut got = Vec::new();
    loop {
        let out = next(oi).await;
        let done = is_complete(&out);
        got.push(out);
        if done {
            return got;
        }
    }
}

/// Everything up to and including `pred`'s first match.
pub async fn until(oi: &AsyncInterpreter, pred: impl Fn(&Outgoing) -> bool) -> Vec<Outgoing> {
    let mut got = Vec::new();
    loop {
        let out = next(oi).await;
        let done = pred(&out);
        got.push(out);
        if done {
            return got;
        }
    }
}

/// Asserts that nothing goes out for a while (far longer than a reply takes).
pub async fn quiet(oi: &AsyncInterpreter) {
    if let Ok(out) = tokio::time::timeout(Duration::from_secs(5), oi.next_out()).await {
        panic!("nothing should go out, got {out:?}");
    }
}
