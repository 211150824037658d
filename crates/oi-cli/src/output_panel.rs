//! The code's output in its own panel: shown as it comes, errors and tracebacks in red, a
//! `\r` redrawing the line (progress bars), and long output cut by rows, not lines: the
//! first rows, a line's first and last rows when it is longer than a few rows (one
//! `print('x' * 100000)` is a dozen rows, not 1 700), then — at the end — how many lines,
//! rows and bytes were left out, where the whole output was saved, and the last rows. The
//! scrollback never gets 100 000 lines; the model gets its own capped copy from the core
//! either way.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::activity::elapsed_text;
use crate::output_count::{Hidden, counted, size_text};
use crate::output_tone::{Tone, Tones};
use crate::screen::Screen;
use crate::style::{LABEL, MUTED, Span, text_of, width};
use crate::wrap::{Break, wrap};

/// Rows of output shown before the rest is cut.
pub const HEAD_ROWS: usize = 25;
/// Rows shown at the end of cut output.
pub const TAIL_ROWS: usize = 10;
/// Rows a long line shows of its start (fewer when the head is nearly full).
const LINE_HEAD_ROWS: usize = 6;
/// Rows a long line shows of its end.
const LINE_TAIL_ROWS: usize = 3;
/// What the sanitizer writes for a `\r` in output.
const CLEAR_LINE: &str = "\r\x1b[2K";

/// The file the whole output is saved in, once something is left out.
type Saved = Result<(PathBuf, std::io::BufWriter<std::fs::File>), String>;

/// Output after the head: counted, its last lines kept.
#[derive(Default)]
struct Cut {
    /// The line being written.
    current: Hidden,
    /// The last complete lines.
    tail: VecDeque<(Hidden, Tone)>,
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
    /// The shown part of the current line, not yet complete.
    line: String,
    /// The rest of the current line when it is longer than it may show.
    over: Option<Hidden>,
    /// The tone the current line is drawn in.
    tone: Tone,
    /// Reads which lines are errors.
    tones: Tones,
    /// The output so far, until it is saved to a file.
    shown: String,
    saved: Option<Saved>,
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
            over: None,
            tone: Tone::Normal,
            tones: Tones::default(),
            shown: String::new(),
            saved: None,
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

    /// Columns a row has for output.
    fn room(&self, screen: &Screen) -> usize {
        screen.cols().saturating_sub(width(self.indent) + 2).max(1)
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
                out.push_str(&self.complete_line(screen, true));
            }
        }
        out
    }

    /// Keeps `text` for the file of the whole output.
    fn save(&mut self, text: &str) {
        match self.saved.as_mut() {
            None => self.shown.push_str(text),
            Some(Ok((_, file))) => {
                if let Err(e) = file.write_all(text.as_bytes()) {
                    self.saved = Some(Err(e.to_string()));
                }
            }
            Some(Err(_)) => {}
        }
    }

    /// Something is left out: the whole output goes to a file from now on.
    fn start_saving(&mut self) {
        if self.saved.is_some() {
            return;
        }
        let shown = std::mem::take(&mut self.shown);
        self.saved = Some(open_output_file(&self.dir).and_then(|(path, mut file)| {
            file.write_all(shown.as_bytes())
                .map(|()| (path, file))
                .map_err(|e| e.to_string())
        }));
    }

    /// A `\r`: the line starts again.
    fn carriage_return(&mut self, screen: &mut Screen) -> String {
        self.save("\n");
        self.line.clear();
        self.over = None;
        if let Some(cut) = self.cut.as_mut() {
            cut.current = Hidden::default();
            return String::new();
        }
        let (mut out, _) = screen.replace(&[], false);
        out.push_str(&screen.write(&self.gutter()));
        out
    }

    fn append(&mut self, text: &str, screen: &mut Screen) -> String {
        if text.is_empty() {
            return String::new();
        }
        self.save(text);
        if let Some(cut) = self.cut.as_mut() {
            cut.current.push(text);
            cut.bytes += text.len() as u64;
            return String::new();
        }
        if let Some(over) = self.over.as_mut() {
            over.push(text);
            return String::new();
        }
        let mut out = String::new();
        if self.line.is_empty() && screen.at_line_start() {
            self.tone = self.tones.next_line();
            out.push_str(&screen.write(&self.gutter()));
        }
        let rows = LINE_HEAD_ROWS
            .min(HEAD_ROWS.saturating_sub(self.rows_shown))
            .max(1);
        let space = (rows * self.room(screen)).saturating_sub(width(&self.line));
        let (fits, rest) = split_at_columns(text, space);
        if !fits.is_empty() {
            self.line.push_str(fits);
            out.push_str(&screen.write(&[Span::new(self.tone.style(), fits)]));
        }
        if !rest.is_empty() {
            // A long line: its middle is counted, its end kept.
            let mut over = Hidden::default();
            over.push(rest);
            self.over = Some(over);
            self.start_saving();
        }
        out
    }

    fn complete_line(&mut self, screen: &mut Screen, newline: bool) -> String {
        if newline {
            self.save("\n");
        }
        if let Some(cut) = self.cut.as_mut() {
            let line = std::mem::take(&mut cut.current);
            let tone = self.tones.classify(&line.end);
            cut.lines += 1;
            cut.bytes += u64::from(newline);
            cut.tail.push_back((line, tone));
            if cut.tail.len() > TAIL_ROWS {
                cut.tail.pop_front();
            }
            return String::new();
        }
        let line = std::mem::take(&mut self.line);
        let over = self.over.take();
        let tone = self.tones.classify(&line);
        let mut out = String::new();
        if screen.at_line_start() {
            // An empty line.
            out.push_str(&screen.write(&self.gutter()));
        }
        let columns = width(self.indent) + 2 + width(&line);
        let wrapped = columns > screen.cols();
        if tone != self.tone || wrapped || over.is_some() {
            let mut rows = if over.is_some() {
                self.wrapped(&line, tone, screen)
            } else {
                // Between words where it can: numbers and words are not cut in the middle.
                let gutter = self.gutter();
                wrap(
                    &[Span::new(tone.style(), line.as_str())],
                    screen.cols(),
                    &gutter,
                    &gutter,
                    Break::Words,
                )
            };
            if let Some(over) = over {
                rows.extend(self.long_line_end(over, tone, screen));
            }
            let (redraw, done) = screen.replace(&rows, false);
            out.push_str(&redraw);
            if !done {
                out.push_str(&screen.rows(&rows));
            }
            self.rows_shown += rows.len();
        } else {
            out.push_str(&screen.end_line());
            self.rows_shown += 1;
        }
        if self.rows_shown >= HEAD_ROWS {
            self.start_saving();
            self.cut = Some(Cut::default());
        }
        out
    }

    /// `text` in `tone` as rows in the panel.
    fn wrapped(&self, text: &str, tone: Tone, screen: &Screen) -> Vec<Vec<Span>> {
        let gutter = self.gutter();
        wrap(
            &[Span::new(tone.style(), text)],
            screen.cols(),
            &gutter,
            &gutter,
            Break::Anywhere,
        )
    }

    /// A muted note in the panel.
    fn note(&self, text: &str, screen: &Screen) -> Vec<Vec<Span>> {
        let gutter = self.gutter();
        wrap(
            &[Span::new(MUTED, crate::sanitize::clean(text))],
            screen.cols(),
            &gutter,
            &gutter,
            Break::Words,
        )
    }

    /// What follows the first rows of a long line: how much of it is not shown, then its
    /// last rows.
    fn long_line_end(&self, mut over: Hidden, tone: Tone, screen: &Screen) -> Vec<Vec<Span>> {
        let end = self.wrapped(&over.end, tone, screen);
        let last = &end[end.len().saturating_sub(LINE_TAIL_ROWS)..];
        let shown: String = last.iter().map(|row| body_text(row, 2)).collect();
        over.unhide(&shown);
        let mut rows = Vec::new();
        if over.bytes > 0 {
            let hidden_rows = over.columns.div_ceil(self.room(screen) as u64).max(1);
            rows.extend(self.note(
                &format!(
                    "… {} of this line ({}) not shown",
                    counted(hidden_rows, "row"),
                    size_text(over.bytes)
                ),
                screen,
            ));
        }
        rows.extend(last.iter().cloned());
        rows
    }

    /// The run ended: the rest of a cut output, then the panel's foot.
    pub fn finish(&mut self, screen: &mut Screen) -> String {
        let mut out = String::new();
        let unfinished = match &self.cut {
            Some(cut) => cut.current.bytes > 0,
            None => !self.line.is_empty() || self.over.is_some(),
        };
        if unfinished {
            out.push_str(&self.complete_line(screen, false));
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
                // A note, not a frame's foot: there is no panel above it.
                Span::new(MUTED, format!("no output{dot}{elapsed}")),
            ]]));
            return out;
        }
        out.push_str(&screen.fresh_line());
        let saved = self.saved.take().map(|saved| match saved {
            Ok((path, mut writer)) => match writer.flush() {
                Ok(()) => format!("the whole output is in {}", path.display()),
                Err(e) => format!("saving the whole output failed: {e}"),
            },
            Err(e) => format!("saving the whole output failed: {e}"),
        });
        match (self.cut.take(), saved) {
            (Some(cut), Some(saved)) => out.push_str(&self.show_cut(cut, &saved, screen)),
            (None, Some(saved)) => {
                let rows = self.note(&format!("… {saved}"), screen);
                out.push_str(&screen.rows(&rows));
            }
            _ => {}
        }
        out.push_str(&screen.rows(&[vec![
            Span::plain(self.indent),
            Span::new(MUTED, format!("╰─{elapsed}")),
        ]]));
        out
    }

    fn show_cut(&self, cut: Cut, saved: &str, screen: &mut Screen) -> String {
        // The last rows, from the end back.
        let mut tail: Vec<Vec<Span>> = Vec::new();
        let mut shown_bytes = 0u64;
        let mut whole_lines = 0u64;
        for (line, tone) in cut.tail.iter().rev() {
            let room = TAIL_ROWS.saturating_sub(tail.len());
            if room == 0 {
                break;
            }
            let rows = self.wrapped(&line.end, *tone, screen);
            if rows.len() <= room && line.end.len() as u64 == line.bytes {
                shown_bytes += line.bytes + 1;
                whole_lines += 1;
                tail.extend(rows.into_iter().rev());
            } else {
                let last = &rows[rows.len().saturating_sub(room)..];
                shown_bytes += last
                    .iter()
                    .map(|r| body_text(r, 2).len() as u64)
                    .sum::<u64>();
                tail.extend(last.iter().rev().cloned());
            }
        }
        tail.reverse();
        let left_out = cut.lines.saturating_sub(whole_lines);
        let note = format!(
            "… {} more line{} ({}) not shown; {saved}",
            crate::output_count::grouped(left_out),
            if left_out == 1 { "" } else { "s" },
            size_text(cut.bytes.saturating_sub(shown_bytes))
        );
        let mut rows = self.note(&note, screen);
        rows.extend(tail);
        screen.rows(&rows)
    }
}

/// The text of a row after its first `prefix` spans (the indent and the gutter).
fn body_text(row: &[Span], prefix: usize) -> String {
    text_of(row.get(prefix..).unwrap_or(&[]))
}

/// `text` split where it reaches `columns` columns.
fn split_at_columns(text: &str, columns: usize) -> (&str, &str) {
    let mut used = 0;
    for (i, c) in text.char_indices() {
        used += crate::style::char_width(c);
        if used > columns {
            return text.split_at(i);
        }
    }
    (text, "")
}

/// A new file for a run's whole output in `dir`: `output-1.txt`, or the next number free
/// (created new, never through a link; a short name fits on a row of the note at 60
/// columns).
fn open_output_file(dir: &Path) -> Result<(PathBuf, std::io::BufWriter<std::fs::File>), String> {
    let mut last = String::new();
    for n in 1..=100_000u32 {
        let name = format!("output-{n}.txt");
        let path = dir.join(&name);
        match crate::display::create_new_in(dir, &name) {
            Ok(file) => return Ok((path, std::io::BufWriter::new(file))),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = e.to_string(),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
    }
    Err(format!("{}: {last}", dir.display()))
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

    fn shown(text: &str, cols: usize) -> (String, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let mut screen = Screen::new(cols, 40);
        let mut panel = OutputPanel::new("  ", dir.path());
        let mut out = panel.push(text, &mut screen);
        out.push_str(&panel.finish(&mut screen));
        (out, dir)
    }

    fn saved(dir: &tempfile::TempDir) -> String {
        let path = std::fs::read_dir(dir.path())
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn long_output_keeps_its_head_and_tail_and_saves_the_rest() {
        let text: String = (1..=1000).map(|i| format!("line {i}\n")).collect();
        let (out, dir) = shown(&text, 60);
        assert!(
            out.contains("line 25\n") && !out.contains("line 26\n"),
            "{out}"
        );
        assert!(out.contains("line 991\n") && out.contains("line 1000\n"));
        assert!(!out.contains("line 990\n"));
        assert!(out.contains("965 more lines (8.4 KB) not shown"), "{out}");
        assert_eq!(saved(&dir), text);
    }

    #[test]
    fn one_long_line_shows_its_first_and_last_rows() {
        let text = format!("{}\n", "x".repeat(99_990) + "0123456789");
        let (out, dir) = shown(&text, 60);
        let rows = out.lines().count();
        assert!(rows < 20, "{rows} rows:\n{out}");
        assert!(
            out.contains("│ 0123456789") || out.contains("x0123456789"),
            "{out}"
        );
        assert!(out.contains(" rows of this line (9"), "{out}");
        assert!(out.contains("the whole output is in"), "{out}");
        assert_eq!(saved(&dir), text);
    }
}
