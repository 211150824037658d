//! Drives one turn in the terminal: renders chunks, asks before code runs, and stops the turn on
//! CTRL-C (model request cancelled, process group killed) without leaving the program.

use std::io::{IsTerminal, Write};

use futures::{FutureExt, StreamExt};
use oi_core::lmc::CodeTag;
use oi_core::{Chunk, CodeContent, SafeMode, Turn, TurnEvent};
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::approve::{self, Answer};
use crate::input::LineSource;
use crate::render::PlainRenderer;
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
                match tokio::task::block_in_place(|| {
                    approve::ask(&code, safe_mode, source, &mut out)
                }) {
                    Answer::Stop => return Ok(stopped(&mut out)),
                    Answer::Decide(decision) => request.decide(decision),
                }
                continue;
            }
            TurnEvent::Error(error) => return Err(error.into()),
            TurnEvent::Complete => continue,
        };
        if crate::display::is_displayable(&chunk) {
            let note = crate::display::show(&chunk, &crate::display::output_dir());
            out.write_all(note.as_bytes())?;
            continue;
        }
        let text = renderer.render(&chunk);
        if !text.is_empty() {
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
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
