//! The interactive session: a `> ` prompt with history and `"""` multi-line input, magic
//! commands, one turn per message; CTRL-C stops a turn, CTRL-C or CTRL-D at the prompt exits.

use std::io::Write;
use std::sync::Arc;

use oi_core::{Interpreter, Message};
use oi_mcp::client::McpClients;

use crate::activity::ModelLabel;
use crate::doc::{Doc, Style};
use crate::highlight::Grammars;
use crate::images::image_paths;
use crate::input::{LineSource, Read, read_message};
use crate::magic;
use crate::turn::{self, Interrupts, Renderer, TurnContext};

/// What the terminal keeps across turns.
pub struct Ui {
    /// Syntax grammars, loading in the background.
    pub grammars: Grammars,
    /// How oi's own texts are shown.
    pub style: Style,
    /// The model has answered before (a local model is loaded).
    pub model_loaded: bool,
    /// The MCP servers the session connected to (for `%mcp`).
    pub mcp: Arc<McpClients>,
}

impl Ui {
    /// The terminal's state for a program shown plain (`plain`) or in colour when possible,
    /// with the MCP servers the session connected to.
    pub fn new(plain: bool, mcp: Arc<McpClients>) -> Self {
        let grammars = Grammars::new();
        let style = Style::choose(plain, &grammars);
        Ui {
            grammars,
            style,
            model_loaded: false,
            mcp,
        }
    }
}

/// The start-up note: the model, approval, how to stop (none with `auto_run` or `offline`,
/// as the original).
fn intro(model: &str, auto_run: bool, offline: bool, plain: bool) -> Option<String> {
    if auto_run || offline {
        return None;
    }
    let model = crate::sanitize::clean(model).replace('`', "'");
    let mut intro = format!(
        "> Model set to `{model}`\n\noi will require approval before running code.\n\nUse `oi -y` to bypass this."
    );
    if !plain {
        intro.push_str(
            "\n\nPress `CTRL-C` to stop a turn; `CTRL-C` or `CTRL-D` at an empty prompt exits.",
        );
    }
    intro.push('\n');
    Some(intro)
}

/// Runs the session until the user leaves.
pub async fn run(
    interpreter: &Interpreter,
    source: &mut dyn LineSource,
    ui: &mut Ui,
) -> anyhow::Result<()> {
    let settings = interpreter.settings();
    let plain = settings.plain_text_display;
    let mut out = std::io::stdout();
    if let Some(intro) = intro(
        &settings.llm.model,
        settings.auto_run,
        settings.offline,
        plain,
    ) {
        let text = ui.style.markdown(&intro);
        out.write_all(text.as_bytes())?;
        writeln!(out)?;
        out.flush()?;
    }
    if ui.style.colour() {
        // Colours are drawn: load the grammars in the background (not in plain mode).
        ui.grammars.warm();
    }
    let mut interrupts = Interrupts::install()?;
    loop {
        let message = match read_message(source, settings.multi_line) {
            Read::Line(line) => line,
            Read::Interrupted | Read::Eof => {
                println!("Exiting...");
                return Ok(());
            }
        };
        let trimmed = message.trim();
        if trimmed.is_empty() {
            continue;
        }
        source.remember(&message);
        if trimmed.starts_with('%') {
            let mut doc = Doc::new(&ui.style, &mut out);
            magic::handle(trimmed, interpreter, &ui.mcp, &mut doc).await?;
            if ui.style.colour() {
                writeln!(out)?;
            }
            continue;
        }
        let mut images = read_images(&image_paths(trimmed));
        let turn = match images.pop() {
            None => interpreter.chat(trimmed),
            Some(last) => {
                let mut messages = interpreter.messages();
                messages.push(Message::user(trimmed));
                messages.extend(images);
                interpreter.set_messages(messages);
                interpreter.chat(last)
            }
        };
        let settings = interpreter.settings();
        let mut renderer = Renderer::choose(plain, settings.highlight_active_line, &ui.grammars);
        let context = TurnContext {
            source: &mut *source,
            safe_mode: settings.safe_mode,
            interrupts: &mut interrupts,
            model: ModelLabel::of(&settings.llm),
            model_loaded: &mut ui.model_loaded,
            open_code: crate::display::may_open_code(&settings),
        };
        if let Err(error) = turn::run(turn, &mut renderer, context).await {
            turn::report_error(&error);
        }
        if let Some(line) = crate::cost::after_turn(interpreter) {
            eprintln!("{line}");
        }
        writeln!(out)?;
    }
}

/// The images at the paths the user typed, read now (oi sends what it read, never a file
/// named in history later); one that cannot be read is a line on stderr and left out.
fn read_images(paths: &[std::path::PathBuf]) -> Vec<Message> {
    paths
        .iter()
        .filter_map(|path| match oi_llm::images::image_from_file(path) {
            Ok(message) => Some(message),
            Err(why) => {
                eprintln!(
                    "oi: the image {} was not read: {why}",
                    crate::sanitize::clean(&path.display().to_string())
                );
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_intro_says_how_to_stop_only_where_it_can() {
        assert_eq!(intro("gpt-4o", true, false, false), None);
        assert_eq!(
            intro("gpt-4o", false, true, false),
            None,
            "offline skips the intro"
        );
        let plain = intro("gpt-4o", false, false, true).unwrap_or_default();
        assert!(plain.contains("require approval") && !plain.contains("CTRL-C"));
        assert!(plain.starts_with("> Model set to `gpt-4o`\n\n"), "{plain}");
        assert!(
            intro("gpt-4o", false, false, false)
                .unwrap_or_default()
                .contains("CTRL-C")
        );
    }
}
