//! How a prompt is cut into batches, and how much of what the context holds can be kept.
//!
//! llama.cpp's numbers for a token depend on the batch it was evaluated in: a token evaluated
//! in a batch that starts elsewhere (or, for batches under 8 tokens, that is longer or shorter)
//! gets a slightly different KV entry, and at temperature 0 the reply can change. Measured on
//! Qwen2.5-Coder-0.5B: splitting a 118-token prompt at token 100 changed the last logits by
//! up to 0.43. So a prompt is always cut at the same places, which depend on the prompt alone
//! (its system turn's end and the start of each assistant reply, then every [`CHUNK`] tokens),
//! and the context keeps only whole batches that were cut the same way. The KV cache is then
//! a function of the prompt, never of earlier requests or of when a reader stopped, and the
//! same request gives the same reply.

use std::ops::Range;

/// The longest batch in tokens (shorter batches make stopping a long prompt quicker).
pub const CHUNK: usize = 128;

/// The batches covering `0..len`: a cut at each of `splits` and every [`CHUNK`] tokens after
/// each cut. Splits outside `1..len` are ignored.
pub fn chunks(len: usize, splits: &[usize]) -> Vec<Range<usize>> {
    let mut cuts: Vec<usize> = splits
        .iter()
        .copied()
        .filter(|s| *s > 0 && *s < len)
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts.push(len);
    let mut out = Vec::new();
    let mut start = 0;
    for cut in cuts {
        while start < cut {
            let end = cut.min(start + CHUNK);
            out.push(start..end);
            start = end;
        }
    }
    out
}

/// How many of the `new` batches the context can keep from the `held` ones: the longest run
/// of batches equal in place and in tokens. At least one token must be evaluated (for the
/// reply's first logits), so when every new batch is held, the last one is evaluated again.
pub fn kept_chunks<T: PartialEq>(
    held: &[Range<usize>],
    held_tokens: &[T],
    new: &[Range<usize>],
    new_tokens: &[T],
) -> usize {
    let mut kept = 0;
    for (a, b) in held.iter().zip(new) {
        let same = a == b
            && held_tokens.get(a.clone()).is_some()
            && held_tokens.get(a.clone()) == new_tokens.get(b.clone());
        if !same {
            break;
        }
        kept += 1;
    }
    if kept == new.len() {
        kept.saturating_sub(1)
    } else {
        kept
    }
}

/// Where the first `n` batches end (0 for none).
pub fn end_of(chunks: &[Range<usize>], n: usize) -> usize {
    n.checked_sub(1)
        .and_then(|i| chunks.get(i))
        .map_or(0, |c| c.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_splits_then_every_chunk() {
        assert_eq!(chunks(10, &[]), vec![0..10]);
        assert_eq!(chunks(10, &[4, 0, 10, 12, 4]), vec![0..4, 4..10]);
        let long = chunks(300, &[129]);
        assert_eq!(long, vec![0..128, 128..129, 129..257, 257..300]);
        assert!(chunks(0, &[3]).is_empty());
    }

    #[test]
    fn keeps_equal_batches_and_leaves_one_to_evaluate() {
        let held = chunks(6, &[3]);
        let tokens = [1, 2, 3, 4, 5, 6];
        // The same prompt again: the last batch is evaluated again.
        assert_eq!(kept_chunks(&held, &tokens, &held, &tokens), 1);
        // A longer prompt with the same start and cuts: both batches kept.
        let longer = chunks(9, &[3, 6]);
        let more = [1, 2, 3, 4, 5, 6, 7, 8, 9];
        assert_eq!(kept_chunks(&held, &tokens, &longer, &more), 2);
        // A different token in the second batch: only the first is kept.
        let changed = [1, 2, 3, 4, 0, 6, 7, 8, 9];
        assert_eq!(kept_chunks(&held, &tokens, &longer, &changed), 1);
        // Cut differently: nothing past the difference is kept.
        let other_cuts = chunks(9, &[4, 6]);
        assert_eq!(kept_chunks(&held, &tokens, &other_cuts, &more), 0);
        assert_eq!(end_of(&longer, 2), 6);
        assert_eq!(end_of(&longer, 0), 0);
    }
}
