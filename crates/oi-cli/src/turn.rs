//! Drives one turn in the terminal: renders chunks, shows what is happening while nothing
//! else moves (a spinner with the elapsed time: waiting for the model, loading a local model,
//! code running and its current line), asks before code runs, follows the terminal's size,
//! and stops the turn on CTRL-C (model request cancelled, process group killed) without
//! leaving the program, saying what was stopped. Text that is not oi's own (chunks, error
//! messages, notes) is filtered before it is printed (see [`crate::sanitize`]).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use futures::{FutureExt, StreamExt};
use oi_core::lmc::CodeTag;
use oi_core::visible::PlainText;
use oi_core::{Chunk, CodeContent, Decision, Kind, SafeMode, Turn, TurnEvent};
use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::activity::{Activity, ModelLabel};
use crate::approve::{self, Answer};
use crate::highlight::Grammars;
use crate::input::LineSource;
use crate::sanitize::{clean, show_code};
use crate::term::Size;
use crate::tty::TtyRenderer;

/// How often the status line is redrawn.
const TICK: Duration = Duration::from_millis(100);

/// Plain text or colour.
pub enum Renderer {
    /// Plain text with fenced blocks (pipes, `--plain`), filtered as oi-core's
    /// [`PlainText`] says.
    Plain(PlainText),
    /// Colour for a terminal.
    Tty(Box<TtyRenderer>),
}

impl Renderer {
    /// Colour when stdout is a terminal and plain text was not asked for.
    pub fn choose(plain: bool, highlight_active_line: bool, grammars: &Grammars) -> Self {
        if plain || !std::io::stdout().is_terminal() {
            Renderer::Plain(PlainText::new())
        } else {
            Renderer::Tty(Box::new(TtyRenderer::new(
                highlight_active_line,
                grammars,
                Size::now(),
            )))
        }
    }

    /// Colour for showing a saved conversation again on a terminal (runs are not timed).
    pub fn for_replay(highlight_active_line: bool, grammars: &Grammars) -> Self {
        Renderer::Tty(Box::new(
            TtyRenderer::new(highlight_active_line, grammars, Size::now()).untimed(),
        ))
    }

    /// The text to print for `chunk`.
    pub fn render(&mut self, chunk: &Chunk) -> String {
        match self {
            Renderer::Plain(r) => r.render(chunk),
            Renderer::Tty(r) => r.render(chunk),
        }
    }

    fn tick(&mut self, activity: &mut Activity, now: Instant) -> String {
        match self {
            Renderer::Plain(_) => String::new(),
            Renderer::Tty(r) => {
                activity.set_left_out(r.left_out());
                r.tick(activity, now)
            }
        }
    }

    fn resized(&mut self) {
        if let Renderer::Tty(r) = self {
            r.resize(Size::now());
        }
    }

    /// Ends what is open (before a question, an error, the prompt).
    pub fn finish_turn(&mut self) -> String {
        match self {
            Renderer::Plain(_) => String::new(),
            Renderer::Tty(r) => r.finish_turn(),
        }
    }

    fn erase_echo(&mut self) -> String {
        match self {
            Renderer::Plain(_) => String::new(),
            Renderer::Tty(r) => r.erase_echo(),
        }
    }

    fn settle(&mut self) -> String {
        match self {
            Renderer::Plain(_) => String::new(),
            Renderer::Tty(r) => r.settle(),
        }
    }

    fn answered(&mut self, runs: bool) {
        if let Renderer::Tty(r) = self {
            if runs {
                r.approved();
            } else {
                r.declined();
            }
        }
    }

    /// The code just shown does not run (a saved conversation's declined block).
    pub fn not_run(&mut self) {
        self.answered(false);
    }

    fn is_tty(&self) -> bool {
        matches!(self, Renderer::Tty(_))
    }

    /// Code shown again with a title (the repaired code before the question).
    fn code_panel(&mut self, language: &str, code: &str, title: &str) -> String {
        match self {
            Renderer::Plain(_) => format!(
                "\n{title}:\n```{}\n{}\n```\n",
                show_code(language),
                show_code(code.trim_end_matches('\n'))
            ),
            Renderer::Tty(r) => r.code_panel(language, code, title),
        }
    }

    /// A line of oi's own about the turn (where an image was saved).
    fn note(&mut self, text: &str) -> String {
        match self {
            Renderer::Plain(_) => text.to_owned(),
            Renderer::Tty(r) => r.note(text),
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

/// Listens for CTRL-C and for changes of the terminal's size while a turn runs.
pub struct Interrupts {
    interrupt: Signal,
    resize: Option<Signal>,
}

impl Interrupts {
    /// Installs the handlers (from then on CTRL-C no longer kills the program).
    pub fn install() -> std::io::Result<Self> {
        Ok(Interrupts {
            interrupt: signal(SignalKind::interrupt())?,
            resize: signal(SignalKind::window_change()).ok(),
        })
    }

    /// Forgets CTRL-C presses and resizes that came while no turn was running.
    pub fn clear(&mut self) {
        while let Some(Some(())) = self.interrupt.recv().now_or_never() {}
        if let Some(resize) = self.resize.as_mut() {
            while let Some(Some(())) = resize.recv().now_or_never() {}
        }
    }

    /// The next CTRL-C, or (with `resizes`) change of the terminal's size.
    async fn next(&mut self, resizes: bool) -> Wake {
        let resize = async {
            match self.resize.as_mut() {
                Some(resize) if resizes => {
                    resize.recv().await;
                }
                _ => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = self.interrupt.recv() => Wake::Interrupt,
            () = resize => Wake::Resize,
        }
    }
}

/// What a turn needs besides its events: how to ask, the session's signals, and the model
/// it talks to.
pub struct TurnContext<'a> {
    /// Where answers come from.
    pub source: &'a mut dyn LineSource,
    /// Semgrep scanning before the question.
    pub safe_mode: SafeMode,
    /// CTRL-C and resizes.
    pub interrupts: &'a mut Interrupts,
    /// The model, for the status line.
    pub model: ModelLabel,
    /// The model has answered before in this program (a local model is loaded).
    pub model_loaded: &'a mut bool,
    /// What the code made (images, HTML, JavaScript) may be opened in the system's viewer:
    /// only when the code runs without any sandbox ([`crate::display::may_open_code`]).
    pub open_code: bool,
}

/// Something that happened while waiting for the turn's next event.
enum Wake {
    Event(Option<TurnEvent>),
    Interrupt,
    Tick,
    Resize,
}

/// Runs a turn to its end or to CTRL-C.
pub async fn run(
    mut turn: Turn,
    renderer: &mut Renderer,
    context: TurnContext<'_>,
) -> anyhow::Result<Ended> {
    let TurnContext {
        source,
        safe_mode,
        interrupts,
        model,
        model_loaded,
        open_code,
    } = context;
    interrupts.clear();
    let mut out = std::io::stdout();
    let mut shown_code = String::new();
    let mut activity = Activity::new(model, *model_loaded);
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let ticking = renderer.is_tty();
    loop {
        let wake = tokio::select! {
            event = turn.next() => Wake::Event(event),
            wake = interrupts.next(ticking) => wake,
            _ = ticker.tick(), if ticking => Wake::Tick,
        };
        *model_loaded |= activity.model_loaded();
        let event = match wake {
            Wake::Tick => {
                write_now(&mut out, &renderer.tick(&mut activity, Instant::now()))?;
                continue;
            }
            Wake::Resize => {
                renderer.resized();
                continue;
            }
            Wake::Interrupt => {
                drop(turn);
                return Ok(stopped(renderer, &activity, &mut out));
            }
            Wake::Event(None) => {
                write_now(&mut out, &renderer.finish_turn())?;
                return Ok(Ended::Done);
            }
            Wake::Event(Some(event)) => event,
        };
        let chunk = match event {
            TurnEvent::Chunk(chunk) => chunk,
            TurnEvent::Approval(request) => {
                let code = CodeContent {
                    kind: CodeTag::Code,
                    format: request.language().to_owned(),
                    content: request.code().to_owned(),
                };
                let mut text = renderer.settle();
                if code.content != shown_code {
                    text.push_str(&renderer.code_panel(
                        &code.format,
                        &code.content,
                        "The code that will run (as repaired by oi)",
                    ));
                }
                write_now(&mut out, &text)?;
                activity.asking();
                let indent = if renderer.is_tty() { "  " } else { "" };
                let answer = tokio::task::block_in_place(|| {
                    approve::ask(&code, safe_mode, source, &mut out, indent)
                });
                let decision = match answer {
                    Answer::Stop => {
                        renderer.answered(false);
                        return Ok(stopped(renderer, &activity, &mut out));
                    }
                    Answer::Decide(decision) => decision,
                };
                let runs = !matches!(decision, Decision::Decline);
                if let Decision::Edit(edited) = &decision {
                    activity.replace_code(edited);
                    // What runs is what the user sees: the edited code, before its output.
                    let panel = renderer.code_panel(&code.format, edited, "as you edited it");
                    write_now(&mut out, &panel)?;
                }
                activity.answered(runs);
                activity.printed();
                renderer.answered(runs);
                request.decide(decision);
                continue;
            }
            TurnEvent::Error(error) => {
                write_now(&mut out, &renderer.finish_turn())?;
                return Err(anyhow::anyhow!(clean(&crate::errors::one_sentence(&error))));
            }
            TurnEvent::Complete => continue,
        };
        activity.observe(&chunk);
        track_code(&chunk, &mut shown_code);
        let text = if crate::display::is_displayable(&chunk) {
            let note = crate::display::show(&chunk, &crate::display::output_dir(), open_code);
            renderer.note(&clean(&note))
        } else {
            renderer.render(&chunk)
        };
        if !text.is_empty() {
            activity.printed();
            write_now(&mut out, &text)?;
        }
    }
}

fn write_now(out: &mut dyn Write, text: &str) -> std::io::Result<()> {
    if text.is_empty() {
        return Ok(());
    }
    out.write_all(text.as_bytes())?;
    out.flush()
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

/// Says what the turn was doing when it was stopped and leaves the terminal clean.
fn stopped(renderer: &mut Renderer, activity: &Activity, out: &mut dyn Write) -> Ended {
    let mut text = renderer.erase_echo();
    text.push_str(&renderer.finish_turn());
    let what = activity.stopped_what();
    let said = format!("Stopped. {what} The conversation so far is kept.");
    if renderer.is_tty() {
        text.push_str(&format!("\x1b[0m\n{}\n", crate::doc::wrapped(&said, "")));
    } else {
        text.push_str(&format!("\n{said}\n"));
    }
    let _ = write_now(out, &text);
    Ended::Stopped
}

/// Prints an error of the turn on standard error (in red on a terminal).
pub fn report_error(error: &anyhow::Error) {
    let text = clean(&format!("{error:#}"));
    if std::io::stderr().is_terminal() && std::io::stdout().is_terminal() {
        let wrapped = crate::doc::wrapped(&format!("oi: error: {text}"), "");
        eprintln!("\x1b[31m{wrapped}\x1b[0m");
    } else {
        eprintln!("oi: error: {text}");
    }
}
