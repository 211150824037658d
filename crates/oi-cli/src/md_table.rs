//! Markdown tables: their cells read from the parser's events, then drawn aligned (numbers
//! to the right where the table says so) with bars between the columns and a rule under the
//! header — or, when they are wider than the terminal, one wrapped line per row.

use pulldown_cmark::{Alignment, Event, Tag, TagEnd};

use crate::style::{MUTED, Span, spans_width};
use crate::wrap::Break;
use crate::wrap::Line;

/// A table being read.
#[derive(Debug, Default)]
pub struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<Vec<Span>>>,
    header_rows: usize,
}

impl Table {
    /// A table whose columns are aligned as `alignments` say.
    pub fn new(alignments: Vec<Alignment>) -> Self {
        Table {
            alignments,
            ..Table::default()
        }
    }
}

/// Handles an event inside a table; whether it was one of the table's own.
pub fn event(table: &mut Table, event: &Event<'_>, bold: &mut u8, text: &mut Vec<Span>) -> bool {
    match event {
        Event::Start(Tag::TableHead) => {
            table.rows.push(Vec::new());
            *bold += 1;
            table.header_rows = 1;
        }
        Event::End(TagEnd::TableHead) => *bold = bold.saturating_sub(1),
        Event::Start(Tag::TableRow) => table.rows.push(Vec::new()),
        Event::Start(Tag::TableCell) => text.clear(),
        Event::End(TagEnd::TableCell) => {
            let cell = std::mem::take(text);
            if let Some(row) = table.rows.last_mut() {
                row.push(cell);
            }
        }
        Event::End(TagEnd::TableRow) => {}
        _ => return false,
    }
    true
}

/// The lines of `table` under `first` (the prefix of every row), `available` columns wide.
pub fn lines(table: &Table, first: &[Span], available: usize) -> Vec<Line> {
    let first = first.to_vec();
    let mut out = Vec::new();
    let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0usize; columns];
    for row in &table.rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(spans_width(cell));
        }
    }
    let total: usize = widths.iter().sum::<usize>() + columns.saturating_sub(1) * 3;
    if total > available {
        // Too wide to align: one line per row, cells separated by bars, wrapped.
        for row in &table.rows {
            let mut body = Vec::new();
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    body.push(Span::new(MUTED, " │ "));
                }
                body.extend(cell.iter().cloned());
            }
            out.push(Line::new(first.clone(), body, Break::Words));
        }
        return out;
    }
    for (r, row) in table.rows.iter().enumerate() {
        let mut body = Vec::new();
        for (i, width) in widths.iter().enumerate() {
            if i > 0 {
                body.push(Span::new(MUTED, " │ "));
            }
            let cell = row.get(i).cloned().unwrap_or_default();
            let pad = width.saturating_sub(spans_width(&cell));
            let (left, right) = match table.alignments.get(i) {
                Some(Alignment::Right) => (pad, 0),
                Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                _ => (0, pad),
            };
            body.push(Span::plain(" ".repeat(left)));
            body.extend(cell);
            if i + 1 < widths.len() {
                body.push(Span::plain(" ".repeat(right)));
            }
        }
        out.push(Line::new(first.clone(), body, Break::Anywhere));
        if r + 1 == table.header_rows {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            out.push(Line::new(
                first.clone(),
                vec![Span::new(MUTED, rule.join("─┼─"))],
                Break::Anywhere,
            ));
        }
    }
    out
}
