//! The interactive session: a `> ` prompt with history and `"""` multi-line input, magic
//! commands, one turn per message; CTRL-C stops a turn, CTRL-C or CTRL-D at the prompt exits.

use std::io::Write;

use oi_core::{Interpreter, Message};

use crate::images::image_paths;
use crate::input::{LineSource, Read, read_message};
use crate::magic;
use crate::turn::{self, Interrupts, Renderer};

/// Runs the session until the user leaves.
pub async fn run(interpreter: &Interpreter, source: &mut dyn LineSource) -> anyhow::Result<()> {
    let settings = interpreter.settings();
    let plain = settings.plain_text_display;
    if !settings.auto_run {
        let mut intro = String::from(
            "oi will require approval before running code.\n\nUse `oi -y` to bypass this.",
        );
        if !plain {
            intro.push_str(
                "\n\nPress `CTRL-C` to stop a turn; `CTRL-C` or `CTRL-D` at an empty prompt exits.",
            );
        }
        println!("{intro}\n");
    }
    let mut interrupts = Interrupts::install()?;
    let mut out = std::io::stdout();
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
            magic::handle(trimmed, interpreter, &mut out).await?;
            continue;
        }
        let images = image_paths(trimmed);
        let turn = if images.is_empty() {
            interpreter.chat(trimmed)
        } else {
            let mut messages = interpreter.messages();
            messages.push(Message::user(trimmed));
            for image in &images[..images.len() - 1] {
                messages.push(image_message(image));
            }
            interpreter.set_messages(messages);
            interpreter.chat(image_message(&images[images.len() - 1]))
        };
        let mut renderer = Renderer::choose(plain, settings.highlight_active_line);
        let safe_mode = interpreter.settings().safe_mode;
        if let Err(error) = turn::run(turn, &mut renderer, source, safe_mode, &mut interrupts).await
        {
            eprintln!("oi: error: {error:#}");
        }
        writeln!(out)?;
    }
}

fn image_message(path: &std::path::Path) -> Message {
    Message::new(
        oi_core::Role::User,
        oi_core::Kind::Image,
        path.display().to_string(),
    )
    .with_format("path")
}
