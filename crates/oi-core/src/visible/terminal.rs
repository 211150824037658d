//! Messages and program output made safe to print on a terminal (or in a notebook): escape
//! sequences (CSI, OSC, DCS, APC, PM, SOS and two-character ones, in their 7- and 8-bit
//! forms, even when cut across pieces) and every other control character but `\n` and `\t`
//! are removed, and so are bidirectional overrides and isolates. A model or a program could
//! otherwise set the window title (OSC 0), write the clipboard (OSC 52), move the cursor and
//! overwrite what the user reads (CSI). A string sequence (OSC, DCS, …) that never ends stops
//! hiding text at the end of its line. A `\r` becomes a line break ([`Carriage::NewLine`]),
//! or — for program output on a terminal — a clear of the current line
//! ([`Carriage::ClearLine`]), so progress bars stay readable and a `\r` can never overwrite
//! part of a line with other text.
//!
//! Code is not filtered here: it is shown whole, see [`super::show_code`].

/// Erase the whole current line, from its start: what oi prints for a `\r` in program output
/// on a terminal.
const CLEAR_LINE: &str = "\r\x1b[2K";

/// The longest escape sequence of parameters that is swallowed; a longer one is shown.
const MAX_CSI: usize = 64;

/// The longest string sequence (OSC, DCS, …) swallowed on one line.
const MAX_STRING: usize = 4096;

/// Whether `c` changes the direction of the text around it (removed from messages and
/// output; zero-width joiners stay, emoji need them).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// What a `\r` in messages or output becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carriage {
    /// A line break (`\r\n` stays one line break).
    NewLine,
    /// The current line is cleared and written again (`\r\n` stays one line break).
    ClearLine,
}

/// Where the sanitizer is inside an escape sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Ordinary text.
    Ground,
    /// Right after ESC.
    Escape,
    /// ESC and intermediate bytes (`ESC ( B`).
    Intermediate,
    /// A control sequence (`ESC [` or 8-bit CSI): parameters until a final byte.
    Csi,
    /// A string sequence (OSC, DCS, SOS, PM, APC) until BEL or ST.
    Text,
    /// ESC inside a string sequence (`ESC \` ends it).
    TextEscape,
}

/// Removes escape sequences and control characters from a stream of text (messages and
/// program output); keeps what it needs across pieces. Call [`finish`](Self::finish) at the
/// end of each block.
#[derive(Debug, Clone)]
pub struct Sanitizer {
    carriage: Carriage,
    state: State,
    /// Characters swallowed in the current sequence.
    swallowed: usize,
    /// A `\r` waits for the next character (`\r\n` is one line break).
    pending_cr: bool,
}

impl Sanitizer {
    /// A sanitizer in ordinary text.
    pub fn new(carriage: Carriage) -> Self {
        Sanitizer {
            carriage,
            state: State::Ground,
            swallowed: 0,
            pending_cr: false,
        }
    }

    /// The safe text for the next piece.
    pub fn push(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            self.step(c, &mut out);
        }
        out
    }

    /// Ends a block: a waiting `\r` is resolved and an unfinished sequence forgotten.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        if std::mem::take(&mut self.pending_cr) && self.carriage == Carriage::NewLine {
            out.push('\n');
        }
        self.state = State::Ground;
        self.swallowed = 0;
        out
    }

    fn enter(&mut self, state: State) {
        self.state = state;
        self.swallowed = 0;
    }

    fn step(&mut self, c: char, out: &mut String) {
        match self.state {
            State::Ground => self.ground(c, out),
            State::Escape => match c {
                '[' => self.enter(State::Csi),
                ']' | 'P' | 'X' | '^' | '_' => self.enter(State::Text),
                '\u{20}'..='\u{2f}' => self.enter(State::Intermediate),
                '\u{30}'..='\u{7e}' => self.enter(State::Ground),
                '\u{1b}' => self.enter(State::Escape),
                _ => {
                    self.enter(State::Ground);
                    self.ground(c, out);
                }
            },
            State::Intermediate => match c {
                '\u{20}'..='\u{2f}' => {}
                '\u{30}'..='\u{7e}' => self.enter(State::Ground),
                _ => {
                    self.enter(State::Ground);
                    self.ground(c, out);
                }
            },
            State::Csi => match c {
                '\u{20}'..='\u{3f}' if self.swallowed < MAX_CSI => self.swallowed += 1,
                '\u{40}'..='\u{7e}' => self.enter(State::Ground),
                _ => {
                    self.enter(State::Ground);
                    self.ground(c, out);
                }
            },
            State::Text => match c {
                '\u{7}' | '\u{9c}' => self.enter(State::Ground),
                '\u{1b}' => self.state = State::TextEscape,
                '\n' => {
                    self.enter(State::Ground);
                    self.ground(c, out);
                }
                _ if self.swallowed < MAX_STRING => self.swallowed += 1,
                _ => {
                    self.enter(State::Ground);
                    self.ground(c, out);
                }
            },
            State::TextEscape => {
                if c == '\\' {
                    self.enter(State::Ground);
                } else {
                    self.enter(State::Escape);
                    self.step(c, out);
                }
            }
        }
    }

    fn ground(&mut self, c: char, out: &mut String) {
        if std::mem::take(&mut self.pending_cr) {
            match (c, self.carriage) {
                ('\n', _) => {}
                (_, Carriage::NewLine) => out.push('\n'),
                (_, Carriage::ClearLine) => out.push_str(CLEAR_LINE),
            }
        }
        match c {
            '\n' | '\t' => out.push(c),
            '\r' => self.pending_cr = true,
            '\u{1b}' => self.enter(State::Escape),
            '\u{9b}' => self.enter(State::Csi),
            '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}' => self.enter(State::Text),
            c if c.is_control() || is_bidi_control(c) => {}
            c => out.push(c),
        }
    }
}

/// `text` whole, through a fresh [`Sanitizer`] with line breaks for `\r`: for error messages
/// and other text printed in one go.
pub fn clean(text: &str) -> String {
    let mut sanitizer = Sanitizer::new(Carriage::NewLine);
    let mut out = sanitizer.push(text);
    out.push_str(&sanitizer.finish());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every hostile sequence the tests replay, in its 7-bit and 8-bit forms.
    const HOSTILE: &str = "a\x1b]0;pwned title\x07b\x1b]52;c;cm0gLXJmIH4=\x1b\\c\x1b[2J\x1b[1;1Hd\x1b[8me\x1bPq#0;2;0;0;0\x1b\\f\u{9b}31mg\u{9d}0;t\u{9c}h\x08\x07\x00\x7fi\u{202e}j\x1b(Bk";

    #[test]
    fn messages_lose_every_sequence_and_control() {
        assert_eq!(clean(HOSTILE), "abcdefghijk");
        assert_eq!(clean("tab\there\r\nnext\rover"), "tab\there\nnext\nover");
    }

    #[test]
    fn sequences_cut_anywhere_are_still_removed() {
        let whole = clean(HOSTILE);
        let chars: Vec<char> = HOSTILE.chars().collect();
        for cut in 0..chars.len() {
            let (a, b): (String, String) =
                (chars[..cut].iter().collect(), chars[cut..].iter().collect());
            let mut sanitizer = Sanitizer::new(Carriage::NewLine);
            let got = sanitizer.push(&a) + &sanitizer.push(&b) + &sanitizer.finish();
            assert_eq!(got, whole, "cut at {cut}");
        }
    }

    #[test]
    fn unterminated_strings_hide_at_most_the_rest_of_their_line() {
        assert_eq!(clean("x\x1b]0;never ends\nvisible"), "x\nvisible");
        // `52;c;` and then A's are swallowed up to the limit; the rest shows.
        let long = format!("\x1b]52;c;{}", "A".repeat(MAX_STRING + 10));
        assert_eq!(clean(&long), "A".repeat(15));
        let mut sanitizer = Sanitizer::new(Carriage::NewLine);
        assert_eq!(sanitizer.push("\x1b]0;cut"), "");
        assert_eq!(sanitizer.finish(), "");
        assert_eq!(sanitizer.push("next block"), "next block");
    }

    #[test]
    fn carriage_returns_in_output() {
        let mut bar = Sanitizer::new(Carriage::ClearLine);
        let got = bar.push("10%\r") + &bar.push("50%\r100%\r\n") + &bar.finish();
        assert_eq!(got, format!("10%{CLEAR_LINE}50%{CLEAR_LINE}100%\n"));
        let mut plain = Sanitizer::new(Carriage::NewLine);
        let got = plain.push("10%\r50%\r") + &plain.finish();
        assert_eq!(got, "10%\n50%\n");
    }

    #[test]
    fn ordinary_text_is_untouched() {
        let text = "Héllo — 👩‍💻 `code` **bold**\n\tindented ✓";
        assert_eq!(clean(text), text);
    }
}
