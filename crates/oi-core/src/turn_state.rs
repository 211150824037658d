//! What the respond loop remembers between its steps, and the decisions it makes from that.
//!
//! [`TurnState`] is one turn's memory: the computer's languages (to resolve a block's language
//! to its canonical name), the approval rules, the guards against going round without progress
//! (stalls, the same blocked or unsupported block again) and the repair step's memory for
//! small local models (`repair_step`: the last error and its note, every run and failure
//! seen, the one retry and the one hint to open a file). Each step of the loop ends with a
//! [`Next`], the step to take next; after a reply and after a run `TurnState` decides it.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;

use crate::computer::{Computer, LanguageSpec, canonical_language};
use crate::lmc::Message;
use crate::loop_mode::continue_loop;
use crate::model::ModelDelta;
use crate::policy::Rules;
use crate::prompts;
use crate::repair::{self, CodePlan};
use crate::settings::Settings;
use crate::state::Shared;
use crate::turn::TurnError;
use crate::{repair_hints, repair_step};

/// Automatic model requests in a row without progress — the same code run again with the
/// same output, or a reply whose block is not run (a text block, an empty one) — after which
/// the turn stops and says so (a reply with a ```text block was re-asked ~268 times in 3 s).
const STALLS_ALLOWED: u32 = 3;

/// How much of a run's output the repair step keeps to read its error.
const KEPT_OUTPUT: usize = 64 * 1024;

/// A code block ready to judge and run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block {
    /// The canonical name of its language (`python`, `shell`): all the judge, the repair step
    /// and the computer see.
    pub language: String,
    /// The language as the model wrote it (repaired, lower-cased), shown in the approval request.
    pub written: String,
    /// The code.
    pub code: String,
}

/// What the next model request adds after the conversation (sent, never stored).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum Extra {
    /// Nothing.
    #[default]
    Nothing,
    /// A hidden note of the repair step.
    Note(String),
    /// Loop mode's loop message.
    LoopMessage,
}

/// The step the loop takes next: every step ends with one.
#[derive(Debug)]
pub(crate) enum Next {
    /// Ask the model (unless the conversation ends in a block not yet read); the request
    /// carries the extra.
    Ask(Extra),
    /// Read the reply: its code block, or what a reply without code means.
    Read,
    /// Judge the block and, when the rules say so, ask for approval.
    Approve(Block),
    /// Run the approved block.
    Run(Block),
    /// Show this console output, then ask the model again.
    Say(String),
    /// End the turn (it is saved), after showing this console output if there is some.
    Stop(Option<String>),
    /// End the turn with this error (it is not saved).
    Fail(TurnError),
}

/// One run being watched: what ran, and what it printed.
pub(crate) struct RunRecord {
    /// The block's canonical language.
    language: String,
    /// The code that ran.
    code: String,
    /// The hash of (language, code).
    block: u64,
    /// The hash of (language, code) and the output's text, however it is cut into pieces.
    output: DefaultHasher,
    /// The output's text, kept (up to [`KEPT_OUTPUT`]) when the repair step is on.
    printed: Option<String>,
}

impl RunRecord {
    /// Notes a piece of the run's output text.
    pub(crate) fn saw(&mut self, text: &str) {
        self.output.write(text.as_bytes());
        if let Some(printed) = self.printed.as_mut().filter(|p| p.len() < KEPT_OUTPUT) {
            printed.push_str(text);
        }
    }
}

/// One turn's memory between the loop's steps.
pub(crate) struct TurnState {
    /// The computer's languages, to resolve a block's language to its canonical name.
    languages: Vec<LanguageSpec>,
    /// The approval rules of this turn's settings.
    rules: Rules,
    /// Whether the repair step for small local models is on.
    repairs: bool,
    /// The workspace the repair step looks for files in.
    workspace: PathBuf,
    /// The languages whose sessions were started while a block streamed.
    prepared: Vec<String>,
    /// Model requests in a row without progress.
    stalls: u32,
    /// The hash of the last run and its output.
    last_run: Option<u64>,
    /// The last block in a language no session runs.
    last_unsupported: String,
    /// The last block the judge blocked.
    last_blocked: String,
    /// The last run's error line and the note that told the model of it.
    last_error: Option<(String, String)>,
    /// Every run of the turn, with its output (repair step: a loop of blocks is seen too).
    runs_seen: HashSet<u64>,
    /// Every failing block of the turn, with its error line.
    failures_seen: HashSet<(u64, String)>,
    /// Whether the one retry after an error is spent.
    retried: bool,
    /// Whether the one request to open a named file is spent.
    hinted: bool,
}

impl TurnState {
    /// The state at the start of a turn under `settings`, on a computer offering `languages`.
    pub(crate) fn new(settings: &Settings, languages: Vec<LanguageSpec>) -> Self {
        TurnState {
            languages,
            rules: settings.rules(),
            repairs: repair_step::enabled(settings),
            workspace: settings.computer.sandbox.workspace.clone(),
            prepared: Vec::new(),
            stalls: 0,
            last_run: None,
            last_unsupported: String::new(),
            last_blocked: String::new(),
            last_error: None,
            runs_seen: HashSet::new(),
            failures_seen: HashSet::new(),
            retried: false,
            hinted: false,
        }
    }

    /// The approval rules of the turn.
    pub(crate) fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Asks the computer to start a language's session as soon as the model begins a block in
    /// it (once per language per turn), so the interpreter starts while the code still streams.
    pub(crate) fn prepare_early(&mut self, computer: &dyn Computer, delta: &ModelDelta) {
        let ModelDelta::Code { language, .. } = delta else {
            return;
        };
        let Some(language) = canonical_language(&self.languages, language) else {
            return;
        };
        if self.prepared.contains(&language) {
            return;
        }
        tracing::debug!(%language, "starting the language's session while the code streams");
        computer.prepare(&language);
        self.prepared.push(language);
    }

    /// Before a model request: the stop when the turn has gone round without progress.
    pub(crate) fn before_request(&self) -> Option<Next> {
        if self.stalls <= STALLS_ALLOWED {
            return None;
        }
        tracing::info!(stalls = self.stalls, "no progress: the turn stops");
        Some(Next::Stop(Some(format!(
            "oi stopped this turn: the model was asked {} times in a row without progress (the same code with the same output, the same error again, or no code to run). Send a message to go on.",
            STALLS_ALLOWED + 1
        ))))
    }

    /// After a reply without code: one retry with the last error, one request to open a file
    /// the turn names but no code read (repair step), loop mode, or the end of the turn.
    pub(crate) fn after_reply_without_code(
        &mut self,
        settings: &Settings,
        shared: &Shared,
    ) -> Next {
        let last_error = self.last_error.take();
        if let Some((error, note)) = last_error.filter(|_| self.repairs && !self.retried) {
            tracing::info!(%error, "repair step: the reply after an error has no code; one retry with the error");
            self.retried = true;
            return Next::Ask(Extra::Note(note));
        }
        let unread = (self.repairs && !self.hinted)
            .then(|| repair_step::unread_file(&shared.messages(), &self.workspace))
            .flatten();
        if let Some(file) = unread {
            tracing::info!(%file, "repair step: the reply names a file no code opened; one request to open it");
            self.hinted = true;
            return Next::Ask(Extra::Note(repair_step::open_file_note(&file)));
        }
        if continue_loop(settings, shared) {
            tracing::info!("loop mode: no breaker phrase, going on with the loop message");
            return Next::Ask(Extra::LoopMessage);
        }
        tracing::info!("the reply has no code: the turn is done");
        Next::Stop(None)
    }

    /// The plan for a repaired block written in `written`: its language resolved once to
    /// the canonical name, which the plan then carries.
    pub(crate) fn plan(&self, written: &str, code: &str) -> CodePlan {
        let canonical = canonical_language(&self.languages, written);
        let language = canonical.as_deref().unwrap_or(written);
        repair::plan(language, code, |_| canonical.is_some())
    }

    /// After a reply with a block: run it, or say why not (a text block was stored as a
    /// message; an empty block; a language no session runs, twice the same ends the turn).
    pub(crate) fn after_plan(&mut self, plan: CodePlan, written: String) -> Next {
        match plan {
            CodePlan::Note(_) => {
                self.stalls += 1;
                Next::Ask(Extra::Nothing)
            }
            CodePlan::Empty => {
                self.stalls += 1;
                Next::Say(prompts::EMPTY_CODE_MESSAGE.to_owned())
            }
            CodePlan::Unsupported { language, code } => {
                let text = prompts::unsupported_language_message(&language);
                if code == self.last_unsupported {
                    return Next::Stop(Some(text));
                }
                self.last_unsupported = code;
                Next::Say(text)
            }
            CodePlan::Run { language, code } => Next::Approve(Block {
                language,
                written,
                code,
            }),
        }
    }

    /// After the judge blocked `code` for `reason`: say so, and end the turn when it blocked
    /// the same code the last time.
    pub(crate) fn after_block(&mut self, reason: String, code: &str) -> Next {
        if code == self.last_blocked {
            return Next::Stop(Some(reason));
        }
        code.clone_into(&mut self.last_blocked);
        Next::Say(reason)
    }

    /// The record of a run of `block` that starts now.
    pub(crate) fn start_run(&self, block: &Block) -> RunRecord {
        let mut output = DefaultHasher::new();
        (&block.language, &block.code).hash(&mut output);
        RunRecord {
            language: block.language.clone(),
            code: block.code.clone(),
            block: output.finish(),
            output,
            printed: self.repairs.then(String::new),
        }
    }

    /// After a run: end the turn when a block failed the same way again or printed the same
    /// output again (repair step), or ask the model again, with a note when the run failed or
    /// only printed a typed-in value (repair step). Counts a run without progress as a stall.
    pub(crate) fn after_run(&mut self, run: RunRecord, messages: &[Message]) -> Next {
        let printed = run.printed.unwrap_or_default();
        let hash = run.output.finish();
        let error = if self.repairs {
            repair_step::error_line(&printed)
        } else {
            None
        };
        // The same error again, even from other code, is no progress either.
        let same_error =
            error.is_some() && error.as_ref() == self.last_error.as_ref().map(|(e, _)| e);
        if let Some(error) = &error
            && !self.failures_seen.insert((run.block, error.clone()))
        {
            tracing::info!(%error, "repair step: a block of this turn failed the same way again; the turn ends");
            return Next::Stop(Some(repair_step::repeated_failure_message(error)));
        }
        let repeated = !self.runs_seen.insert(hash);
        if self.repairs && repeated && error.is_none() && !printed.trim().is_empty() {
            tracing::info!(
                "repair step: a block of this turn printed the same output again; the answer is on the screen, the turn ends"
            );
            return Next::Stop(None);
        }
        if self.last_run == Some(hash) || same_error {
            self.stalls += 1;
        } else {
            self.stalls = 0;
        }
        self.last_run = Some(hash);
        self.last_error = None;
        if let Some(error) = error {
            let hint = repair_hints::error_hint(&error, &run.language, &run.code, &self.workspace);
            tracing::info!(%error, ?hint, "repair step: the code failed; the next request says so");
            let note = repair_step::error_note(&error, hint.as_deref());
            self.last_error = Some((error, note.clone()));
            return Next::Ask(Extra::Note(note));
        }
        if self.repairs && repair_step::typed_answer(&run.language, &run.code) {
            let unread = repair_step::unread_file(messages, &self.workspace);
            tracing::info!(
                ?unread,
                "repair step: the code only printed a typed-in value"
            );
            return Next::Ask(Extra::Note(repair_step::typed_answer_note(
                unread.as_deref(),
            )));
        }
        Next::Ask(Extra::Nothing)
    }
}
