//! Markdown tables: their cells read from the parser's events, then drawn aligned (numbers
//! to the right where the table says so) with bars between the columns and a rule under the
//! header; a table wider than the terminal wraps inside its cells.

use pulldown_cmark::{Alignment, Event, Tag, TagEnd};

use crate::style::{MUTED, Span, spans_width, width};
use crate::wrap::{Break, Line, wrap};

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

/// The lines of `table` under `first` (the prefix of every row), `available` columns wide:
/// aligned columns with bars between them and a rule under the header; when the table is
/// wider than that, its columns are narrowed (the widest first, never below their longest
/// word when the words fit) and the text wraps inside its cells, so alignment and the rule
/// are kept at any width.
pub fn lines(table: &Table, first: &[Span], available: usize) -> Vec<Line> {
    let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut natural = vec![0usize; columns];
    let mut words = vec![0usize; columns];
    for row in &table.rows {
        for (i, cell) in row.iter().enumerate() {
            natural[i] = natural[i].max(spans_width(cell));
            let text = crate::style::text_of(cell);
            let longest = text.split_whitespace().map(width).max().unwrap_or(0);
            words[i] = words[i].max(longest);
        }
    }
    let room = available.saturating_sub(columns.saturating_sub(1) * 3);
    let widths = if words.iter().sum::<usize>() <= room {
        // Every word fits whole: what is left goes to the columns that want more.
        let wants: Vec<usize> = natural.iter().zip(&words).map(|(n, w)| n - w).collect();
        let extra = fit(&wants, room - words.iter().sum::<usize>());
        words.iter().zip(extra).map(|(w, e)| w + e).collect()
    } else {
        fit(&natural, room)
    };
    let mut out = Vec::new();
    for (r, row) in table.rows.iter().enumerate() {
        let cells: Vec<Vec<Vec<Span>>> = widths
            .iter()
            .enumerate()
            .map(|(i, width)| {
                let cell = row.get(i).cloned().unwrap_or_default();
                wrap(&cell, *width, &[], &[], Break::Words)
            })
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let mut body = Vec::new();
            for (i, width) in widths.iter().enumerate() {
                if i > 0 {
                    body.push(Span::new(MUTED, " │ "));
                }
                let part = cells[i].get(k).cloned().unwrap_or_default();
                let pad = width.saturating_sub(spans_width(&part));
                let (left, right) = match table.alignments.get(i) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                body.push(Span::plain(" ".repeat(left)));
                body.extend(part);
                if i + 1 < widths.len() {
                    body.push(Span::plain(" ".repeat(right)));
                }
            }
            out.push(Line::new(first.to_vec(), body, Break::Anywhere));
        }
        if r + 1 == table.header_rows {
            let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            out.push(Line::new(
                first.to_vec(),
                vec![Span::new(MUTED, rule.join("─┼─"))],
                Break::Anywhere,
            ));
        }
    }
    out
}

/// Column widths for columns `natural` wide in `room` columns: each gets what it needs
/// when all fit; otherwise the narrow ones keep theirs and the others share what is left
/// equally.
fn fit(natural: &[usize], room: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= room {
        return natural.to_vec();
    }
    let mut widths = vec![0usize; natural.len()];
    let mut left: Vec<usize> = (0..natural.len()).collect();
    let mut space = room;
    loop {
        let share = space / left.len().max(1);
        let (fitting, wide): (Vec<usize>, Vec<usize>) =
            left.iter().partition(|&&i| natural[i] <= share);
        if fitting.is_empty() {
            let extra = space.saturating_sub(share * wide.len());
            for (n, &i) in wide.iter().enumerate() {
                widths[i] = (share + usize::from(n < extra)).max(1);
            }
            return widths;
        }
        for &i in &fitting {
            widths[i] = natural[i];
            space -= natural[i];
        }
        left = wide;
        if left.is_empty() {
            return widths;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::text_of;

    fn table(rows: &[&[&str]]) -> Table {
        let mut table = Table::new(vec![Alignment::None, Alignment::Right, Alignment::None]);
        table.header_rows = 1;
        table.rows = rows
            .iter()
            .map(|row| row.iter().map(|c| vec![Span::plain(*c)]).collect())
            .collect();
        table
    }

    #[test]
    fn a_wide_table_wraps_inside_its_cells() {
        let table = table(&[
            &["File", "Size", "Reason"],
            &["app.log", "2 GB", "grew without rotation since March"],
        ]);
        let rows = crate::wrap::rows(&lines(&table, &[Span::plain("  ")], 30), 32);
        let shown: Vec<String> = rows.iter().map(|r| text_of(r)).collect();
        assert_eq!(
            shown,
            [
                "  File    │ Size │ Reason",
                "  ────────┼──────┼──────────────",
                "  app.log │ 2 GB │ grew without",
                "          │      │ rotation",
                "          │      │ since March",
            ]
        );
        assert_eq!(fit(&[10, 10, 10], 30), [10, 10, 10]);
        assert_eq!(fit(&[4, 40, 40], 30), [4, 13, 13]);
        assert_eq!(fit(&[4, 40, 40], 31), [4, 14, 13]);
    }
}
