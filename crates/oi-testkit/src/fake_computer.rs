//! A recording in-process [`Computer`]: no processes; each run records the code and streams
//! scripted output. For fast tests of the respond loop.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::StreamExt;
use futures::future::BoxFuture;
use oi_core::settings::computer::ComputerSettings;
use oi_core::{Computer, LanguageSpec, Output, OutputStream};

/// What one run prints: outputs in order, then the end of the run, or a run that never ends
/// (to test stopping running code).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunOutput {
    outputs: Vec<Output>,
    hang: bool,
}

impl RunOutput {
    /// A run that prints `text`.
    pub fn text(text: &str) -> Self {
        RunOutput {
            outputs: vec![Output::active_line(1), Output::console(text)],
            hang: false,
        }
    }

    /// A run that prints these outputs.
    pub fn outputs(outputs: impl IntoIterator<Item = Output>) -> Self {
        RunOutput {
            outputs: outputs.into_iter().collect(),
            hang: false,
        }
    }

    /// A run that starts and never ends (until it is stopped).
    pub fn hang() -> Self {
        RunOutput {
            outputs: vec![Output::active_line(1)],
            hang: true,
        }
    }
}

/// One recorded run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRun {
    /// The language asked for.
    pub language: String,
    /// The code.
    pub code: String,
}

#[derive(Debug, Default)]
struct State {
    outputs: VecDeque<RunOutput>,
    runs: Vec<RecordedRun>,
    policies: Vec<ComputerSettings>,
    prepared: Vec<String>,
}

#[derive(Debug, Default)]
struct Counters {
    stops: AtomicUsize,
    terminates: AtomicUsize,
    interrupted_runs: AtomicUsize,
}

/// A computer that records what it is asked to run and answers from a script (by default,
/// each run prints `ran\n`).
#[derive(Debug, Clone)]
pub struct RecordingComputer {
    languages: Vec<LanguageSpec>,
    state: Arc<Mutex<State>>,
    counters: Arc<Counters>,
}

impl Default for RecordingComputer {
    fn default() -> Self {
        Self::new()
    }
}

impl RecordingComputer {
    /// A computer offering Python and Shell, by the names and aliases oi gives them
    /// ([`oi_core::languages`]).
    pub fn new() -> Self {
        RecordingComputer {
            languages: [&oi_core::languages::PYTHON, &oi_core::languages::SHELL]
                .into_iter()
                .map(LanguageSpec::from)
                .collect(),
            state: Arc::new(Mutex::new(State::default())),
            counters: Arc::new(Counters::default()),
        }
    }

    /// The same computer, whose next runs print these outputs, one per run, in order.
    pub fn with_outputs(self, outputs: impl IntoIterator<Item = RunOutput>) -> Self {
        self.state().outputs.extend(outputs);
        self
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every run so far, in order.
    pub fn runs(&self) -> Vec<RecordedRun> {
        self.state().runs.clone()
    }

    /// The policy (sandbox and limits) each run was asked to run under, in order.
    pub fn policies(&self) -> Vec<ComputerSettings> {
        self.state().policies.clone()
    }

    /// The languages `prepare()` was called with, in order.
    pub fn prepared(&self) -> Vec<String> {
        self.state().prepared.clone()
    }

    /// How many times `stop()` was called.
    pub fn stops(&self) -> usize {
        self.counters.stops.load(Ordering::SeqCst)
    }

    /// How many times `terminate()` was called.
    pub fn terminates(&self) -> usize {
        self.counters.terminates.load(Ordering::SeqCst)
    }

    /// How many runs were dropped before they ended (stopped mid-run).
    pub fn interrupted_runs(&self) -> usize {
        self.counters.interrupted_runs.load(Ordering::SeqCst)
    }
}

/// Counts a run as interrupted if it is dropped before it ended.
struct RunGuard {
    finished: AtomicBool,
    counters: Arc<Counters>,
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        if !self.finished.load(Ordering::SeqCst) {
            self.counters
                .interrupted_runs
                .fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Computer for RecordingComputer {
    fn languages(&self) -> Vec<LanguageSpec> {
        self.languages.clone()
    }

    fn run(&self, language: &str, code: &str, policy: &ComputerSettings) -> OutputStream {
        let output = {
            let mut state = self.state();
            state.policies.push(policy.clone());
            state.runs.push(RecordedRun {
                language: language.to_owned(),
                code: code.to_owned(),
            });
            state
                .outputs
                .pop_front()
                .unwrap_or_else(|| RunOutput::text("ran\n"))
        };
        let guard = RunGuard {
            finished: AtomicBool::new(false),
            counters: self.counters.clone(),
        };
        let hang = output.hang;
        let end = async move {
            if hang {
                std::future::pending::<()>().await;
            }
            guard.finished.store(true, Ordering::SeqCst);
            None
        };
        futures::stream::iter(output.outputs.into_iter().map(Some))
            .chain(futures::stream::once(end))
            .filter_map(std::future::ready)
            .boxed()
    }

    fn prepare(&self, language: &str) {
        self.state().prepared.push(language.to_owned());
    }

    fn stop(&self) {
        self.counters.stops.fetch_add(1, Ordering::SeqCst);
    }

    fn terminate(&self) -> BoxFuture<'static, ()> {
        self.counters.terminates.fetch_add(1, Ordering::SeqCst);
        Box::pin(std::future::ready(()))
    }
}
