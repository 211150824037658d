//! Picking one item of a list with the arrow keys (or `j`/`k`, or its number) and Enter, on
//! a terminal; `q`, Esc, CTRL-C or CTRL-D leave without a choice. The terminal is put in raw
//! mode while the list is shown and restored however the pick ends.

use std::io::{Read, Write};

use rustix::termios::{LocalModes, OptionalActions, Termios, tcgetattr, tcsetattr};

use crate::style::{ACCENT, MUTED, Span, render, width};

/// A key that moves or decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Up,
    Down,
    Enter,
    Quit,
    Digit(u8),
    Other,
}

/// The keys in `bytes` (one read may hold several).
fn keys(bytes: &[u8]) -> Vec<Key> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        let (key, used) = match rest {
            [0x1b, b'[' | b'O', b'A', ..] => (Key::Up, 3),
            [0x1b, b'[' | b'O', b'B', ..] => (Key::Down, 3),
            [0x1b, b'[' | b'O', _, ..] => (Key::Other, 3),
            [0x1b] => (Key::Quit, 1),
            [b'k', ..] => (Key::Up, 1),
            [b'j', ..] => (Key::Down, 1),
            [b'\r' | b'\n', ..] => (Key::Enter, 1),
            [b'q' | 0x03 | 0x04, ..] => (Key::Quit, 1),
            [d @ b'0'..=b'9', ..] => (Key::Digit(d - b'0'), 1),
            _ => (Key::Other, 1),
        };
        out.push(key);
        i += used;
    }
    out
}

/// Restores the terminal's modes when dropped.
struct RawMode {
    saved: Termios,
}

impl RawMode {
    fn enter() -> std::io::Result<RawMode> {
        let stdin = std::io::stdin();
        let saved = tcgetattr(&stdin)?;
        let mut raw = saved.clone();
        raw.local_modes
            .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG);
        tcsetattr(&stdin, OptionalActions::Now, &raw)?;
        Ok(RawMode { saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, &self.saved);
    }
}

/// The rows of the list with `selected` marked, the window starting at `top`.
fn rows(
    items: &[String],
    selected: usize,
    top: usize,
    shown: usize,
    cols: usize,
) -> Vec<Vec<Span>> {
    items
        .iter()
        .enumerate()
        .skip(top)
        .take(shown)
        .map(|(i, item)| {
            let number = format!("{:>3}. ", i + 1);
            let room = cols.saturating_sub(width(&number) + 3);
            let text: String = item.chars().take(room).collect();
            if i == selected {
                vec![
                    Span::new(ACCENT, " ❯ "),
                    Span::new(MUTED, number),
                    Span::new("1", text),
                ]
            } else {
                vec![
                    Span::plain("   "),
                    Span::new(MUTED, number),
                    Span::plain(text),
                ]
            }
        })
        .collect()
}

/// Lets the user pick one of `items` (newest first); `None` when they leave.
pub fn pick(items: &[String], cols: usize, height: usize) -> std::io::Result<Option<usize>> {
    if items.is_empty() {
        return Ok(None);
    }
    let _raw = RawMode::enter()?;
    let mut out = std::io::stdout();
    let shown = items.len().min(height.saturating_sub(4).max(3));
    writeln!(
        out,
        "{}\r",
        render(
            &[Span::new(MUTED, "↑/↓ to move, Enter to open, q to leave")],
            true
        )
    )?;
    let (mut selected, mut top, mut typed) = (0usize, 0usize, 0usize);
    let mut drawn = 0;
    let mut input = [0u8; 64];
    loop {
        if selected < top {
            top = selected;
        } else if selected >= top + shown {
            top = selected + 1 - shown;
        }
        if drawn > 0 {
            write!(out, "\x1b[{drawn}A\r\x1b[J")?;
        }
        let list = rows(items, selected, top, shown, cols);
        for row in &list {
            write!(out, "{}\r\n", render(row, true))?;
        }
        drawn = list.len();
        out.flush()?;
        let n = std::io::stdin().read(&mut input)?;
        if n == 0 {
            return Ok(None);
        }
        for key in keys(&input[..n]) {
            match key {
                Key::Up => selected = selected.saturating_sub(1),
                Key::Down => selected = (selected + 1).min(items.len() - 1),
                Key::Enter => return Ok(Some(selected)),
                Key::Quit => return Ok(None),
                Key::Digit(d) => {
                    typed = (typed * 10 + usize::from(d)) % 100_000;
                    if (1..=items.len()).contains(&typed) {
                        selected = typed - 1;
                    } else {
                        typed = usize::from(d);
                        if (1..=items.len()).contains(&typed) {
                            selected = typed - 1;
                        }
                    }
                    continue;
                }
                Key::Other => {}
            }
            typed = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrows_letters_and_numbers_are_read() {
        assert_eq!(
            keys(b"\x1b[A\x1b[Bjk\r2q\x1b"),
            [
                Key::Up,
                Key::Down,
                Key::Down,
                Key::Up,
                Key::Enter,
                Key::Digit(2),
                Key::Quit,
                Key::Quit
            ]
        );
    }

    #[test]
    fn the_selected_row_is_marked() {
        let items = vec!["a".to_owned(), "b".to_owned()];
        let list = rows(&items, 1, 0, 2, 40);
        assert_eq!(crate::style::text_of(&list[0]), "     1. a");
        assert_eq!(crate::style::text_of(&list[1]), " ❯   2. b");
    }
}
