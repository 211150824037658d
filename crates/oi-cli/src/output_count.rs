//! Counting what an output panel leaves out: the end of a long line kept while its middle is
//! only counted (bytes and columns, so the note can say how many rows it would have taken),
//! and the numbers written the way the notes show them (`99,950`, `33.7 KB`).

use crate::style::{char_width, width};

/// The characters of a line's end that are kept (its last rows are shown).
const KEPT_END: usize = 4000;

/// Text that is counted but not shown, with its last characters kept.
#[derive(Debug, Default)]
pub struct Hidden {
    /// Bytes counted.
    pub bytes: u64,
    /// Terminal columns counted.
    pub columns: u64,
    /// The last characters (at most about [`KEPT_END`]).
    pub end: String,
}

impl Hidden {
    /// Counts `text` and keeps its end.
    pub fn push(&mut self, text: &str) {
        self.bytes += text.len() as u64;
        self.columns += width(text) as u64;
        self.end.push_str(text);
        if self.end.len() > 2 * KEPT_END * 4 || self.end.chars().count() > 2 * KEPT_END {
            let drop = self.end.chars().count().saturating_sub(KEPT_END);
            let at = self
                .end
                .char_indices()
                .nth(drop)
                .map_or(self.end.len(), |(i, _)| i);
            self.end.drain(..at);
        }
    }

    /// Takes `shown` (the end of [`Self::end`] shown after all) out of the count.
    pub fn unhide(&mut self, shown: &str) {
        self.bytes = self.bytes.saturating_sub(shown.len() as u64);
        self.columns = self
            .columns
            .saturating_sub(shown.chars().map(char_width).sum::<usize>() as u64);
    }
}

/// `99,950`.
pub fn grouped(n: u64) -> String {
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

/// `12 bytes`, `12.0 KB`, `3.4 MB`.
pub fn size_text(bytes: u64) -> String {
    match bytes {
        b if b < 1024 => format!("{b} byte{}", if b == 1 { "" } else { "s" }),
        b if b < 1024 * 1024 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// `1 row`, `1,622 rows`.
pub fn counted(n: u64, what: &str) -> String {
    format!("{} {what}{}", grouped(n), if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_is_kept_and_everything_counted() {
        let mut hidden = Hidden::default();
        for _ in 0..100 {
            hidden.push(&"é".repeat(1000));
        }
        assert_eq!(hidden.bytes, 200_000);
        assert_eq!(hidden.columns, 100_000);
        assert!(hidden.end.chars().count() <= 2 * KEPT_END);
        assert!(hidden.end.chars().count() >= KEPT_END);
        hidden.unhide("éé");
        assert_eq!((hidden.bytes, hidden.columns), (199_996, 99_998));
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(grouped(99_950), "99,950");
        assert_eq!(grouped(950), "950");
        assert_eq!(size_text(1), "1 byte");
        assert_eq!(size_text(100_000), "97.7 KB");
        assert_eq!(counted(1, "row"), "1 row");
        assert_eq!(counted(1622, "row"), "1,622 rows");
    }
}
