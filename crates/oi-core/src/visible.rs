//! What the person approves is what runs: text from the model and from the code it runs,
//! made safe and honest to show — one rule for the terminal, the Python package and (through
//! a generated table) the web page.
//!
//! - **Code** ([`show_code`], [`CodeView`]) keeps every character, but each one that is not
//!   plainly visible is shown as an escape: `␍` for `\r`, `␛` for ESC and the other C0
//!   control pictures, `␡` for DEL, `<U+E0041>` for everything else. Which characters that
//!   is follows from what they are, by Unicode 16.0.0 properties (see [`rule`]):
//!   default-ignorable, format, control (but tab and newline), private-use, surrogate,
//!   unassigned, and every space or separator but U+0020 are escaped; a combining mark shows
//!   only on a visible base; letters, digits, punctuation and symbols of every script
//!   (Chinese, Arabic, emoji) show as themselves. [`warning`] names what was escaped.
//! - **Messages and output** ([`Sanitizer`], [`clean`]) lose escape sequences and control
//!   characters (see [`terminal`]).
//! - **A turn as plain text** ([`PlainText`]): messages, code and output in fenced blocks,
//!   by these two rules, for the terminal program's `--plain` and the Python package.
//! - **The page** loads `crates/oi-server/web/visible_table.js`, written by [`web_table`]
//!   from the same rule (a test fails when the committed file differs).

pub mod names;
pub mod plain_text;
pub mod rule;
pub mod terminal;
mod web_table;

pub use names::describe;
pub use plain_text::{Part, PlainText};
pub use rule::{Class, UNICODE_VERSION, class};
pub use terminal::{Carriage, Sanitizer, clean};
pub use web_table::web_table;

/// Shows code piece by piece as it streams: each character shown as itself or as an escape.
/// It remembers whether the last character was a visible base, so a combining mark cut off
/// from its base by a piece boundary is shown the same as in the whole text.
#[derive(Debug, Clone, Default)]
pub struct CodeView {
    /// The last character was shown as itself and is not a space, tab or newline.
    after_visible: bool,
}

impl CodeView {
    /// A view at the start of a block.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `c`, coming next, is shown as an escape (and moves past it).
    pub fn escapes(&mut self, c: char) -> bool {
        let escaped = match class(c) {
            Class::Shown => false,
            Class::Escaped => true,
            Class::Mark => !self.after_visible,
        };
        self.after_visible = !escaped && !matches!(c, ' ' | '\t' | '\n');
        escaped
    }

    /// The next piece as shown.
    pub fn push(&mut self, code: &str) -> String {
        let mut out = String::with_capacity(code.len());
        for c in code.chars() {
            if self.escapes(c) {
                rule::push_escape(c, &mut out);
            } else {
                out.push(c);
            }
        }
        out
    }
}

/// Code as it will run, every character that is not plainly visible shown as an escape (see
/// the module docs). Pieces of a stream go through one [`CodeView`] instead.
pub fn show_code(code: &str) -> String {
    CodeView::new().push(code)
}

/// The characters of `code` that [`show_code`] shows as escapes, in order.
pub fn hidden_characters(code: &str) -> Vec<char> {
    let mut view = CodeView::new();
    code.chars().filter(|&c| view.escapes(c)).collect()
}

/// Whether `code` holds anything [`show_code`] shows as an escape.
pub fn has_hidden_characters(code: &str) -> bool {
    let mut view = CodeView::new();
    code.chars().any(|c| view.escapes(c))
}

/// How many different escaped characters the warning names.
const NAMED: usize = 3;

/// What to say before the approval question about `code`'s escaped characters, or `None`
/// when it has none: "this code contains control or invisible characters, 37 in all
/// (U+E0065 TAG LATIN SMALL LETTER E, …, and 9 other kinds), shown above as escapes: …".
/// The caller starts it with "Warning: " and ends it with its own advice.
pub fn warning(code: &str) -> Option<String> {
    let hidden = hidden_characters(code);
    if hidden.is_empty() {
        return None;
    }
    let mut kinds: Vec<char> = Vec::new();
    for &c in &hidden {
        if !kinds.contains(&c) {
            kinds.push(c);
        }
    }
    let mut named: Vec<String> = kinds.iter().take(NAMED).map(|&c| describe(c)).collect();
    let others = kinds.len().saturating_sub(NAMED);
    match others {
        0 => {}
        1 => named.push("and 1 other kind".to_owned()),
        n => named.push(format!("and {n} other kinds")),
    }
    Some(format!(
        "this code contains control or invisible characters, {} in all ({}), shown above as escapes: ␍ for a carriage return, ␛ for an escape, <U+…> for the others",
        hidden.len(),
        named.join(", ")
    ))
}
