//! What a command or statement writes to its standard output, as far as oi can tell (what a
//! pipeline's next stage reads).

/// What a command or statement writes to its standard output, as far as oi can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Output {
    /// Nothing is piped (the first stage of a pipeline).
    Nothing,
    /// Known text (`echo`, `printf`, a here-document).
    Literal(String),
    /// The output of a decoder (`base64 -d`, `xxd -r`, …), or of a filter fed by one.
    Decoded,
    /// Paths `find` prints: a path pattern (for `xargs`).
    Found(String),
    /// Anything else.
    Unknown,
}
