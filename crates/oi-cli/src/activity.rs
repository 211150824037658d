//! What a turn is doing now — waiting for the model, the model writing, code running — read
//! from its chunks, with the time it has been doing it: the status line shows it while
//! nothing else moves, and CTRL-C says what it stopped.

use std::time::{Duration, Instant};

use oi_core::{Chunk, Content, Kind, Role};

use crate::sanitize::show_code;
use crate::style::{ACCENT, MUTED, NORMAL, Span};

/// Spinner frames, one per 100 ms.
const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// What the turn is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// A request to the model is out and nothing has come back yet.
    Waiting,
    /// The model is writing a message or code.
    Writing,
    /// Code is running.
    Running,
    /// The user is asked something.
    Asking,
}

/// The model a turn talks to, as the status line names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelLabel {
    /// Its name, safe to print.
    pub name: String,
    /// It runs inside oi and is loaded on its first request.
    pub embedded: bool,
}

impl ModelLabel {
    /// The label of the model `llm` names.
    pub fn of(llm: &oi_core::settings::LlmSettings) -> Self {
        let embedded = oi_llm::local_model::is_embedded(llm);
        let name = if embedded {
            let path = match llm.model.strip_prefix("local/") {
                Some(path) => Some(std::path::PathBuf::from(path)),
                None => oi_llm::local_model::default_model_path(&oi_llm::Env::from_process()),
            };
            path.as_deref()
                .and_then(std::path::Path::file_name)
                .and_then(|f| f.to_str())
                .unwrap_or("local")
                .to_owned()
        } else {
            llm.model.clone()
        };
        ModelLabel {
            name: crate::sanitize::clean(&name),
            embedded,
        }
    }
}

/// The turn's activity.
#[derive(Debug, Clone)]
pub struct Activity {
    phase: Phase,
    since: Instant,
    /// When something was last printed (the status waits for a quiet moment).
    last_output: Instant,
    language: String,
    code: String,
    line: Option<u64>,
    model: ModelLabel,
    /// The embedded model has answered once (so it is loaded).
    model_loaded: bool,
    /// Output lines left out of the display so far (long output).
    left_out: Option<u64>,
}

impl Activity {
    /// A turn that has just sent its request to `model`.
    pub fn new(model: ModelLabel, model_loaded: bool) -> Self {
        let now = Instant::now();
        Activity {
            phase: Phase::Waiting,
            since: now,
            last_output: now,
            language: String::new(),
            code: String::new(),
            line: None,
            model,
            model_loaded,
            left_out: None,
        }
    }

    /// Whether the model has answered at least once in this program.
    pub fn model_loaded(&self) -> bool {
        self.model_loaded
    }

    fn enter(&mut self, phase: Phase) {
        if self.phase != phase {
            self.phase = phase;
            self.since = Instant::now();
        }
    }

    /// Follows the turn through `chunk`.
    pub fn observe(&mut self, chunk: &Chunk) {
        match (chunk.role, chunk.kind) {
            (Role::Assistant, Some(Kind::Code)) => {
                self.model_loaded = true;
                if chunk.start {
                    self.language = chunk.format.clone().unwrap_or_default();
                    self.code.clear();
                    self.line = None;
                    self.left_out = None;
                }
                if let Some(text) = chunk.text().filter(|_| !chunk.is_flag()) {
                    self.code.push_str(text);
                }
                if chunk.end {
                    self.enter(Phase::Running);
                } else {
                    self.enter(Phase::Writing);
                }
            }
            (Role::Assistant, _) => {
                self.model_loaded = true;
                if chunk.end {
                    self.enter(Phase::Waiting);
                } else {
                    self.enter(Phase::Writing);
                }
            }
            (Role::Computer, Some(Kind::Console)) => {
                if chunk.end {
                    self.line = None;
                    self.enter(Phase::Waiting);
                    return;
                }
                self.enter(Phase::Running);
                match &chunk.content {
                    Some(Content::Line(line)) => self.line = Some(*line),
                    Some(Content::Null) => self.line = None,
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// The user is asked about the code.
    pub fn asking(&mut self) {
        self.enter(Phase::Asking);
    }

    /// The user answered: the code runs (or the model is asked again).
    pub fn answered(&mut self, runs: bool) {
        self.enter(if runs { Phase::Running } else { Phase::Waiting });
    }

    /// The code, being given `code` to run instead (an edit).
    pub fn replace_code(&mut self, code: &str) {
        code.clone_into(&mut self.code);
    }

    /// Something was printed now.
    pub fn printed(&mut self) {
        self.last_output = Instant::now();
    }

    /// Output lines left out of the display so far.
    pub fn set_left_out(&mut self, lines: Option<u64>) {
        self.left_out = lines;
    }

    /// Whether the status line should show now: something is awaited and nothing was
    /// printed for a moment.
    pub fn wants_status(&self, now: Instant) -> bool {
        matches!(self.phase, Phase::Waiting | Phase::Running)
            && now.duration_since(self.last_output) >= Duration::from_millis(250)
    }

    /// The status line: spinner, what is happening, for how long.
    pub fn status(&self, now: Instant) -> Vec<Span> {
        let elapsed = now.duration_since(self.since);
        let frame = FRAMES[(elapsed.as_millis() / 100) as usize % FRAMES.len()];
        let mut spans = vec![
            Span::plain("  "),
            Span::new(ACCENT, frame),
            Span::plain(" "),
        ];
        match self.phase {
            Phase::Running => {
                spans.push(Span::new(
                    NORMAL,
                    format!("Running {}", show_code(&self.language)),
                ));
                if let Some(line) = self.line {
                    let source = self
                        .code
                        .lines()
                        .nth((line as usize).saturating_sub(1))
                        .unwrap_or("")
                        .trim();
                    spans.push(Span::new(MUTED, format!(" · line {line}: ")));
                    spans.push(Span::new(NORMAL, show_code(source)));
                }
                if let Some(left_out) = self.left_out {
                    spans.push(Span::new(
                        MUTED,
                        format!(" · {left_out} more lines, shown at the end"),
                    ));
                }
            }
            _ if self.model.embedded && !self.model_loaded => {
                spans.push(Span::new(
                    NORMAL,
                    format!("Loading the local model {}", self.model.name),
                ));
                spans.push(Span::new(MUTED, " (first use; then it stays loaded)"));
            }
            _ => spans.push(Span::new(
                NORMAL,
                format!("Waiting for {}", self.model.name),
            )),
        }
        spans.push(Span::new(MUTED, format!(" · {}", elapsed_text(elapsed))));
        spans
    }

    /// What CTRL-C stopped, said after "Stopped.".
    pub fn stopped_what(&self) -> &'static str {
        match self.phase {
            Phase::Running => "The running code was stopped (its whole process group).",
            Phase::Asking => "The code was not run.",
            Phase::Waiting => "The request to the model was cancelled before it answered.",
            Phase::Writing => "The model's answer was cut off where it was.",
        }
    }
}

/// `4.2 s`, `1 min 05 s`.
pub fn elapsed_text(elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64();
    if secs < 60.0 {
        format!("{secs:.1} s")
    } else {
        let whole = elapsed.as_secs();
        format!("{} min {:02} s", whole / 60, whole % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::text_of;

    fn label(model: &str) -> ModelLabel {
        ModelLabel::of(&oi_core::settings::LlmSettings {
            model: model.to_owned(),
            ..Default::default()
        })
    }

    #[test]
    fn running_code_shows_its_line() {
        let mut activity = Activity::new(label("gpt-4o"), true);
        let start = Instant::now();
        assert!(text_of(&activity.status(start)).contains("Waiting for gpt-4o"));
        activity.observe(&Chunk::flag(
            Role::Assistant,
            Kind::Code,
            Some("python"),
            false,
        ));
        activity.observe(&Chunk::assistant_code(
            "python",
            "import time\ntime.sleep(5)\n",
        ));
        activity.observe(&Chunk::flag(
            Role::Assistant,
            Kind::Code,
            Some("python"),
            true,
        ));
        activity.observe(&Chunk::active_line(Some(2)));
        let status = text_of(&activity.status(Instant::now()));
        assert!(
            status.contains("Running python · line 2: time.sleep(5) · 0.0 s"),
            "{status}"
        );
        assert!(activity.stopped_what().contains("running code"));
    }

    #[test]
    fn the_embedded_model_is_named_while_it_loads() {
        let activity = Activity::new(label("local/models/qwen.gguf"), false);
        let status = text_of(&activity.status(Instant::now()));
        assert!(
            status.contains("Loading the local model qwen.gguf"),
            "{status}"
        );
        assert!(activity.stopped_what().contains("model"));
        assert_eq!(elapsed_text(Duration::from_secs(65)), "1 min 05 s");
    }
}
