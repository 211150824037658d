//! What one local generation cost.

use std::time::Duration;

/// Timings of the last reply of a [`LocalProvider`](super::LocalProvider).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GenerationStats {
    /// How long loading the model took (once per process).
    pub load_time: Duration,
    /// Tokens in the rendered prompt.
    pub prompt_tokens: usize,
    /// Of those, tokens reused from the previous reply's cache.
    pub cached_tokens: usize,
    /// Time spent evaluating the rest of the prompt.
    pub prompt_time: Duration,
    /// Tokens generated.
    pub generated_tokens: usize,
    /// Time spent generating them.
    pub generation_time: Duration,
}

impl GenerationStats {
    /// Generated tokens per second.
    pub fn tokens_per_second(&self) -> f64 {
        per_second(self.generated_tokens, self.generation_time)
    }

    /// Prompt tokens evaluated per second (cached ones not counted).
    pub fn prompt_tokens_per_second(&self) -> f64 {
        per_second(
            self.prompt_tokens.saturating_sub(self.cached_tokens),
            self.prompt_time,
        )
    }
}

#[allow(clippy::cast_precision_loss)]
fn per_second(tokens: usize, time: Duration) -> f64 {
    let seconds = time.as_secs_f64();
    if seconds > 0.0 {
        tokens as f64 / seconds
    } else {
        0.0
    }
}

impl std::fmt::Display for GenerationStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "load {:.2} s; prompt {} tokens ({} cached) in {:.2} s ({:.0} tok/s); generated {} tokens in {:.2} s ({:.1} tok/s)",
            self.load_time.as_secs_f64(),
            self.prompt_tokens,
            self.cached_tokens,
            self.prompt_time.as_secs_f64(),
            self.prompt_tokens_per_second(),
            self.generated_tokens,
            self.generation_time.as_secs_f64(),
            self.tokens_per_second()
        )
    }
}
