//! Helpers shared by the fuzz targets: turning fuzz bytes into cuts, and normalising delta
//! streams so that differently cut inputs can be compared.

use oi_core::ModelDelta;

/// Splits `data` into cut positions and the payload: the first byte says how many cuts (0–15),
/// each following byte places one cut (scaled over the payload's length).
pub fn split_cuts(data: &[u8]) -> (Vec<usize>, &[u8]) {
    let Some((&head, rest)) = data.split_first() else {
        return (Vec::new(), data);
    };
    let count = usize::from(head & 0x0f).min(rest.len());
    let (cut_bytes, payload) = rest.split_at(count);
    let mut cuts: Vec<usize> = cut_bytes
        .iter()
        .map(|&b| usize::from(b) * payload.len() / 255)
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    (cuts, payload)
}

/// `text` cut at `cuts`, each cut moved back to a char boundary.
pub fn str_pieces<'a>(text: &'a str, cuts: &[usize]) -> Vec<&'a str> {
    let mut pieces = Vec::new();
    let mut from = 0;
    for &cut in cuts {
        let mut at = cut.min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        if at > from {
            pieces.push(&text[from..at]);
            from = at;
        }
    }
    pieces.push(&text[from..]);
    pieces
}

/// `bytes` cut at `cuts` (anywhere, even inside a UTF-8 sequence).
pub fn byte_pieces<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut pieces = Vec::new();
    let mut from = 0;
    for &cut in cuts {
        let at = cut.min(bytes.len());
        if at > from {
            pieces.push(&bytes[from..at]);
            from = at;
        }
    }
    pieces.push(&bytes[from..]);
    pieces
}

/// Joins consecutive deltas of the same kind (and language), dropping empty ones: two streams
/// mean the same thing exactly when their normal forms are equal.
pub fn normalise(deltas: impl IntoIterator<Item = ModelDelta>) -> Vec<ModelDelta> {
    let mut out: Vec<ModelDelta> = Vec::new();
    for delta in deltas {
        match (out.last_mut(), delta) {
            (_, ModelDelta::Message(t)) if t.is_empty() => {}
            (_, ModelDelta::Code { code, .. }) if code.is_empty() => {}
            (Some(ModelDelta::Message(prev)), ModelDelta::Message(t)) => prev.push_str(&t),
            (
                Some(ModelDelta::Code {
                    language: l0,
                    code: c0,
                }),
                ModelDelta::Code { language, code },
            ) if *l0 == language => c0.push_str(&code),
            (_, delta) => out.push(delta),
        }
    }
    out
}
