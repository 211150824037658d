//! `--conversations`: pick a saved conversation (newest first) — with the arrow keys on a
//! terminal, by its number in a pipe — see it, continue it.

use std::io::Write;
use std::path::{Path, PathBuf};

use oi_core::Message;

use crate::input::{LineSource, Read};

/// Saved conversations in `dir`, newest first.
pub fn list(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
        .collect();
    files.sort_by_key(|entry| std::cmp::Reverse(entry.0));
    files.into_iter().map(|(_, p)| p).collect()
}

/// How the original shows a file name: `Make_me_a__July_29_2025_18-29-20.json` →
/// `Make me a... (July 29 2025 18-29-20)`.
pub fn display_name(path: &Path) -> String {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    format!(
        "{})",
        name.replace(".json", "")
            .replace("__", "... (")
            .replace('_', " ")
    )
}

/// On a terminal: the arrow-key picker's choice (`Some(None)`: the user left); `None` when
/// standard input or output is not a terminal.
#[allow(clippy::type_complexity)]
fn pick_on_terminal(
    files: &[PathBuf],
    out: &mut dyn Write,
) -> anyhow::Result<Option<Option<(PathBuf, Vec<Message>)>>> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Ok(None);
    }
    out.flush()?;
    let names: Vec<String> = files
        .iter()
        .map(|f| crate::sanitize::clean(&display_name(f)))
        .collect();
    let size = crate::term::Size::now();
    let Some(index) = crate::picker::pick(&names, size.cols, size.rows)? else {
        return Ok(Some(None));
    };
    let path = files[index].clone();
    let messages = oi_core::history::load(&path)?;
    Ok(Some(Some((path, messages))))
}

/// Asks which conversation to continue; returns its path and messages.
pub fn pick(
    dir: &Path,
    source: &mut dyn LineSource,
    out: &mut dyn Write,
) -> anyhow::Result<Option<(PathBuf, Vec<Message>)>> {
    let stored = format!("Conversations are stored in \"{}\".", dir.display());
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        writeln!(out, "{}", crate::doc::wrapped(&stored, ""))?;
    } else {
        writeln!(out, "> {stored}")?;
    }
    let files = list(dir);
    if files.is_empty() {
        writeln!(out, "No saved conversations yet.")?;
        return Ok(None);
    }
    writeln!(out, "Select a conversation to resume:\n")?;
    if let Some(picked) = pick_on_terminal(&files, out)? {
        return Ok(picked);
    }
    for (i, file) in files.iter().enumerate() {
        writeln!(
            out,
            "  {}. {}",
            i + 1,
            crate::sanitize::clean(&display_name(file))
        )?;
    }
    loop {
        let answer = match source.read_line("\nNumber (empty to quit): ") {
            Read::Line(line) => line,
            Read::Interrupted | Read::Eof => return Ok(None),
        };
        let answer = answer.trim();
        if answer.is_empty() {
            return Ok(None);
        }
        match answer
            .parse::<usize>()
            .ok()
            .and_then(|n| files.get(n.wrapping_sub(1)))
        {
            Some(path) => {
                let messages = oi_core::history::load(path)?;
                return Ok(Some((path.clone(), messages)));
            }
            None => writeln!(out, "Type a number from 1 to {}.", files.len())?,
        }
    }
}
