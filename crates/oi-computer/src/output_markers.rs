//! The output markers of spec a.6, applied to the console text of one run.
//!
//! A line that starts with `@@@RECIPIENT:<name>@@@CONTENT:<text>@@@END` becomes an output for
//! that recipient with content `<text>` (kept whole, `:` included; the original cut it at the
//! first `:`). A line containing `@@@HIDE_TRACEBACK@@@` becomes `Stopping execution.\n\n`
//! followed by the text after the last marker, trimmed. Text streams through as it comes: only
//! a possible start of a marker, or a marked line, is held back. (The driver's own event
//! frames were split off before, by `driver_events.rs`.)

use oi_core::computer::Output;
use oi_core::lmc::Recipient;

const RECIPIENT: &str = "@@@RECIPIENT:";
const CONTENT: &str = "@@@CONTENT:";
const END: &str = "@@@END";
const HIDE: &str = "@@@HIDE_TRACEBACK@@@";
/// The most a marked line may hold before it is given up on and passed through.
const MAX_HELD: usize = 1024 * 1024;

/// Rewrites marked console text of one run.
#[derive(Debug, Default)]
pub(crate) struct MarkerFilter {
    /// Text not yet passed on.
    held: String,
    /// Whether the next text starts a line.
    not_line_start: bool,
    /// A recipient marker just ended without its newline: drop one if it comes next.
    eat_newline: bool,
}

/// What holding back requires for the text in `held`.
enum Hold {
    /// Nothing: pass it all on.
    None,
    /// Keep the text from this index on (a possible marker start).
    From(usize),
}

impl MarkerFilter {
    /// Takes console text; returns the outputs to pass on now.
    pub(crate) fn push(&mut self, text: &str) -> Vec<Output> {
        let text = match std::mem::take(&mut self.eat_newline) {
            true => text.strip_prefix('\n').unwrap_or(text),
            false => text,
        };
        self.held.push_str(text);
        let mut out = Vec::new();
        while !self.held.is_empty() {
            if self.take_recipient_line(&mut out) || self.take_hide_line(&mut out) {
                continue;
            }
            let at = match self.hold_point() {
                Hold::None => self.held.len(),
                Hold::From(at) => at,
            };
            if at == 0 {
                break;
            }
            let passed: String = self.held.drain(..at).collect();
            self.note_passed(&passed);
            pass(&passed, &mut out);
        }
        merge(out)
    }

    /// Turns a complete recipient line at the start of `held` into its output.
    fn take_recipient_line(&mut self, out: &mut Vec<Output>) -> bool {
        if self.not_line_start || !self.held.starts_with(RECIPIENT) {
            return false;
        }
        let Some(end) = self.held.find(END) else {
            if self.held.len() > MAX_HELD {
                // Not a marker after all: give it back as text.
                let passed = std::mem::take(&mut self.held);
                self.note_passed(&passed);
                pass(&passed, out);
                return true;
            }
            return false;
        };
        let marked = self.held[..end].to_owned();
        let mut rest = end + END.len();
        if self.held[rest..].starts_with('\n') {
            rest += 1;
        } else if rest == self.held.len() {
            self.eat_newline = true;
        }
        self.held.drain(..rest);
        self.not_line_start = false;
        out.push(recipient_output(&marked));
        true
    }

    /// Rewrites a complete line containing the hide marker (passing the text before that
    /// line first); false when there is none, or it is not complete yet.
    fn take_hide_line(&mut self, out: &mut Vec<Output>) -> bool {
        let Some(at) = self.held.find(HIDE) else {
            return false;
        };
        let before = line_begin(&self.held, at);
        if before > 0 {
            let passed: String = self.held.drain(..before).collect();
            self.note_passed(&passed);
            pass(&passed, out);
            return true;
        }
        let end = match self.held.find('\n') {
            Some(end) => end,
            None if self.held.len() > MAX_HELD => self.held.len() - 1,
            None => return false,
        };
        let line = &self.held[..end];
        let after = line.rsplit(HIDE).next().unwrap_or("").trim();
        out.push(Output::console(format!("Stopping execution.\n\n{after}\n")));
        self.held.drain(..=end);
        self.not_line_start = false;
        true
    }

    /// Ends the run: whatever is still held back, as it is.
    pub(crate) fn finish(&mut self) -> Vec<Output> {
        let mut out = Vec::new();
        let held = std::mem::take(&mut self.held);
        self.not_line_start = false;
        pass(&held, &mut out);
        out
    }

    fn note_passed(&mut self, passed: &str) {
        if let Some(last) = passed.chars().last() {
            self.not_line_start = last != '\n';
        }
    }

    /// Where held text must start being kept back: at a line start that may become a
    /// recipient marker, or at a possible start of a hide marker.
    fn hold_point(&self) -> Hold {
        let held = &self.held;
        if let Some(at) = held.find(HIDE) {
            return Hold::From(line_begin(held, at));
        }
        // Every line start in `held` (including its beginning when it starts a line).
        let mut starts: Vec<usize> = Vec::new();
        if !self.not_line_start {
            starts.push(0);
        }
        starts.extend(held.match_indices('\n').map(|(i, _)| i + 1));
        for start in starts {
            let line = &held[start..];
            let prefix_len = line.len().min(RECIPIENT.len());
            if RECIPIENT.starts_with(&line[..floor(line, prefix_len)])
                || line.starts_with(RECIPIENT)
            {
                return Hold::From(start);
            }
        }
        // A possible start of the hide marker at the very end.
        let max = HIDE.len().saturating_sub(1).min(held.len());
        for k in (1..=max).rev() {
            let at = held.len() - k;
            if held.is_char_boundary(at) && HIDE.starts_with(&held[at..]) {
                return Hold::From(line_begin(held, at));
            }
        }
        Hold::None
    }
}

/// The index where the line containing `at` begins.
fn line_begin(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map(|i| i + 1).unwrap_or(0)
}

fn floor(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn pass(text: &str, out: &mut Vec<Output>) {
    if !text.is_empty() {
        out.push(Output::console(text));
    }
}

/// The output a complete `@@@RECIPIENT:…@@@CONTENT:…` text (without `@@@END`) stands for.
fn recipient_output(marked: &str) -> Output {
    let body = &marked[RECIPIENT.len()..];
    let (name, content) = match body.find(CONTENT) {
        Some(at) => (&body[..at], &body[at + CONTENT.len()..]),
        None => (body, ""),
    };
    let output = Output::console(content);
    match name.trim().to_ascii_lowercase().as_str() {
        "user" => output.to(Recipient::User),
        "assistant" => output.to(Recipient::Assistant),
        _ => output,
    }
}

/// Joins consecutive plain console outputs.
fn merge(outputs: Vec<Output>) -> Vec<Output> {
    crate::merge_outputs::merge_outputs(outputs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pieces: &[&str]) -> Vec<Output> {
        let mut f = MarkerFilter::default();
        let mut out = Vec::new();
        for p in pieces {
            out.extend(f.push(p));
        }
        out.extend(f.finish());
        crate::merge_outputs::merge_outputs(out)
    }

    #[test]
    fn plain_text_passes_at_once() {
        let mut f = MarkerFilter::default();
        assert_eq!(f.push("hello"), vec![Output::console("hello")]);
        assert_eq!(f.push(" world\n"), vec![Output::console(" world\n")]);
        assert!(f.finish().is_empty());
    }

    #[test]
    fn recipient_marker_keeps_colons() {
        let out = run(&[
            "before\n@@@RECIPIENT:user@@@CONT",
            "ENT:time: 12:30@@@END\nafter\n",
        ]);
        assert_eq!(
            out,
            vec![
                Output::console("before\n"),
                Output::console("time: 12:30").to(Recipient::User),
                Output::console("after\n"),
            ]
        );
    }

    #[test]
    fn marker_not_at_line_start_is_text() {
        let out = run(&["x @@@RECIPIENT:user@@@CONTENT:a@@@END\n"]);
        assert_eq!(
            out,
            vec![Output::console("x @@@RECIPIENT:user@@@CONTENT:a@@@END\n")]
        );
    }

    #[test]
    fn hide_traceback() {
        let out = run(&[
            "Traceback...\nException: @@@HIDE_TRA",
            "CEBACK@@@ Not allowed: here \n",
            "more\n",
        ]);
        assert_eq!(
            out,
            vec![Output::console(
                "Traceback...\nStopping execution.\n\nNot allowed: here\nmore\n"
            )]
        );
    }

    #[test]
    fn unfinished_marker_is_given_back() {
        let out = run(&["@@@RECIPIENT:user@@@CONTENT:never ends"]);
        assert_eq!(
            out,
            vec![Output::console("@@@RECIPIENT:user@@@CONTENT:never ends")]
        );
    }
}
