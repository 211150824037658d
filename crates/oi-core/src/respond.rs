//! The respond loop (spec b): from the user's message to the code's output and back to the
//! model, as named steps. Each step is a function below that ends with the [`Next`] step:
//!
//! 1. [`ask_model`]: the system message (`system_message`) and the model request, whose reply
//!    streams through the [`Framer`] (which stores messages and adds `start`/`end` flags);
//! 2. [`read_reply`]: the code block that ends the reply, repaired (`repair`) and its language
//!    resolved once to its canonical name — or, without code, continue or stop;
//! 3. [`approve`]: the judge's verdict and, when the rules say so, the user's approval;
//! 4. [`run_block`]: the code runs on the computer and its output streams back;
//! 5. continue or stop: after a reply and after a run, [`TurnState`] decides ([`Next`]).
//!
//! [`respond`] only sequences them and passes their events on.

use std::sync::Arc;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};

use crate::approval::{ApprovalRequest, Decision};
use crate::computer::Computer;
use crate::framing::{Framer, FramerOptions};
use crate::lmc::{Chunk, Content, Kind, Message, Role};
use crate::model::{LanguageModel, ModelDelta, ModelRequest};
use crate::policy::{Judge, Rules, Verdict};
use crate::prompts;
use crate::repair::{self, CodePlan};
use crate::settings::Settings;
use crate::state::Shared;
use crate::system_message::system_message;
use crate::turn::{TurnError, TurnEvent};
use crate::turn_state::{Block, Extra, Next, TurnState};

/// Everything one turn needs.
pub(crate) struct TurnContext {
    pub shared: Arc<Shared>,
    pub settings: Settings,
    pub model: Arc<dyn LanguageModel>,
    pub computer: Arc<dyn Computer>,
    /// Decides what happens to each code block.
    pub judge: Arc<dyn Judge>,
    /// Save the conversation when the turn ends.
    pub save_history: bool,
}

/// The framer plus the conversation it stores into.
struct Store {
    framer: Framer,
    shared: Arc<Shared>,
}

impl Store {
    /// A store for a turn under `settings`, into the conversation of `shared`.
    fn new(settings: &Settings, shared: Arc<Shared>) -> Self {
        Store {
            framer: Framer::new(FramerOptions {
                max_output: settings.max_output,
                add_scrollbars: settings.import_computer_api,
            }),
            shared,
        }
    }

    /// Stores `chunk` and returns the events to pass on.
    fn push(&mut self, chunk: Chunk) -> Vec<TurnEvent> {
        let mut messages = self.shared.messages();
        self.framer
            .push(chunk, &mut messages)
            .into_iter()
            .map(TurnEvent::Chunk)
            .collect()
    }

    /// Closes the open run: its `end` flag, if one is open.
    fn close(&mut self) -> Option<TurnEvent> {
        self.framer.close().map(TurnEvent::Chunk)
    }
}

/// The request for the next reply: the system message, the conversation, and the extra
/// (loop mode's loop message or a hidden note of the repair step: sent, never stored).
fn model_request(ctx: &TurnContext, system: String, extra: Extra) -> ModelRequest {
    let mut messages = vec![Message::new(Role::System, Kind::Message, system)];
    messages.extend(ctx.shared.messages().iter().cloned());
    match extra {
        Extra::Nothing => {}
        Extra::LoopMessage => messages.push(Message::user(ctx.settings.loop_message.clone())),
        Extra::Note(note) => messages.push(Message::user(note)),
    }
    ModelRequest {
        messages,
        languages: ctx
            .computer
            .languages()
            .iter()
            .map(|l| l.canonical())
            .collect(),
        llm: ctx.settings.llm.clone(),
        templates: ctx.settings.templates(),
        tools: ctx.computer.tools(),
    }
}

/// The chunk a reply delta becomes; usage is counted, not shown.
fn delta_chunk(shared: &Shared, delta: ModelDelta) -> Option<Chunk> {
    match delta {
        ModelDelta::Message(text) => Some(Chunk::assistant_message(text)),
        ModelDelta::Code { language, code } => Some(Chunk::assistant_code(&language, code)),
        ModelDelta::Usage(usage) => {
            tracing::info!(
                prompt_tokens = usage.prompt_tokens,
                reply_tokens = usage.reply_tokens,
                cost = ?usage.cost,
                "the request's usage"
            );
            shared.spend(&usage);
            None
        }
    }
}

/// The budget error when `max_budget` is set and this session has spent it.
fn over_budget(settings: &Settings, shared: &Shared) -> Option<TurnError> {
    let budget = settings.llm.max_budget?;
    let spent = shared.spent();
    (spent >= budget).then_some(TurnError::Budget { spent, budget })
}

/// The last stored message, if it is code: (language, code).
fn pending_code(shared: &Shared) -> Option<(String, String)> {
    let messages = shared.messages();
    let last = messages
        .last()
        .filter(|m| m.kind == Kind::Code && m.role == Role::Assistant)?;
    Some((
        last.format.clone().unwrap_or_default(),
        last.text().to_owned(),
    ))
}

/// Rewrites the last (code) message so the model sees the repaired code.
fn store_repaired(shared: &Shared, language: &str, code: &str) {
    let mut messages = shared.messages();
    if let Some(last) = messages.last_mut() {
        last.format = Some(language.to_owned());
        last.content = Content::Text(code.to_owned());
    }
}

/// Replaces the last (code) message with a plain assistant message.
fn store_note(shared: &Shared, text: String) {
    let mut messages = shared.messages();
    if let Some(last) = messages.last_mut() {
        *last = Message::assistant(text);
    }
}

/// The code to run after approval: the stored code, or the consumer's edit of it.
fn code_after_decision(shared: &Shared, decision: Decision, code: String) -> String {
    let Decision::Edit(edited) = decision else {
        return code;
    };
    let mut messages = shared.messages();
    if let Some(last) = messages.last_mut().filter(|m| m.kind == Kind::Code) {
        last.content = Content::Text(edited.clone());
    }
    edited
}

/// The judge's verdict on one block, reached on a blocking thread so that a slow judgement
/// never holds up the runtime's threads (other sessions, `/heartbeat`). A judge that panics
/// blocks the block.
async fn judge_block(judge: &Arc<dyn Judge>, rules: &Rules, language: &str, code: &str) -> Verdict {
    let (judge, rules) = (judge.clone(), rules.clone());
    let (language, code) = (language.to_owned(), code.to_owned());
    let verdict = tokio::task::spawn_blocking(move || judge.judge(&rules, &language, &code)).await;
    verdict.unwrap_or_else(|error| {
        tracing::warn!(%error, "the judge failed");
        Verdict::Block(
            "oi blocked this code: its judge failed while reading it; nothing was run.".to_owned(),
        )
    })
}

/// What a step yields: an event to pass on, or (last) the step to take next.
enum Flow {
    /// An event for whoever drives the turn.
    Event(TurnEvent),
    /// The step to take next.
    Then(Next),
}

/// Step 1, the model request: stops when the turn goes round without progress or the budget is
/// spent, else composes the system message, asks the model and streams its reply into the
/// conversation (starting the session of a block's language while the block streams). Skipped
/// when the conversation ends in a block not yet read.
fn ask_model<'a>(
    ctx: &'a TurnContext,
    store: &'a mut Store,
    state: &'a mut TurnState,
    extra: Extra,
) -> BoxStream<'a, Flow> {
    async_stream::stream! {
        if ctx.shared.messages().is_empty() {
            yield Flow::Then(Next::Fail(TurnError::NoMessage));
            return;
        }
        if pending_code(&ctx.shared).is_some() {
            yield Flow::Then(Next::Read);
            return;
        }
        if let Some(stop) = state.before_request() {
            yield Flow::Then(stop);
            return;
        }
        if let Some(error) = over_budget(&ctx.settings, &ctx.shared) {
            tracing::info!(%error, "the budget is spent: nothing more is sent");
            yield Flow::Then(Next::Fail(error));
            return;
        }
        let system = system_message(&ctx.settings, &ctx.computer).await;
        let loop_message = extra == Extra::LoopMessage;
        let request = model_request(ctx, system, extra);
        tracing::info!(
            model = %request.llm.model,
            messages = request.messages.len(),
            loop_message,
            "asking the model"
        );
        if loop_message {
            for e in store.push(Chunk::assistant_message("\n\n")) { yield Flow::Event(e); }
        }
        let mut reply = ctx.model.stream(request);
        while let Some(item) = reply.next().await {
            match item {
                Ok(delta) => {
                    state.prepare_early(ctx.computer.as_ref(), &delta);
                    let Some(chunk) = delta_chunk(&ctx.shared, delta) else { continue };
                    for e in store.push(chunk) { yield Flow::Event(e); }
                }
                Err(error) => {
                    tracing::info!(%error, "the model's reply failed; the turn ends");
                    yield Flow::Then(Next::Fail(TurnError::Model(error)));
                    return;
                }
            }
        }
        yield Flow::Then(Next::Read);
    }
    .boxed()
}

/// Step 2, reply handling: the block that ends the reply is repaired (and stored so), its
/// language resolved to the canonical name, and planned; a reply without code is the turn
/// state's to decide (a retry, loop mode, or the end).
fn read_reply(ctx: &TurnContext, state: &mut TurnState) -> Next {
    let Some((language, code)) = pending_code(&ctx.shared) else {
        return state.after_reply_without_code(&ctx.settings, &ctx.shared);
    };
    let (written, code) = repair::repair(&language, &code);
    store_repaired(&ctx.shared, &written, &code);
    let plan = state.plan(&written, &code);
    tracing::debug!(language = %written, code_bytes = code.len(), ?plan, "code block read");
    if let CodePlan::Note(text) = &plan {
        store_note(&ctx.shared, text.clone());
    }
    state.after_plan(plan, written)
}

/// Step 3, approval: the block's `end` flag goes out, the judge reads it in its session's
/// directory, and a block the rules do not run or block outright waits for the user's
/// decision (an edit replaces the stored code; a decline ends the turn).
fn approve<'a>(
    ctx: &'a TurnContext,
    store: &'a mut Store,
    state: &'a mut TurnState,
    block: Block,
) -> BoxStream<'a, Flow> {
    async_stream::stream! {
        if let Some(end) = store.close() { yield Flow::Event(end); }
        let rules = state.rules().clone().in_session(ctx.computer.session_dir(&block.language));
        let verdict = judge_block(&ctx.judge, &rules, &block.language, &block.code).await;
        tracing::info!(language = %block.language, ?verdict, "approval rules judged the block");
        let decision = match verdict {
            Verdict::Block(reason) => {
                yield Flow::Then(state.after_block(reason, &block.code));
                return;
            }
            Verdict::Run => Decision::Approve,
            Verdict::Ask => {
                let id = ctx.shared.next_approval_id();
                let (request, pending) = ApprovalRequest::new(id, &block.written, &block.code);
                yield Flow::Event(TurnEvent::Approval(request));
                let decision = pending.wait().await;
                tracing::info!(id, ?decision, "the approval request was answered");
                decision
            }
        };
        if decision == Decision::Decline {
            ctx.shared.messages().push(Message::user(prompts::DECLINED_MESSAGE));
            yield Flow::Then(Next::Stop(None));
            return;
        }
        let code = code_after_decision(&ctx.shared, decision, block.code);
        yield Flow::Then(Next::Run(Block { code, ..block }));
    }
    .boxed()
}

/// Step 4, the run: the computer runs the block in its language's session under the run's
/// policy and its output streams into the conversation; then the turn state decides whether
/// to go on (step 5).
fn run_block<'a>(
    ctx: &'a TurnContext,
    store: &'a mut Store,
    state: &'a mut TurnState,
    block: Block,
) -> BoxStream<'a, Flow> {
    async_stream::stream! {
        tracing::info!(language = %block.language, "running the code");
        let policy = ctx.settings.run_policy(&block.language);
        let mut output = ctx.computer.run(&block.language, &block.code, &policy);
        let mut run = state.start_run(&block);
        while let Some(piece) = output.next().await {
            let chunk = piece.into_chunk();
            // The text only: the same output however it is cut into pieces.
            run.saw(chunk.text().unwrap_or(""));
            for e in store.push(chunk) { yield Flow::Event(e); }
        }
        for e in store.push(Chunk::active_line(None)) { yield Flow::Event(e); }
        let next = state.after_run(run, &ctx.shared.messages());
        yield Flow::Then(next);
    }
    .boxed()
}

/// Saves the conversation when the turn and the settings say so.
fn save(ctx: &TurnContext) -> Result<(), TurnError> {
    let dir = ctx.settings.conversations_dir();
    match dir.filter(|_| ctx.save_history && ctx.settings.conversation_history) {
        Some(dir) => crate::save::save_history(&ctx.shared, &dir),
        None => Ok(()),
    }
}

/// The respond loop as a stream of turn events: framed chunks, approval requests, and one
/// last `Complete` or `Error`. It takes the step each step names next, from asking the
/// model until a step says stop.
pub(crate) fn respond(ctx: TurnContext) -> impl Stream<Item = TurnEvent> + Send + 'static {
    async_stream::stream! {
        let mut store = Store::new(&ctx.settings, ctx.shared.clone());
        let mut state = TurnState::new(&ctx.settings, ctx.computer.languages());
        let mut next = Next::Ask(Extra::Nothing);
        loop {
            let mut step = match next {
                Next::Ask(extra) => ask_model(&ctx, &mut store, &mut state, extra),
                Next::Read => {
                    next = read_reply(&ctx, &mut state);
                    continue;
                }
                Next::Approve(block) => approve(&ctx, &mut store, &mut state, block),
                Next::Run(block) => run_block(&ctx, &mut store, &mut state, block),
                Next::Say(text) => {
                    for e in store.push(Chunk::console_output(text)) { yield e; }
                    next = Next::Ask(Extra::Nothing);
                    continue;
                }
                Next::Stop(text) => {
                    for e in text.into_iter().flat_map(|t| store.push(Chunk::console_output(t))) { yield e; }
                    break;
                }
                Next::Fail(error) => {
                    if let Some(end) = store.close() { yield end; }
                    yield TurnEvent::Error(error);
                    return;
                }
            };
            next = Next::Stop(None);
            while let Some(flow) = step.next().await {
                match flow {
                    Flow::Event(event) => yield event,
                    Flow::Then(then) => next = then,
                }
            }
        }
        if let Some(end) = store.close() { yield end; }
        if let Err(error) = save(&ctx) {
            yield TurnEvent::Error(error);
            return;
        }
        yield TurnEvent::Complete;
    }
}
