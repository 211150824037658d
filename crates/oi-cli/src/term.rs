//! The terminal's size, asked of the terminal itself (shells do not export `COLUMNS`), with
//! `COLUMNS`/`LINES` and then 80×24 when standard output is not a terminal or says 0×0.

/// Columns and rows of the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    /// Columns.
    pub cols: usize,
    /// Rows.
    pub rows: usize,
}

impl Size {
    /// The size of the terminal on standard output now.
    pub fn now() -> Size {
        let asked = terminal_size::terminal_size_of(std::io::stdout())
            .filter(|(w, h)| w.0 > 0 && h.0 > 0)
            .map(|(w, h)| (usize::from(w.0), usize::from(h.0)));
        let from_env = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|n| *n > 0)
        };
        let (cols, rows) = asked.unwrap_or_else(|| {
            (
                from_env("COLUMNS").unwrap_or(80),
                from_env("LINES").unwrap_or(24),
            )
        });
        Size {
            cols: cols.clamp(20, 1000),
            rows: rows.clamp(5, 1000),
        }
    }
}
