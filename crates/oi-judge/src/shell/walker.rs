//! The walker over one parsed shell script: the reading it reports to, the script's text and
//! what the script knows at the current point.

use crate::env::Env;
use crate::scan::Scan;
use crate::word::Field;

/// The most values one variable (or one word) is followed with; past that it is unknown.
pub(crate) const MAX_ALTERNATIVES: usize = 16;

/// The walker over one parsed script.
pub(crate) struct Walker<'s, 'p> {
    pub(crate) scan: &'s mut Scan<'p>,
    pub(crate) src: &'s str,
    pub(crate) env: Env,
    /// The directories a `cd` just moved to (for `cd x && …`).
    pub(crate) last_cd: Option<Vec<Option<String>>>,
    /// The files the redirections of the current statement write (`>>`: true).
    pub(crate) writes: Vec<(Field, bool)>,
}
