//! The respond loop (spec b): build the prompt → stream the model → check the code → ask for
//! approval → run → feed the output back → repeat until a reply has no code.
//!
//! Each step is a small function; the generator at the bottom only sequences them and passes
//! every chunk through the [`Framer`], which stores messages and adds `start`/`end` flags.

use std::sync::Arc;

use futures::{Stream, StreamExt};

use crate::approval::{ApprovalRequest, Decision};
use crate::computer::{Computer, find_language};
use crate::framing::{Framer, FramerOptions};
use crate::lmc::{Chunk, Content, Kind, Message, Role};
use crate::model::{LanguageModel, ModelDelta, ModelRequest};
use crate::policy::{Judge, Rules, Verdict};
use crate::prompts;
use crate::repair::{self, CodePlan};
use crate::settings::Settings;
use crate::state::Shared;
use crate::turn::{TurnError, TurnEvent};
use crate::{repair_hints, repair_step};

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

/// Composes the system message (spec b.1): base, custom instructions, then renders `{{ }}`.
async fn system_message(settings: &Settings, computer: &Arc<dyn Computer>) -> String {
    let mut text = settings.system_message.clone();
    if !settings.custom_instructions.is_empty() {
        text.push_str("\n\n");
        text.push_str(&settings.custom_instructions);
    }
    if settings.import_computer_api && !text.contains(prompts::COMPUTER_API_SYSTEM_MESSAGE) {
        text.push_str("\n\n");
        text.push_str(prompts::COMPUTER_API_SYSTEM_MESSAGE);
    }
    if text.contains("{{") {
        render_templates(&text, computer, &settings.computer).await
    } else {
        text
    }
}

/// Replaces each `{{ code }}` block with the console output of running it in Python.
async fn render_templates(
    text: &str,
    computer: &Arc<dyn Computer>,
    policy: &crate::settings::computer::ComputerSettings,
) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open..].find("}}") else {
            break;
        };
        out.push_str(&rest[..open]);
        // `{{ expr }}` is written with spaces: the code is stripped (and dedented) first.
        let code = template_code(&rest[open + 2..open + close]);
        let mut outputs = Vec::new();
        let mut stream = computer.run("python", &code, policy);
        while let Some(output) = stream.next().await {
            if output.kind == Kind::Console && output.format.as_deref() == Some("output") {
                if let Content::Text(t) = output.content {
                    if !t.contains("IGNORE_ALL_ABOVE_THIS_LINE") {
                        outputs.push(t);
                    }
                }
            }
        }
        // The output as printed, without the newline that ends it (a notebook shows an
        // expression's value without one).
        out.push_str(outputs.concat().trim_end_matches('\n'));
        rest = &rest[open + close + 2..];
    }
    out.push_str(rest);
    out.trim().to_owned()
}

/// The code of one `{{ … }}` block: without the spaces around it, and with the indentation
/// its lines share removed, so `{{ expr }}` and indented multi-line blocks run.
fn template_code(inner: &str) -> String {
    let inner = inner.trim_matches(|c: char| c == '\n' || c == '\r');
    let indent = inner
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    let lines: Vec<&str> = inner
        .lines()
        .map(|line| line.get(indent..).unwrap_or(line.trim_start()))
        .collect();
    lines.join("\n").trim().to_owned()
}

/// Builds the model request: the system message, the conversation, and in loop mode the hidden
/// loop message (never stored).
/// The request for the next reply; `note` is a hidden user message of the repair step
/// (sent, not kept in the conversation).
fn model_request(
    ctx: &TurnContext,
    system: String,
    with_loop_message: bool,
    note: Option<String>,
) -> ModelRequest {
    let mut messages = vec![Message::new(Role::System, Kind::Message, system)];
    messages.extend(ctx.shared.messages().iter().cloned());
    if with_loop_message {
        messages.push(Message::user(ctx.settings.loop_message.clone()));
    }
    if let Some(note) = note {
        messages.push(Message::user(note));
    }
    ModelRequest {
        messages,
        languages: ctx
            .computer
            .languages()
            .iter()
            .map(|l| l.name.to_lowercase())
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

/// Asks the computer to start a language's session as soon as the model begins a block in
/// it (once per language per turn), so the interpreter starts while the code still streams.
fn prepare_early(computer: &Arc<dyn Computer>, delta: &ModelDelta, prepared: &mut Vec<String>) {
    let ModelDelta::Code { language, .. } = delta else {
        return;
    };
    if language.is_empty() || prepared.iter().any(|p| p == language) {
        return;
    }
    tracing::debug!(%language, "starting the language's session while the code streams");
    computer.prepare(language);
    prepared.push(language.clone());
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

/// Loop mode (spec b.10): whether to go on with the hidden loop message. Tidies the stored
/// conversation the way the original does when it goes on.
fn continue_loop(settings: &Settings, shared: &Shared) -> bool {
    if !settings.loop_mode {
        return false;
    }
    let mut messages = shared.messages();
    let Some(last) = messages.last() else {
        return false;
    };
    if last.role != Role::Assistant {
        return false;
    }
    let text = last.text();
    if settings
        .loop_breakers
        .iter()
        .any(|breaker| text.contains(breaker.as_str()))
    {
        return false;
    }
    messages.retain(|m| m.text() != settings.loop_message);
    let mut merged: Vec<Message> = Vec::with_capacity(messages.len());
    for message in messages.drain(..) {
        let mergeable = |m: &Message| m.role == Role::Assistant && m.kind == Kind::Message;
        match merged.last_mut() {
            Some(prev) if mergeable(prev) && mergeable(&message) => {
                let joined = format!("{}\n{}", prev.text(), message.text());
                prev.content = Content::Text(joined);
            }
            _ => merged.push(message),
        }
    }
    *messages = merged;
    true
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

/// Automatic model requests in a row without progress — the same code run again with the
/// same output, or a reply whose block is not run (a text block, an empty one) — after which
/// the turn stops and says so (a reply with a ```text block was re-asked ~268 times in 3 s).
const STALLS_ALLOWED: u32 = 3;

/// What the turn says when it stops a loop without progress.
fn stalled_message() -> String {
    format!(
        "oi stopped this turn: the model was asked {} times in a row without progress (the same code with the same output, the same error again, or no code to run). Send a message to go on.",
        STALLS_ALLOWED + 1
    )
}

/// The respond loop as a stream of turn events: framed chunks, approval requests, and one
/// last `Complete` or `Error`.
pub(crate) fn respond(ctx: TurnContext) -> impl Stream<Item = TurnEvent> + Send + 'static {
    async_stream::stream! {
        let mut store = Store {
            framer: Framer::new(FramerOptions {
                max_output: ctx.settings.max_output,
                add_scrollbars: ctx.settings.import_computer_api,
            }),
            shared: ctx.shared.clone(),
        };
        let languages = ctx.computer.languages();
        let mut last_unsupported = String::new();
        let mut last_blocked = String::new();
        let rules = ctx.settings.rules();
        let mut insert_loop_message = false;
        let mut prepared = Vec::new();
        let mut stalls = 0u32;
        let mut last_run: Option<u64> = None;
        // The repair step (small local models, `repair_step`): the note for the next
        // request, the last run's error, and whether the one retry is spent.
        let repairs = repair_step::enabled(&ctx.settings);
        let mut note: Option<String> = None;
        // The last block's error line and the note that told the model of it.
        let mut last_error: Option<(String, String)> = None;
        let workspace = &ctx.settings.computer.sandbox.workspace;
        // Every block the turn ran (repair step): what it printed, and how the failing ones
        // failed, so that a loop of two or more blocks is seen as well as a repeat.
        let mut runs_seen: std::collections::HashSet<u64> = std::collections::HashSet::new();
        let mut failures_seen: std::collections::HashSet<(u64, String)> = std::collections::HashSet::new();
        let mut retried = false;
        let mut hinted = false;
        loop {
            if ctx.shared.messages().is_empty() {
                yield TurnEvent::Error(TurnError::NoMessage);
                return;
            }
            if pending_code(&ctx.shared).is_none() {
                if stalls > STALLS_ALLOWED {
                    tracing::info!(stalls, "no progress: the turn stops");
                    for e in store.push(Chunk::console_output(stalled_message())) { yield e; }
                    break;
                }
                if let Some(error) = over_budget(&ctx.settings, &ctx.shared) {
                    tracing::info!(%error, "the budget is spent: nothing more is sent");
                    if let Some(end) = store.close() { yield end; }
                    yield TurnEvent::Error(error);
                    return;
                }
                let system = system_message(&ctx.settings, &ctx.computer).await;
                let request = model_request(&ctx, system, insert_loop_message, note.take());
                tracing::info!(
                    model = %request.llm.model,
                    messages = request.messages.len(),
                    loop_message = insert_loop_message,
                    "asking the model"
                );
                if insert_loop_message {
                    insert_loop_message = false;
                    for e in store.push(Chunk::assistant_message("\n\n")) { yield e; }
                }
                let mut stream = ctx.model.stream(request);
                while let Some(item) = stream.next().await {
                    match item {
                        Ok(delta) => {
                            prepare_early(&ctx.computer, &delta, &mut prepared);
                            let Some(chunk) = delta_chunk(&ctx.shared, delta) else { continue };
                            for e in store.push(chunk) { yield e; }
                        }
                        Err(error) => {
                            tracing::info!(%error, "the model's reply failed; the turn ends");
                            if let Some(end) = store.close() { yield end; }
                            yield TurnEvent::Error(TurnError::Model(error));
                            return;
                        }
                    }
                }
            }
            let Some((language, code)) = pending_code(&ctx.shared) else {
                if let Some((error, error_note)) = last_error.take().filter(|_| repairs && !retried) {
                    tracing::info!(%error, "repair step: the reply after an error has no code; one retry with the error");
                    retried = true;
                    note = Some(error_note);
                    continue;
                }
                let unread = (repairs && !hinted)
                    .then(|| repair_step::unread_file(&ctx.shared.messages(), workspace))
                    .flatten();
                if let Some(file) = unread {
                    tracing::info!(%file, "repair step: the reply names a file no code opened; one request to open it");
                    hinted = true;
                    note = Some(repair_step::open_file_note(&file));
                    continue;
                }
                if continue_loop(&ctx.settings, &ctx.shared) {
                    tracing::info!("loop mode: no breaker phrase, going on with the loop message");
                    insert_loop_message = true;
                    continue;
                }
                tracing::info!("the reply has no code: the turn is done");
                break;
            };
            let (language, code) = repair::repair(&language, &code);
            store_repaired(&ctx.shared, &language, &code);
            let supported = |name: &str| find_language(&languages, name).is_some();
            let plan = repair::plan(&language, &code, supported);
            tracing::debug!(%language, code_bytes = code.len(), ?plan, "code block read");
            match plan {
                CodePlan::Note(text) => {
                    store_note(&ctx.shared, text);
                    stalls += 1;
                    continue;
                }
                CodePlan::Empty => {
                    for e in store.push(Chunk::console_output(prompts::EMPTY_CODE_MESSAGE)) { yield e; }
                    stalls += 1;
                    continue;
                }
                CodePlan::Unsupported { language, code } => {
                    let text = prompts::unsupported_language_message(&language);
                    for e in store.push(Chunk::console_output(text)) { yield e; }
                    if code == last_unsupported {
                        break;
                    }
                    last_unsupported = code;
                    continue;
                }
                CodePlan::Run { language, code } => {
                    // The code block is complete: its `end` flag goes out before anything runs.
                    if let Some(end) = store.close() { yield end; }
                    let rules = rules.clone().in_session(ctx.computer.session_dir(&language));
                    let verdict = judge_block(&ctx.judge, &rules, &language, &code).await;
                    tracing::info!(%language, ?verdict, "approval rules judged the block");
                    let decision = match verdict {
                        Verdict::Block(reason) => {
                            for e in store.push(Chunk::console_output(reason)) { yield e; }
                            if code == last_blocked {
                                break;
                            }
                            last_blocked = code;
                            continue;
                        }
                        Verdict::Run => Decision::Approve,
                        Verdict::Ask => {
                            let id = ctx.shared.next_approval_id();
                            let (request, pending) = ApprovalRequest::new(id, &language, &code);
                            yield TurnEvent::Approval(request);
                            let decision = pending.wait().await;
                            tracing::info!(id, ?decision, "the approval request was answered");
                            decision
                        }
                    };
                    if decision == Decision::Decline {
                        ctx.shared.messages().push(Message::user(prompts::DECLINED_MESSAGE));
                        break;
                    }
                    let code = code_after_decision(&ctx.shared, decision, code);
                    tracing::info!(%language, "running the code");
                    let policy = ctx.settings.run_policy(&language);
                    let mut output = ctx.computer.run(&language, &code, &policy);
                    let mut run = std::hash::DefaultHasher::new();
                    std::hash::Hash::hash(&(&language, &code), &mut run);
                    let block = std::hash::Hasher::finish(&run);
                    let mut printed = String::new();
                    while let Some(piece) = output.next().await {
                        let chunk = piece.into_chunk();
                        // The text only: the same output however it is cut into pieces.
                        let text = chunk.text().unwrap_or("");
                        std::hash::Hasher::write(&mut run, text.as_bytes());
                        if repairs && printed.len() < 64 * 1024 {
                            printed.push_str(text);
                        }
                        for e in store.push(chunk) { yield e; }
                    }
                    for e in store.push(Chunk::active_line(None)) { yield e; }
                    let run = std::hash::Hasher::finish(&run);
                    let error = if repairs { repair_step::error_line(&printed) } else { None };
                    // The same error again, even from other code, is no progress either.
                    let same_error = error.is_some() && error.as_ref() == last_error.as_ref().map(|(e, _)| e);
                    if repairs && let Some(error) = &error && !failures_seen.insert((block, error.clone())) {
                        tracing::info!(%error, "repair step: a block of this turn failed the same way again; the turn ends");
                        for e in store.push(Chunk::console_output(repair_step::repeated_failure_message(error))) { yield e; }
                        break;
                    }
                    let repeated = !runs_seen.insert(run);
                    if repairs && repeated && error.is_none() && !printed.trim().is_empty() {
                        tracing::info!("repair step: a block of this turn printed the same output again; the answer is on the screen, the turn ends");
                        break;
                    }
                    if last_run == Some(run) || same_error {
                        stalls += 1;
                    } else {
                        stalls = 0;
                    }
                    last_run = Some(run);
                    last_error = None;
                    if let Some(error) = error {
                        let hint = repair_hints::error_hint(&error, &language, &code, workspace);
                        tracing::info!(%error, ?hint, "repair step: the code failed; the next request says so");
                        let error_note = repair_step::error_note(&error, hint.as_deref());
                        note = Some(error_note.clone());
                        last_error = Some((error, error_note));
                    } else if repairs && repair_step::typed_answer(&language, &code) {
                        let unread = repair_step::unread_file(&ctx.shared.messages(), workspace);
                        tracing::info!(?unread, "repair step: the code only printed a typed-in value");
                        note = Some(repair_step::typed_answer_note(unread.as_deref()));
                    }
                }
            }
        }
        if let Some(end) = store.close() { yield end; }
        let dir = ctx.settings.conversations_dir().filter(|_| ctx.save_history && ctx.settings.conversation_history);
        if let Some(dir) = dir {
            if let Err(error) = crate::save::save_history(&ctx.shared, &dir) {
                yield TurnEvent::Error(error);
                return;
            }
        }
        yield TurnEvent::Complete;
    }
}

#[cfg(test)]
mod template_tests {
    use super::template_code;

    #[test]
    fn template_blocks_lose_their_spaces_and_shared_indentation() {
        assert_eq!(template_code(" 6*7 "), "6*7");
        assert_eq!(template_code("6*7"), "6*7");
        assert_eq!(
            template_code("\n    import os\n    print(os.sep)\n"),
            "import os\nprint(os.sep)"
        );
        assert_eq!(
            template_code("\n  for i in range(2):\n      print(i)\n"),
            "for i in range(2):\n    print(i)"
        );
    }
}
