//! Text from the model and from the code it runs, made safe to print on the user's terminal:
//! oi's one rule for it lives in [`oi_core::visible`] (shared with the Python package and,
//! through a generated table, the web page).
//!
//! Everything oi prints that it did not write itself — the model's messages, its code, the
//! code's output, `%` command output, error texts — passes through here, in colour and in
//! plain mode, on a terminal or not. Code ([`show_code`], [`CodeView`]) is shown whole with
//! every character that is not plainly visible as an escape (`␍`, `␛`, `<U+E0041>`), so what
//! the person approves is what runs; messages and output ([`Sanitizer`], [`clean`]) lose
//! escape sequences and control characters.

pub use oi_core::visible::{Carriage, CodeView, Sanitizer, clean, show_code, warning};
