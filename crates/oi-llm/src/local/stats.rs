//! What one local generation cost, and its `--verbose` line.

use std::time::Duration;

/// Timings of the last reply of a [`LocalProvider`](super::LocalProvider).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GenerationStats {
    /// Which reply of its provider these figures are for (1: the first).
    pub sequence: u64,
    /// How long loading the model took (once per process).
    pub load_time: Duration,
    /// Tokens in the rendered prompt.
    pub prompt_tokens: usize,
    /// Of those, tokens whose evaluation was reused (from the context or the file).
    pub cached_tokens: usize,
    /// Of the reused tokens, those read from the prompt-state file.
    pub file_tokens: usize,
    /// Time spent getting the prompt ready: reading the file and evaluating the rest.
    pub prompt_time: Duration,
    /// From the request to its first generated token (waiting for the model to load
    /// included); `None` when no token came.
    pub first_token: Option<Duration>,
    /// Tokens generated.
    pub generated_tokens: usize,
    /// Time spent generating them.
    pub generation_time: Duration,
}

impl GenerationStats {
    /// Prompt tokens evaluated (not reused).
    pub fn evaluated_tokens(&self) -> usize {
        self.prompt_tokens.saturating_sub(self.cached_tokens)
    }

    /// Generated tokens per second.
    pub fn tokens_per_second(&self) -> f64 {
        per_second(self.generated_tokens, self.generation_time)
    }

    /// Prompt tokens evaluated per second (reused ones not counted).
    pub fn prompt_tokens_per_second(&self) -> f64 {
        per_second(self.evaluated_tokens(), self.prompt_time)
    }

    /// Writes the line `--verbose` shows for this call (`tracing`, level `info`).
    pub fn log(&self) {
        tracing::info!(
            sequence = self.sequence,
            prompt_tokens = self.prompt_tokens,
            evaluated = self.evaluated_tokens(),
            reused = self.cached_tokens,
            from_file = self.file_tokens,
            prompt_s = self.prompt_time.as_secs_f64(),
            first_token_s = self.first_token.map_or(-1.0, |d| d.as_secs_f64()),
            generated = self.generated_tokens,
            generation_s = self.generation_time.as_secs_f64(),
            tokens_per_s = self.tokens_per_second(),
            "local model: {self}"
        );
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
            "prompt {} tokens ({} evaluated, {} reused",
            self.prompt_tokens,
            self.evaluated_tokens(),
            self.cached_tokens
        )?;
        if self.file_tokens > 0 {
            write!(f, ", {} from the prompt-state file", self.file_tokens)?;
        }
        write!(
            f,
            ") in {:.3} s ({:.0} tok/s); ",
            self.prompt_time.as_secs_f64(),
            self.prompt_tokens_per_second()
        )?;
        match self.first_token {
            Some(first) => write!(f, "first token after {:.3} s; ", first.as_secs_f64())?,
            None => write!(f, "no token; ")?,
        }
        write!(
            f,
            "generated {} tokens in {:.2} s ({:.1} tok/s)",
            self.generated_tokens,
            self.generation_time.as_secs_f64(),
            self.tokens_per_second()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_names_every_figure() {
        let stats = GenerationStats {
            prompt_tokens: 160,
            cached_tokens: 129,
            file_tokens: 129,
            prompt_time: Duration::from_millis(310),
            first_token: Some(Duration::from_millis(350)),
            generated_tokens: 20,
            generation_time: Duration::from_millis(500),
            ..GenerationStats::default()
        };
        let line = stats.to_string();
        assert!(
            line.contains(
                "prompt 160 tokens (31 evaluated, 129 reused, 129 from the prompt-state file)"
            ),
            "{line}"
        );
        assert!(line.contains("first token after 0.350 s"), "{line}");
        assert!(line.contains("(40.0 tok/s)"), "{line}");
    }
}
