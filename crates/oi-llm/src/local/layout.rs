//! A conversation as the context evaluates it: its tokens, the batches they are cut into
//! (see [`super::chunks`]), and where the system turn ends (the part kept on disk).

use std::ops::Range;

use llama_cpp_2::token::LlamaToken;
use oi_core::ModelError;

use super::chunks::chunks;
use super::model::LocalModel;
use super::prompt::ChatTurn;

/// A system turn shorter than this is not worth a file.
const MIN_PREFIX_TOKENS: usize = 16;

/// A rendered prompt, its tokens and its batches.
#[derive(Debug, Clone)]
pub struct PromptLayout {
    /// The rendered text's tokens.
    pub tokens: Vec<LlamaToken>,
    /// The batches, in order, covering all the tokens.
    pub chunks: Vec<Range<usize>>,
    /// How many of the first batches make up the system turn (`None`: no usable system turn).
    pub prefix_chunks: Option<usize>,
    /// The system turn's rendered text (what the file's key names).
    pub prefix_text: String,
}

impl PromptLayout {
    /// Lays out `turns` for `model`.
    pub fn new(model: &LocalModel, turns: &[ChatTurn]) -> Result<Self, ModelError> {
        let text = model.render_with(turns, true)?;
        let tokens = model.tokenize(&text);
        let ends = token_ends(model, &tokens);
        let at = |offset: usize| token_at(&ends, text.len(), offset);

        let mut splits = Vec::new();
        let mut prefix = None;
        let mut prefix_text = String::new();
        if turns.first().is_some_and(|t| t.role == "system") {
            let system = model.render_with(&turns[..1], false)?;
            if text.starts_with(&system) {
                prefix = at(system.len()).filter(|p| *p >= MIN_PREFIX_TOKENS && *p < tokens.len());
                prefix_text = system;
            }
        }
        splits.extend(prefix);
        // Where each assistant reply starts: the end of an earlier call's prompt.
        for (i, turn) in turns.iter().enumerate().skip(1) {
            if turn.role != "assistant" {
                continue;
            }
            let head = model.render_with(&turns[..i], true)?;
            if text.starts_with(&head) {
                splits.extend(at(head.len()));
            }
        }
        let chunks = chunks(tokens.len(), &splits);
        let prefix_chunks =
            prefix.and_then(|p| chunks.iter().position(|c| c.end == p).map(|i| i + 1));
        Ok(PromptLayout {
            tokens,
            chunks,
            prefix_chunks,
            prefix_text,
        })
    }
}

/// The byte offset in the rendered text after each token (when the pieces do not spell the
/// text, the last offset is not its length and no cut is placed by text offset).
fn token_ends(model: &LocalModel, tokens: &[LlamaToken]) -> Vec<usize> {
    let mut total = 0;
    tokens
        .iter()
        .map(|t| {
            total += model.prompt_piece_len(*t);
            total
        })
        .collect()
}

/// How many tokens end exactly at byte `offset` (`None` when no token boundary is there or
/// the offsets do not add up to the text's length).
fn token_at(ends: &[usize], text_len: usize, offset: usize) -> Option<usize> {
    if ends.last() != Some(&text_len) {
        return None;
    }
    ends.binary_search(&offset).ok().map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::token_at;

    #[test]
    fn offsets_map_to_token_boundaries_only() {
        let ends = [3, 5, 9];
        assert_eq!(token_at(&ends, 9, 5), Some(2));
        assert_eq!(token_at(&ends, 9, 4), None);
        assert_eq!(token_at(&ends, 10, 5), None);
    }
}
