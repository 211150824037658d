//! Drives one turn in the terminal: renders chunks, asks before code runs, and stops the turn on
//! CTRL-C (model request cancelled, process group killed) without leaving the program. Text
//! that is not oi's own (chunks, error messages, notes) is filtered before it is printed (see
//! [`crate::sanitize`]).

use std::io::{IsTerminal, Write};

use futures::{FutureExt, StreamExt};
use oi_core::lmc::CodeTag;
use oi_core::{Chunk, CodeContent, Kind, SafeMode, Turn, TurnEvent};
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::approve::{self, Answer};
use crate::input::LineSource;
use crate::render::PlainRenderer;
use crate::sanitize::{clean, show_code};
use crate::tty::TtyRenderer;

/// Plain text or colour.
pub enum Renderer {
    /// Plain text with fenced blocks (pipes, `--plain`).
    Plain(PlainRenderer),
    /// Colour for a terminal.
    Tty(TtyRenderer),
}

impl Renderer {
    /// Colour when stdout is a terminal and plain text was not asked for.
    pub fn choose(plain: bool, highlight_active_line: bool) -> Self {
        if plain || !std::io::stdout().is_terminal() {
            Renderer::Plain(PlainRenderer::new())
        } else {
            Renderer::Tty(TtyRenderer::new(highlight_active_line))
        }
    }

    fn render(&mut self, chunk: &Chunk) -> String {
        match self {
            Renderer::Plain(r) => r.render(chunk),
            Renderer::Tty(r) => r.render(chunk),
        }
    }
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The model finished.
    Done,
    /// CTRL-C stopped it.
    Stopped,
}

/// Listens for CTRL-C while a turn runs.
pub struct Interrupts(Signal);

impl Interrupts {
    /// Installs the handler (from then on CTRL-C no longer kills the program).
    pub fn install() -> std::io::Result<Self> {
        signal(SignalKind::interrupt()).map(Interrupts)
    }

    /// Forgets CTRL-C presses that came while no turn was running.
    pub fn clear(&mut self) {
        while let Some(Some(())) = self.0.recv().now_or_never() {}
    }
}

/// Runs a turn to its end or to CTRL-C.
pub async fn run(
    mut turn: Turn,
    renderer: &mut Renderer,
    source: &mut dyn LineSource,
    safe_mode: SafeMode,
    interrupts: &mut Interrupts,
) -> anyhow::Result<Ended> {
    interrupts.clear();
    let mut out = std::io::stdout();
    let mut shown_code = String::new();
    loop {
        let next = tokio::select! {
            chunk = turn.next() => Some(chunk),
            _ = interrupts.0.recv() => None,
        };
        let Some(next) = next else {
            drop(turn);
            return Ok(stopped(&mut out));
        };
        let Some(event) = next else {
            return Ok(Ended::Done);
        };
        let chunk = match event {
            TurnEvent::Chunk(chunk) => chunk,
            TurnEvent::Approval(request) => {
                let code = CodeContent {
                    kind: CodeTag::Code,
                    format: request.language().to_owned(),
                    content: request.code().to_owned(),
                };
                if code.content != shown_code {
                    show_final_code(&code.format, &code.content, &mut out)?;
                }
                match tokio::task::block_in_place(|| {
                    approve::ask(&code, safe_mode, source, &mut out)
                }) {
                    Answer::Stop => return Ok(stopped(&mut out)),
                    Answer::Decide(decision) => request.decide(decision),
                }
                continue;
            }
            TurnEvent::Error(error) => return Err(anyhow::anyhow!(clean(&error.to_string()))),
            TurnEvent::Complete => continue,
        };
        track_code(&chunk, &mut shown_code);
        if crate::display::is_displayable(&chunk) {
            let note = crate::display::show(&chunk, &crate::display::output_dir());
            out.write_all(clean(&note).as_bytes())?;
            continue;
        }
        let text = renderer.render(&chunk);
        if !text.is_empty() {
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
}

/// Keeps the code of the model's current block as it was shown.
fn track_code(chunk: &Chunk, shown: &mut String) {
    if chunk.role != oi_core::Role::Assistant || chunk.kind != Some(Kind::Code) {
        return;
    }
    if chunk.start {
        shown.clear();
    }
    if let Some(text) = chunk.text().filter(|_| !chunk.is_flag()) {
        shown.push_str(text);
    }
}

/// Shows the code that will run when it is not what was shown as the model wrote it (oi
/// repairs some garbled blocks): the question is always about visible code.
fn show_final_code(language: &str, code: &str, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "\nThe code that will run (as repaired by oi):\n```{}\n{}\n```",
        show_code(language),
        show_code(code.trim_end_matches('\n'))
    )
}

/// Says the turn was stopped and leaves the terminal clean.
fn stopped(out: &mut dyn Write) -> Ended {
    let reset = if std::io::stdout().is_terminal() {
        "\x1b[0m"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "{reset}\n\nStopped. The conversation so far is kept; the running code was stopped."
    );
    let _ = out.flush();
    Ended::Stopped
}
