//! Text from the model and from the code it runs, made safe to print: oi's one rule for it
//! lives in [`oi_core::visible`] (shared with the terminal program and, through a generated
//! table, the web page). A model or a program could otherwise set the window title (OSC 0),
//! write the clipboard (OSC 52), move the cursor (CSI), hide part of a line behind a `\r`, or
//! hide a whole payload in invisible characters at the approval question.
//!
//! - Messages and output ([`clean`]; streamed chunks through [`oi_core::visible::PlainText`])
//!   lose escape sequences and control characters, even when cut across chunks; `\r` becomes
//!   a line break.
//! - Code ([`show_code`]; streamed, the same) keeps every character but shows each one that
//!   is not plainly visible as an escape (`␛`, `␍`, `<U+E0041>`), so what is approved is what
//!   runs; [`warning`] counts and names them.

pub use oi_core::visible::{clean, show_code, warning};
