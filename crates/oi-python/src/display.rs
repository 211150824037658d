//! `Renderer`: what `chat(display=True)` prints for each chunk — plain text with fenced code
//! and output blocks (pipes, notebooks), or the same with a little colour on a terminal.
//! Everything the model or the code wrote passes through [`crate::sanitize`].

use std::sync::{Mutex, PoisonError};

use oi_core::{Chunk, Content, Kind, Recipient, Role};
use pyo3::prelude::*;

use crate::convert;
use crate::sanitize::{Carriage, CodeView, Sanitizer, clean, show_code, warning};

const DIM: &str = "\u{1b}[2m";
const CODE: &str = "\u{1b}[36m";
const BOLD: &str = "\u{1b}[1m";
const RESET: &str = "\u{1b}[0m";

/// Ends the warning said before the approval question when the code holds characters a
/// terminal hides (see [`oi_core::visible::warning`]).
const HIDDEN_ADVICE: &str = "Read the code as shown before you answer.";

struct State {
    /// An output block is open.
    output_open: bool,
    /// The last character printed (to close blocks on a fresh line).
    last: Option<char>,
    /// Filters the model's message text (escape sequences cut across chunks too).
    message: Sanitizer,
    /// Filters the code's output.
    output: Sanitizer,
    /// Shows the code as it streams.
    code: CodeView,
    /// The code of the current block as it streamed (what was shown, before the rule's
    /// escapes), to tell when the code that will run differs from it.
    streamed: String,
}

impl Default for State {
    fn default() -> Self {
        State {
            output_open: false,
            last: None,
            message: Sanitizer::new(Carriage::NewLine),
            output: Sanitizer::new(Carriage::NewLine),
            code: CodeView::new(),
            streamed: String::new(),
        }
    }
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

    fn fresh_line(state: &State) -> &'static str {
        match state.last {
            None | Some('\n') => "",
            Some(_) => "\n",
        }
    }

    fn render_chunk(&self, chunk: &Chunk, state: &mut State) -> String {
        if chunk.recipient == Some(Recipient::Assistant) {
            return String::new();
        }
        let Some(kind) = chunk.kind else {
            return String::new();
        };
        let format = show_code(chunk.format.as_deref().unwrap_or(""));
        let text = chunk.text().unwrap_or("");
        match (chunk.role, kind) {
            (Role::Assistant, Kind::Message) if chunk.end => {
                let rest = state.message.finish();
                let line = if rest.is_empty() {
                    Self::fresh_line(state)
                } else if rest.ends_with('\n') {
                    ""
                } else {
                    "\n"
                };
                format!("{rest}{line}")
            }
            (Role::Assistant, Kind::Message) if chunk.start => String::new(),
            (Role::Assistant, Kind::Message) => state.message.push(text),
            (Role::Assistant | Role::Computer, Kind::Code) if chunk.start => {
                state.code = CodeView::new();
                state.streamed.clear();
                let fence = self.paint(DIM, &format!("```{format}"));
                format!("{}{fence}\n", Self::fresh_line(state))
            }
            (Role::Assistant | Role::Computer, Kind::Code) if chunk.end => {
                format!("{}{}\n", Self::fresh_line(state), self.paint(DIM, "```"))
            }
            (Role::Assistant | Role::Computer, Kind::Code) => {
                state.streamed.push_str(text);
                self.paint(CODE, &state.code.push(text))
            }
            (Role::Computer, Kind::Console) => self.render_console(chunk, state),
            (Role::Computer, Kind::Image) if !chunk.is_flag() => format!(
                "{}[image: {format}, {} bytes of base64]\n",
                Self::fresh_line(state),
                text.len()
            ),
            (Role::Assistant, Kind::Review) if !chunk.is_flag() => {
                self.paint(DIM, &format!("(review, {format}) {}", clean(text)))
            }
            _ => String::new(),
        }
    }

    fn render_console(&self, chunk: &Chunk, state: &mut State) -> String {
        if chunk.start {
            return String::new();
        }
        if chunk.end {
            let rest = state.output.finish();
            if !state.output_open {
                return String::new();
            }
            state.output_open = false;
            let line = match rest.chars().last() {
                None => Self::fresh_line(state),
                Some('\n') => "",
                Some(_) => "\n",
            };
            let rest = self.paint(DIM, &rest);
            return format!("{rest}{line}{}\n", self.paint(DIM, "```"));
        }
        let (Some(Content::Text(text)), Some("output")) = (&chunk.content, chunk.format.as_deref())
        else {
            return String::new();
        };
        let text = state.output.push(text);
        if text.is_empty() {
            return String::new();
        }
        let mut out = String::new();
        if !state.output_open {
            state.output_open = true;
            out.push_str(Self::fresh_line(state));
            out.push_str(&self.paint(DIM, "```output"));
            out.push('\n');
        }
        out.push_str(&self.paint(DIM, &text));
        out
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
            state: Mutex::new(State::default()),
        }
    }

    /// The text to print for `chunk` (a chunk dict); a chunk oi does not know prints nothing.
    fn render(&self, chunk: &Bound<'_, PyAny>) -> PyResult<String> {
        let value = convert::to_json(chunk, "the chunk")?;
        let Ok(chunk) = serde_json::from_value::<Chunk>(value) else {
            return Ok(String::new());
        };
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let text = self.render_chunk(&chunk, &mut state);
        let visible = text.trim_end_matches(RESET);
        if let Some(c) = visible.chars().last() {
            state.last = Some(c);
        }
        Ok(text)
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
