//! The code's output in its own panel: shown as it comes, errors and tracebacks in red, a
//! `\r` redrawing the line (progress bars), and long output cut: the first rows, then — at
//! the end — a line saying how much was left out and where the whole output was saved, and
//! the last lines. The scrollback never gets 100 000 lines; the model gets its own capped
//! copy from the core either way.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::activity::elapsed_text;
use crate::output_tone::{Tone, Tones};
use crate::screen::Screen;
use crate::style::{LABEL, MUTED, Span, width};
use crate::wrap::{Break, wrap};

/// Rows of output shown before the rest is cut.
pub const HEAD_ROWS: usize = 25;
/// Lines shown at the end of cut output.
pub const TAIL_LINES: usize = 25;
/// What the sanitizer writes for a `\r` in output.
const CLEAR_LINE: &str = "\r\x1b[2K";
/// The longest line kept for the tail, in characters.
const LONGEST_TAIL_LINE: usize = 2000;

/// Output after the head: counted, saved to a file, its last lines kept.
struct Cut {
    file: Result<(PathBuf, std::io::BufWriter<std::fs::File>), String>,
    tail: VecDeque<(String, Tone)>,
    lines: u64,
    bytes: u64,
}

/// One run's output panel.
pub struct OutputPanel {
    indent: &'static str,
    started: Instant,
    /// The header is drawn.
    open: bool,
    rows_shown: usize,
    /// The current line, not yet complete.
    line: String,
    /// The tone the current line is drawn in.
    tone: Tone,
    /// Reads which lines are errors.
    tones: Tones,
    /// What was shown, kept to write the whole output once it is cut.
    shown: String,
    cut: Option<Cut>,
    dir: PathBuf,
    /// The foot says how long the run took.
    timed: bool,
}

impl OutputPanel {
    /// A panel for a run starting now; cut output is saved in `dir`.
    pub fn new(indent: &'static str, dir: &Path) -> Self {
        OutputPanel {
            indent,
            started: Instant::now(),
            open: false,
            rows_shown: 0,
            line: String::new(),
            tone: Tone::Normal,
            tones: Tones::default(),
            shown: String::new(),
            cut: None,
            dir: dir.to_owned(),
            timed: true,
        }
    }

    /// A panel whose foot gives no time (a run shown again from a saved conversation).
    pub fn untimed(mut self) -> Self {
        self.timed = false;
        self
    }

    /// Output lines left out so far.
    pub fn left_out(&self) -> Option<u64> {
        self.cut.as_ref().map(|cut| cut.lines)
    }

    fn gutter(&self) -> Vec<Span> {
        vec![Span::plain(self.indent), Span::new(MUTED, "│ ")]
    }

    fn header(&mut self, screen: &mut Screen) -> String {
        if self.open {
            return String::new();
        }
        self.open = true;
        let mut out = screen.fresh_line();
        out.push_str(&screen.rows(&[frame(self.indent, "╭─ ", "output", screen.cols())]));
        out
    }

    /// Shows already sanitized output text.
    pub fn push(&mut self, text: &str, screen: &mut Screen) -> String {
        let mut out = self.header(screen);
        for piece in text.split_inclusive('\n') {
            let (body, complete) = match piece.strip_suffix('\n') {
                Some(body) => (body, true),
                None => (piece, false),
            };
            let mut parts = body.split(CLEAR_LINE);
            if let Some(first) = parts.next() {
                out.push_str(&self.append(first, screen));
            }
            for part in parts {
                out.push_str(&self.carriage_return(screen));
                out.push_str(&self.append(part, screen));
            }
            if complete {
                out.push_str(&self.complete_line(screen));
            }
        }
        out
    }

    /// A `\r`: the line starts again.
    fn carriage_return(&mut self, screen: &mut Screen) -> String {
        self.line.clear();
        if self.cut.is_some() {
            return String::new();
        }
        self.shown.push('\n');
        let (mut out, _) = screen.replace(&[], false);
        out.push_str(&screen.write(&self.gutter()));
        out
    }

    fn append(&mut self, text: &str, screen: &mut Screen) -> String {
        if text.is_empty() {
            return String::new();
        }
        if let Some(cut) = self.cut.as_mut() {
            cut.record(text);
            if self.line.chars().count() < LONGEST_TAIL_LINE {
                self.line.push_str(text);
            }
            return String::new();
        }
        self.shown.push_str(text);
        let mut out = String::new();
        if self.line.is_empty() && screen.at_line_start() {
            self.tone = self.tones.next_line();
            out.push_str(&screen.write(&self.gutter()));
        }
        self.line.push_str(text);
        out.push_str(&screen.write(&[Span::new(self.tone.style(), text)]));
        let budget = HEAD_ROWS.saturating_sub(self.rows_shown) * screen.cols();
        if screen.live() > budget {
            // One endless line: the head is full.
            out.push_str(&screen.end_line());
            self.rows_shown = HEAD_ROWS;
            self.start_cut();
            self.line.clear();
        }
        out
    }

    fn complete_line(&mut self, screen: &mut Screen) -> String {
        let line = std::mem::take(&mut self.line);
        let tone = self.classify(&line);
        if let Some(cut) = self.cut.as_mut() {
            cut.record("\n");
            cut.lines += 1;
            let kept: String = line.chars().take(LONGEST_TAIL_LINE).collect();
            cut.tail.push_back((kept, tone));
            if cut.tail.len() > TAIL_LINES {
                cut.tail.pop_front();
            }
            return String::new();
        }
        self.shown.push('\n');
        let mut out = String::new();
        if screen.at_line_start() {
            // An empty line.
            out.push_str(&screen.write(&self.gutter()));
        }
        let columns = width(self.indent) + 2 + width(&line);
        let wrapped = columns > screen.cols();
        if tone != self.tone || wrapped {
            let rows = wrap(
                &[Span::new(tone.style(), line.as_str())],
                screen.cols(),
                &self.gutter(),
                &self.gutter(),
                Break::Anywhere,
            );
            let (redraw, _) = screen.replace(&rows, false);
            out.push_str(&redraw);
            self.rows_shown += rows.len();
        } else {
            out.push_str(&screen.end_line());
            self.rows_shown += 1;
        }
        if self.rows_shown >= HEAD_ROWS {
            self.start_cut();
        }
        out
    }

    fn start_cut(&mut self) {
        if self.cut.is_some() {
            return;
        }
        let file = open_output_file(&self.dir).and_then(|(path, mut file)| {
            file.write_all(self.shown.as_bytes())
                .map(|()| (path, file))
                .map_err(|e| e.to_string())
        });
        self.shown = String::new();
        self.cut = Some(Cut {
            file,
            tail: VecDeque::new(),
            lines: 0,
            bytes: 0,
        });
    }

    /// How `line` reads (and the traceback state it leaves).
    fn classify(&mut self, line: &str) -> Tone {
        self.tones.classify(line)
    }

    /// The run ended: the rest of a cut output, then the panel's foot.
    pub fn finish(&mut self, screen: &mut Screen) -> String {
        let mut out = String::new();
        if !self.line.is_empty() {
            out.push_str(&self.complete_line(screen));
        }
        let elapsed = if self.timed {
            format!(" {}", elapsed_text(self.started.elapsed()))
        } else {
            String::new()
        };
        if !self.open {
            out.push_str(&screen.fresh_line());
            let dot = if self.timed { " ·" } else { "" };
            out.push_str(&screen.rows(&[vec![
                Span::plain(self.indent),
                Span::new(MUTED, format!("╰─ no output{dot}{elapsed}")),
            ]]));
            return out;
        }
        out.push_str(&screen.fresh_line());
        if let Some(cut) = self.cut.take() {
            out.push_str(&self.show_cut(cut, screen));
        }
        out.push_str(&screen.rows(&[vec![
            Span::plain(self.indent),
            Span::new(MUTED, format!("╰─{elapsed}")),
        ]]));
        out
    }

    fn show_cut(&self, cut: Cut, screen: &mut Screen) -> String {
        let Cut {
            file,
            tail,
            lines,
            bytes,
        } = cut;
        let left_out = lines.saturating_sub(tail.len() as u64);
        let saved = match file {
            Ok((path, mut writer)) => match writer.flush() {
                Ok(()) => format!("the whole output is in {}", path.display()),
                Err(e) => format!("saving the whole output failed: {e}"),
            },
            Err(e) => format!("saving the whole output failed: {e}"),
        };
        let note = format!(
            "… {} more line{} ({}) not shown; {saved}",
            grouped(left_out),
            if left_out == 1 { "" } else { "s" },
            size_text(bytes)
        );
        let mut rows = wrap(
            &[Span::new(MUTED, crate::sanitize::clean(&note))],
            screen.cols(),
            &self.gutter(),
            &self.gutter(),
            Break::Words,
        );
        for (line, tone) in tail {
            rows.extend(wrap(
                &[Span::new(tone.style(), line)],
                screen.cols(),
                &self.gutter(),
                &self.gutter(),
                Break::Anywhere,
            ));
        }
        screen.rows(&rows)
    }
}

impl Cut {
    fn record(&mut self, text: &str) {
        self.bytes += text.len() as u64;
        if let Ok((_, file)) = self.file.as_mut() {
            let text = text.replace(CLEAR_LINE, "\n");
            if let Err(e) = file.write_all(text.as_bytes()) {
                self.file = Err(e.to_string());
            }
        }
    }
}

/// A new file for a run's whole output in `dir` (created new, never through a link).
fn open_output_file(dir: &Path) -> Result<(PathBuf, std::io::BufWriter<std::fs::File>), String> {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let name = format!("output-{}-{stamp}.txt", std::process::id());
    let path = dir.join(&name);
    let file = crate::display::create_new_in(dir, &name)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((path, std::io::BufWriter::new(file)))
}

/// `99,950`.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `12 KB`, `3.4 MB`.
fn size_text(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} bytes"),
        b if b < 1024 * 1024 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// A frame row: `indent`, the corner, a label, and a rule to the frame's width.
pub fn frame(indent: &str, corner: &str, label: &str, cols: usize) -> Vec<Span> {
    let frame_width = cols.min(100).saturating_sub(1);
    let used = width(indent) + width(corner) + width(label) + 1;
    vec![
        Span::plain(indent),
        Span::new(MUTED, corner),
        Span::new(LABEL, label),
        Span::new(
            MUTED,
            format!(" {}", "─".repeat(frame_width.saturating_sub(used))),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_output_keeps_its_head_and_tail_and_saves_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let mut screen = Screen::new(60, 40);
        let mut panel = OutputPanel::new("  ", dir.path());
        let text: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        let mut out = panel.push(&text, &mut screen);
        out.push_str(&panel.finish(&mut screen));
        assert!(
            out.contains("line 25\n") && !out.contains("line 26\n"),
            "{out}"
        );
        assert!(out.contains("line 976\n") && out.contains("line 1000\n"));
        assert!(!out.contains("line 975\n"));
        assert!(out.contains("950 more lines"), "{out}");
        assert_eq!(grouped(99_950), "99,950");
        assert_eq!(grouped(950), "950");
        let saved = std::fs::read_dir(dir.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        assert_eq!(std::fs::read_to_string(saved).unwrap(), text);
    }
}
