//! `Renderer`: what `chat(display=True)` prints for each chunk — oi-core's plain text with
//! fenced code and output blocks ([`oi_core::visible::PlainText`], the terminal program's
//! `--plain` too) for pipes and notebooks, or the same with a little colour on a terminal.
//! Everything the model or the code wrote passes through [`crate::sanitize`]'s rule.

use std::sync::{Mutex, PoisonError};

use oi_core::visible::{Part, PlainText};
use oi_core::{Chunk, Kind, Recipient, Role};
use pyo3::prelude::*;

use crate::convert;
use crate::sanitize::{clean, show_code, warning};

const DIM: &str = "\u{1b}[2m";
const CODE: &str = "\u{1b}[36m";
const BOLD: &str = "\u{1b}[1m";
const RESET: &str = "\u{1b}[0m";

/// Ends the warning said before the approval question when the code holds characters a
/// terminal hides (see [`oi_core::visible::warning`]).
const HIDDEN_ADVICE: &str = "Read the code as shown before you answer.";

struct State {
    /// The turn as plain text, fenced and filtered (oi-core's, shared with the terminal
    /// program's `--plain`).
    plain: PlainText,
    /// The code of the current block as it streamed (what was shown, before the rule's
    /// escapes), to tell when the code that will run differs from it.
    streamed: String,
}

/// Renders a turn's chunks as text.
#[pyclass(frozen, module = "interpreter._oi")]
pub struct Renderer {
    color: bool,
    state: Mutex<State>,
}

impl Renderer {
    fn paint(&self, style: &str, text: &str) -> String {
        if self.color && !text.is_empty() {
            format!("{style}{text}{RESET}")
        } else {
            text.to_owned()
        }
    }

    /// The text for `chunk`: oi-core's plain text, painted on a terminal; besides it, a
    /// review's line, and nothing for what only the model is meant to see.
    fn render_chunk(&self, chunk: &Chunk, state: &mut State) -> String {
        if chunk.recipient == Some(Recipient::Assistant) {
            return String::new();
        }
        let is_code = matches!(chunk.role, Role::Assistant | Role::Computer)
            && chunk.kind == Some(Kind::Code);
        if is_code && chunk.start {
            state.streamed.clear();
        } else if is_code && !chunk.end {
            state.streamed.push_str(chunk.text().unwrap_or(""));
        }
        if chunk.role == Role::Assistant && chunk.kind == Some(Kind::Review) && !chunk.is_flag() {
            let format = show_code(chunk.format.as_deref().unwrap_or(""));
            let text = format!("(review, {format}) {}", clean(chunk.text().unwrap_or("")));
            state.plain.wrote(&text);
            return self.paint(DIM, &text);
        }
        state
            .plain
            .pieces(chunk)
            .into_iter()
            .map(|(part, text)| match part {
                Part::Text => text,
                Part::Fence | Part::Output => self.paint(DIM, &text),
                Part::Code => self.paint(CODE, &text),
            })
            .collect()
    }
}

#[pymethods]
impl Renderer {
    /// A renderer at the start of a turn; `color` for a terminal.
    #[new]
    #[pyo3(signature = (color = false))]
    fn new(color: bool) -> Self {
        Renderer {
            color,
            state: Mutex::new(State {
                plain: PlainText::new(),
                streamed: String::new(),
            }),
        }
    }

    /// The text to print for `chunk` (a chunk dict); a chunk oi does not know prints nothing.
    fn render(&self, chunk: &Bound<'_, PyAny>) -> PyResult<String> {
        let value = convert::to_json(chunk, "the chunk")?;
        let Ok(chunk) = serde_json::from_value::<Chunk>(value) else {
            return Ok(String::new());
        };
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(self.render_chunk(&chunk, &mut state))
    }

    /// The approval question for `code` (with a warning first, counting and naming them,
    /// when it holds characters a terminal would hide).
    ///
    /// When the code that will run is not the code that streamed (oi repaired the model's
    /// reply, e.g. a JSON-wrapped block), it is shown first, by the same rule, so that what
    /// the person approves is what runs.
    fn question(&self, code: &str) -> String {
        let streamed = {
            let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.streamed.clone()
        };
        let repaired = if streamed.trim_end() == code.trim_end() {
            String::new()
        } else {
            let title = self.paint(DIM, "The code that will run (as repaired by oi):");
            let body = self.paint(CODE, &show_code(code));
            format!(
                "\n{title}\n{}\n{body}\n{}\n",
                self.paint(DIM, "```"),
                self.paint(DIM, "```")
            )
        };
        let warning = warning(code)
            .map(|w| format!("Warning: {w}. {HIDDEN_ADVICE}\n"))
            .unwrap_or_default();
        if self.color {
            format!("{repaired}\n{warning}{BOLD}Would you like to run this code? (y/n){RESET}\n\n")
        } else {
            format!("{repaired}\n{warning}Would you like to run this code? (y/n)\n\n")
        }
    }

    /// `text` (an error message, a note) made safe to print.
    #[staticmethod]
    fn clean(text: &str) -> String {
        clean(text)
    }
}
