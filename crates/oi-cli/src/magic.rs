//! Magic commands of the interactive session (spec e.3): input that starts with `%`. What
//! they print from the conversation or from commands is filtered first (see
//! [`crate::sanitize`]); exported files keep the text as it is.

use std::io;
use std::path::{Path, PathBuf};

use futures::StreamExt;
use oi_core::{Content, Interpreter, Kind, Message, Role};
use oi_mcp::client::McpClients;

use crate::doc::Doc;
use crate::sanitize::{Carriage, Sanitizer, clean};

/// The `%help` text.
pub const HELP: &str = "> **Available Commands:**

- `%% [commands]`: Run commands in system shell
- `%verbose [true/false]`: Toggle verbose mode. Without arguments or with 'true', it enters verbose mode. With 'false', it exits verbose mode.
- `%auto_run [true/false]`: Toggle running code without asking first.
- `%reset`: Resets the current session's conversation.
- `%undo`: Removes the previous user message and the AI's response from the message history.
- `%tokens [prompt]`: EXPERIMENTAL: Calculate the tokens used by the next request based on the current conversation's messages and estimate the cost of that request; optionally provide a prompt to also calculate the tokens used by that prompt and the total amount of tokens that will be sent with the next request.
- `%save_message [path]`: Saves messages to a specified JSON path. If no path is provided, it defaults to 'messages.json'.
- `%load_message [path]`: Loads messages from a specified JSON path. If no path is provided, it defaults to 'messages.json'.
- `%markdown [path]`: Export the conversation to a specified Markdown path. If no path is provided, it will be saved to the Downloads folder with a generated conversation name.
- `%jupyter [path]`: Export the conversation to a Jupyter notebook file (no Python needed).
- `%info`: Show system and interpreter information.
- `%help`: Show this message.
";

/// Runs one magic command (`line` starts with `%`), writing what it says to `out`; `mcp` is
/// what `%mcp` lists.
pub async fn handle(
    line: &str,
    interpreter: &Interpreter,
    mcp: &McpClients,
    out: &mut Doc<'_>,
) -> io::Result<()> {
    let line = line.trim();
    if let Some(command) = line.strip_prefix("%%") {
        return shell(command.trim(), interpreter, out).await;
    }
    let body = line.trim_start_matches('%');
    let (name, argument) = match body.split_once(char::is_whitespace) {
        Some((name, rest)) => (name, rest.trim()),
        None => (body, ""),
    };
    match name {
        "help" => out.md(HELP),
        "verbose" | "debug" => verbose(argument, interpreter, out),
        "auto_run" => auto_run(argument, interpreter, out),
        "reset" => {
            interpreter.reset().await;
            out.md("> Reset Done\n")
        }
        "undo" => undo(interpreter, out),
        "save_message" => save_messages(argument, interpreter, out),
        "load_message" => load_messages(argument, interpreter, out),
        "tokens" => tokens(argument, interpreter, out),
        "info" => info(interpreter, out),
        // oi's own: the MCP servers of the profile's `mcp_servers:` and their tools.
        "mcp" => out.md(&format!("```\n{}```\n", mcp.listing())),
        "markdown" => markdown(argument, interpreter, out),
        "jupyter" => jupyter(argument, interpreter, out),
        _ => out.md(&format!("> Unknown command\n\n{HELP}")),
    }
}

async fn shell(command: &str, interpreter: &Interpreter, out: &mut Doc<'_>) -> io::Result<()> {
    let policy = interpreter.settings().computer;
    let mut output = interpreter.computer().run("shell", command, &policy);
    let mut filter = Sanitizer::new(Carriage::NewLine);
    while let Some(piece) = output.next().await {
        if piece.kind == Kind::Console && piece.format.as_deref() == Some("output") {
            if let Content::Text(text) = piece.content {
                out.stream(&filter.push(&text))?;
            }
        }
    }
    out.stream(&filter.finish())?;
    out.md("\n")
}

fn verbose(argument: &str, interpreter: &Interpreter, out: &mut Doc<'_>) -> io::Result<()> {
    match argument {
        "" | "true" => {
            out.md("> Entered verbose mode\n\n\nCurrent messages:\n\n")?;
            for message in interpreter.messages() {
                let mut message = message;
                if message.kind == Kind::Image && message.format.as_deref() != Some("path") {
                    let text = message.text().to_owned();
                    if text.chars().count() > 60 {
                        let head: String = text.chars().take(30).collect();
                        let tail: String = text.chars().skip(text.chars().count() - 30).collect();
                        message.content = Content::Text(format!("{head}...{tail}"));
                    }
                }
                out.raw(&format!(
                    "{}\n",
                    clean(&serde_json::to_string(&message).unwrap_or_default())
                ))?;
            }
            interpreter.settings_mut().verbose = true;
            Ok(())
        }
        "false" => {
            interpreter.settings_mut().verbose = false;
            out.md("> Exited verbose mode\n")
        }
        _ => out.md("> Unknown argument to verbose command.\n"),
    }
}

fn auto_run(argument: &str, interpreter: &Interpreter, out: &mut Doc<'_>) -> io::Result<()> {
    match argument {
        "" | "true" => {
            interpreter.settings_mut().auto_run = true;
            out.md("> Entered auto_run mode\n")
        }
        "false" => {
            interpreter.settings_mut().auto_run = false;
            out.md("> Exited auto_run mode\n")
        }
        _ => out.md("> Unknown argument to auto_run command.\n"),
    }
}

fn undo(interpreter: &Interpreter, out: &mut Doc<'_>) -> io::Result<()> {
    let mut messages = interpreter.messages();
    let Some(last_user) = messages.iter().rposition(|m| m.role == Role::User) else {
        return out.md("> Nothing to undo.\n");
    };
    let removed = messages.split_off(last_user);
    interpreter.set_messages(messages);
    out.md("\n")?;
    for message in removed.iter().filter(|m| !m.text().is_empty()) {
        let head: String = message.text().chars().take(30).collect();
        out.md(&format!("**Removed message:** `\"{}...\"`\n", clean(&head)))?;
    }
    out.md("\n")
}

fn json_path(argument: &str) -> PathBuf {
    let name = if argument.is_empty() {
        "messages.json"
    } else {
        argument
    };
    let path = PathBuf::from(name);
    if path.extension().is_some_and(|e| e == "json") {
        path
    } else {
        PathBuf::from(format!("{name}.json"))
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

fn save_messages(argument: &str, interpreter: &Interpreter, out: &mut Doc<'_>) -> io::Result<()> {
    let path = json_path(argument);
    let json = serde_json::to_string_pretty(&interpreter.messages()).map_err(io::Error::other)?;
    match crate::export_file::write_no_follow(&path, json.as_bytes()) {
        Ok(()) => out.md(&format!(
            "> messages json export to {}\n",
            absolute(&path).display()
        )),
        Err(e) => out.md(&format!(
            "> Could not write {}: {e}\n",
            absolute(&path).display()
        )),
    }
}

fn load_messages(argument: &str, interpreter: &Interpreter, out: &mut Doc<'_>) -> io::Result<()> {
    let path = json_path(argument);
    let loaded = std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|text| Message::list_from_json(&text).map_err(|e| e.to_string()));
    match loaded {
        Ok(messages) => {
            interpreter.set_messages(messages);
            out.md(&format!(
                "> messages json loaded from {}\n",
                absolute(&path).display()
            ))
        }
        Err(e) => out.md(&format!(
            "> Could not load {}: {e}. The conversation was not changed.\n",
            absolute(&path).display()
        )),
    }
}

/// An estimate of tokens: about four characters per token, plus a few per message.
fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

/// USD per million input tokens, from the model table.
fn input_price(model: &str) -> Option<f64> {
    oi_llm::model_table::price(model).map(|price| price.input)
}

fn tokens(prompt: &str, interpreter: &Interpreter, out: &mut Doc<'_>) -> io::Result<()> {
    let settings = interpreter.settings();
    let messages = interpreter.messages();
    let context: usize = estimate_tokens(&settings.system_message)
        + messages
            .iter()
            .map(|m| estimate_tokens(m.text()) + 4)
            .sum::<usize>()
        + 4;
    let price = input_price(&settings.llm.model);
    let cost = |n: usize| match price {
        Some(p) => format!("${:.6}", n as f64 * p / 1_000_000.0),
        None => "unknown for this model".to_owned(),
    };
    out.md(&format!(
        "> Tokens sent with next request as context: {context} (Estimated Cost: {})\n",
        cost(context)
    ))?;
    if !prompt.is_empty() {
        let n = estimate_tokens(prompt) + 4;
        out.md(&format!(
            "> Tokens used by this prompt: {n} (Estimated Cost: {})\n",
            cost(n)
        ))?;
        out.md(&format!(
            "> Total tokens for next request with this prompt: {} (Estimated Cost: {})\n",
            context + n,
            cost(context + n)
        ))?;
    }
    out.md(&crate::cost::lines(interpreter))?;
    out.md("\n**Note**: The next request is an estimate (about four characters per token) counting the system message and every message; the provider's count may differ. The last turn and the session are what the provider reported.\n")
}

fn info(interpreter: &Interpreter, out: &mut Doc<'_>) -> io::Result<()> {
    let s = interpreter.settings();
    let show = |v: Option<String>| v.unwrap_or_else(|| "None".to_owned());
    let uses_tools = interpreter.model().uses_tool_calls(&s.llm);
    out.md("\n# Interpreter Info\n\n")?;
    out.md(&format!("oi version: {}\n", env!("CARGO_PKG_VERSION")))?;
    out.md(&format!(
        "OS: {} ({})\n",
        oi_core::prompts::os_name(),
        std::env::consts::ARCH
    ))?;
    out.md(&format!("Model: {}\n", clean(&s.llm.model)))?;
    out.md(&format!("Function calling: {uses_tools}\n"))?;
    out.md(&format!(
        "Vision: {}\n",
        show(s.llm.supports_vision.map(|v| v.to_string()))
    ))?;
    // The numbers trimming and the reply limit really use, and where they come from.
    let caps = oi_llm::capabilities::capabilities(&s.llm);
    let whence = |set: bool| match (set, caps.known) {
        (true, _) => "",
        (false, true) => " (oi's model table)",
        (false, false) => " (assumed: oi does not know this model)",
    };
    out.md(&format!(
        "Context window: {} tokens{}\n",
        caps.context_window,
        whence(s.llm.context_window.is_some_and(|w| w > 0))
    ))?;
    out.md(&format!(
        "Max tokens: {} tokens{}\n",
        caps.max_output,
        whence(s.llm.max_tokens.is_some_and(|m| m > 0))
    ))?;
    out.md(&format!("Auto run: {}\n", s.auto_run))?;
    out.md(&format!(
        "API base: {}\n",
        clean(&show(s.llm.api_base.clone()))
    ))?;
    out.md(&format!("Offline: {}\n", s.offline))?;
    out.md(&format!("Max output: {}\n", s.max_output))?;
    out.md(&format!(
        "Max budget: {}\n",
        s.llm
            .max_budget
            .map_or_else(|| "None".to_owned(), |b| format!("${b:.4}"))
    ))?;
    for line in crate::cost::lines(interpreter).lines() {
        out.md(&format!("{}\n", line.trim_start_matches("> ")))?;
    }
    out.md(&format!(
        "Languages: {}\n",
        interpreter
            .computer()
            .languages()
            .iter()
            .map(|l| l.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ))?;
    out.md(&format!(
        "\n# System Message\n\n{}\n\n",
        clean(&s.system_message)
    ))?;
    out.md(&format!(
        "# Messages ({})\n\n",
        interpreter.messages().len()
    ))?;
    for message in interpreter.messages() {
        let json = serde_json::to_string(&message).unwrap_or_default();
        let short: String = json.chars().take(1000).collect();
        out.raw(&format!("{}\n", clean(&short)))?;
    }
    Ok(())
}

fn downloads_dir() -> PathBuf {
    dirs_downloads().unwrap_or_else(|| PathBuf::from("."))
}

fn dirs_downloads() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"))?;
    Some(PathBuf::from(home).join("Downloads"))
}

/// The conversation as Markdown: `## role` on each change of role, code and output fenced.
pub fn to_markdown(messages: &[Message]) -> String {
    let mut text = String::new();
    let mut last_role = None;
    for message in messages {
        if last_role != Some(message.role) {
            let role = serde_json::to_value(message.role)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            text.push_str(&format!("\n## {role}\n\n"));
            last_role = Some(message.role);
        }
        match message.kind {
            Kind::Code => text.push_str(&format!(
                "```{}\n{}\n```\n\n",
                message.format.as_deref().unwrap_or(""),
                message.text().trim_end()
            )),
            Kind::Console => text.push_str(&format!(
                "```output\n{}\n```\n\n",
                message.text().trim_end()
            )),
            Kind::Image => text.push_str(&format!(
                "[image: {}]\n\n",
                message.format.as_deref().unwrap_or("")
            )),
            _ => text.push_str(&format!("{}\n\n", message.text())),
        }
    }
    text.trim_start().to_owned()
}

fn markdown(argument: &str, interpreter: &Interpreter, out: &mut Doc<'_>) -> io::Result<()> {
    let messages = interpreter.messages();
    if messages.is_empty() {
        return out.md("No messages to export.\n");
    }
    let path = if argument.is_empty() {
        let name = interpreter
            .runtime()
            .conversation_filename
            .map(|f| f.trim_end_matches(".json").to_owned())
            .unwrap_or_else(|| {
                format!(
                    "conversation-{}",
                    chrono::Local::now().format("%Y-%m-%d-%H%M%S")
                )
            });
        downloads_dir().join(format!("{name}.md"))
    } else {
        let p = PathBuf::from(argument);
        if p.extension().is_some_and(|e| e == "md") {
            p
        } else {
            PathBuf::from(format!("{argument}.md"))
        }
    };
    write_export(&path, &to_markdown(&messages), "Markdown", out)
}

/// The conversation as a Jupyter notebook (nbformat 4): user messages as `> ` Markdown cells,
/// assistant text as Markdown, code as code cells (with their language), output as text.
pub fn to_notebook(messages: &[Message]) -> serde_json::Value {
    let mut cells = Vec::new();
    let lines =
        |text: &str| -> Vec<String> { text.split_inclusive('\n').map(str::to_owned).collect() };
    for message in messages {
        match (message.role, message.kind) {
            (Role::User, Kind::Message) => {
                let quoted = message
                    .text()
                    .lines()
                    .map(|l| format!("> {l}"))
                    .collect::<Vec<_>>()
                    .join("\n");
                cells.push(serde_json::json!({"cell_type": "markdown", "metadata": {}, "source": lines(&quoted)}));
            }
            (Role::Assistant, Kind::Message) => {
                cells.push(serde_json::json!({"cell_type": "markdown", "metadata": {}, "source": lines(message.text())}));
            }
            (_, Kind::Code) if message.role == Role::Assistant => {
                cells.push(serde_json::json!({
                    "cell_type": "code", "execution_count": null,
                    "metadata": {"language": message.format.clone().unwrap_or_default()},
                    "outputs": [], "source": lines(message.text()),
                }));
            }
            (Role::Computer, Kind::Console) => {
                if let Some(serde_json::Value::Array(outputs)) =
                    cells.last_mut().and_then(|c| c.get_mut("outputs"))
                {
                    outputs.push(serde_json::json!({"output_type": "stream", "name": "stdout", "text": lines(message.text())}));
                }
            }
            _ => {}
        }
    }
    serde_json::json!({
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}, "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    })
}

fn jupyter(argument: &str, interpreter: &Interpreter, out: &mut Doc<'_>) -> io::Result<()> {
    let path = if argument.is_empty() {
        downloads_dir().join(format!(
            "open-interpreter-{}.ipynb",
            chrono::Local::now().format("%m-%d-%y-%I%M%p")
        ))
    } else {
        let p = PathBuf::from(argument);
        if p.extension().is_some_and(|e| e == "ipynb") {
            p
        } else {
            PathBuf::from(format!("{argument}.ipynb"))
        }
    };
    let notebook = serde_json::to_string_pretty(&to_notebook(&interpreter.messages()))
        .map_err(io::Error::other)?;
    write_export(&path, &notebook, "Jupyter notebook", out)
}

fn write_export(path: &Path, text: &str, what: &str, out: &mut Doc<'_>) -> io::Result<()> {
    match crate::export_file::write_no_follow(path, text.as_bytes()) {
        Ok(()) => out.md(&format!(
            "{what} exported to {}\n",
            absolute(path).display()
        )),
        Err(e) => out.md(&format!(
            "> Could not write {}: {e}\n",
            absolute(path).display()
        )),
    }
}
