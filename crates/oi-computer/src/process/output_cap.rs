//! The output cap of one run: the head streams live, then only a rolling tail is kept, and
//! the end of the run shows a marker with the sizes followed by that tail.

/// Caps the text of one segment of output (a run, or the time between runs).
#[derive(Debug)]
pub(crate) struct OutputCap {
    /// Bytes forwarded live before the rest is held back.
    head: usize,
    /// Bytes of the end kept for when the segment ends.
    tail_cap: usize,
    /// Bytes seen in this segment (forwarded or not).
    total: usize,
    /// Whether the head is used up.
    over: bool,
    /// The last bytes seen after the head (at most about `2 * tail_cap`).
    tail: Vec<u8>,
}

impl OutputCap {
    /// A cap of `cap` bytes per segment: three quarters stream live, one quarter is the tail.
    pub(crate) fn new(cap: usize) -> Self {
        let cap = cap.max(4);
        let tail_cap = cap / 4;
        OutputCap {
            head: cap - tail_cap,
            tail_cap,
            total: 0,
            over: false,
            tail: Vec::new(),
        }
    }

    /// Starts a new segment, forgetting any held-back tail.
    pub(crate) fn reset(&mut self) {
        self.total = 0;
        self.over = false;
        self.tail = Vec::new();
    }

    /// Whether the head is used up (later output is only kept as the tail).
    pub(crate) fn is_over(&self) -> bool {
        self.over
    }

    /// Takes `text`; returns what to forward now (the part within the head, and once a
    /// notice that the rest is held back).
    pub(crate) fn text(&mut self, text: String) -> Option<String> {
        let len = text.len();
        let before = self.total;
        self.total = self.total.saturating_add(len);
        if self.over {
            self.keep(text.as_bytes());
            return None;
        }
        if self.total <= self.head {
            return Some(text);
        }
        self.over = true;
        let room = floor_char_boundary(&text, self.head.saturating_sub(before));
        let (now, rest) = text.split_at(room);
        self.keep(rest.as_bytes());
        Some(format!(
            "{now}\n[oi: output truncated: this run printed more than {} bytes; the rest is held back and its last {} bytes are shown when the run ends]\n",
            self.head, self.tail_cap
        ))
    }

    /// Counts a rich output of `len` bytes; false when it must be dropped.
    pub(crate) fn rich(&mut self, len: usize) -> bool {
        self.total = self.total.saturating_add(len);
        if self.over || self.total > self.head {
            self.over = true;
            return false;
        }
        true
    }

    /// Ends the segment: the marker with the sizes followed by the tail, when anything was
    /// held back.
    pub(crate) fn finish(&mut self) -> Option<String> {
        if !self.over {
            self.reset();
            return None;
        }
        let mut start = self.tail.len().saturating_sub(self.tail_cap);
        // Do not start inside a UTF-8 sequence.
        while start < self.tail.len() && (self.tail[start] & 0xC0) == 0x80 {
            start += 1;
        }
        let shown = String::from_utf8_lossy(&self.tail[start..]).into_owned();
        let omitted = self
            .total
            .saturating_sub(self.head)
            .saturating_sub(shown.len());
        let total = self.total;
        self.reset();
        Some(format!(
            "\n[oi: {omitted} bytes of output omitted ({total} bytes in all); showing the last {}]\n{shown}",
            shown.len()
        ))
    }

    fn keep(&mut self, bytes: &[u8]) {
        if self.tail_cap == 0 {
            return;
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend_from_slice(&bytes[bytes.len() - self.tail_cap..]);
            return;
        }
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > 2 * self.tail_cap {
            let cut = self.tail.len() - self.tail_cap;
            self.tail.drain(..cut);
        }
    }
}

/// The largest index `<= at` that is a char boundary of `text`.
fn floor_char_boundary(text: &str, at: usize) -> usize {
    if at >= text.len() {
        return text.len();
    }
    let mut at = at;
    while at > 0 && !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_the_cap_passes_through() {
        let mut cap = OutputCap::new(100);
        assert_eq!(cap.text("hello".into()), Some("hello".into()));
        assert_eq!(cap.finish(), None);
    }

    #[test]
    fn keeps_head_and_tail_with_sizes() {
        let mut cap = OutputCap::new(40); // head 30, tail 10
        let mut live = String::new();
        for i in 0..100 {
            if let Some(t) = cap.text(format!("{i:03}\n")) {
                live.push_str(&t);
            }
        }
        assert!(live.starts_with("000\n001\n"), "{live}");
        assert!(live.contains("held back"), "{live}");
        let end = cap.finish().unwrap_or_default();
        assert!(
            end.contains("bytes of output omitted (400 bytes in all)"),
            "{end}"
        );
        assert!(end.ends_with("98\n099\n"), "{end}");
        assert!(end.contains("showing the last 10]"), "{end}");
        // a new segment starts clean
        assert_eq!(cap.text("x".into()), Some("x".into()));
    }

    #[test]
    fn multibyte_text_is_not_split() {
        let mut cap = OutputCap::new(8); // head 6, tail 2
        let out = cap.text("ééééé".into()).unwrap_or_default();
        assert!(out.starts_with("ééé\n"), "{out}");
        let end = cap.finish().unwrap_or_default();
        assert!(end.ends_with("é"), "{end}");
    }
}
