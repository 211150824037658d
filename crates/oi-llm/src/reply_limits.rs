//! How much of one model reply oi reads before it gives up: the reply's text and code, one
//! line of its event stream, and every byte of its body. A hostile or broken server that
//! streams forever, or sends one endless line, ends the turn with an error that names the
//! limit and the variable that raises it, instead of growing oi's memory without end.

use oi_core::ModelError;

use crate::env::Env;
pub use crate::env::{BODY_BYTES_VAR, LINE_BYTES_VAR, REPLY_BYTES_VAR};
use crate::sse_events::{SseError, human_bytes};

/// Size limits for reading one reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyLimits {
    /// Text and code of one reply: message text plus tool-call names and arguments, as
    /// received (default 4 MiB — about a million tokens, far beyond any model's output).
    pub max_reply_bytes: usize,
    /// One line of the event stream, and one event's data (default 4 MiB).
    pub max_line_bytes: usize,
    /// Every byte of one reply's body, JSON framing and keep-alive comments included
    /// (default 64 MiB: per-token chunks carry ~50× framing).
    pub max_body_bytes: u64,
}

impl Default for ReplyLimits {
    fn default() -> Self {
        ReplyLimits {
            max_reply_bytes: 4 << 20,
            max_line_bytes: 4 << 20,
            max_body_bytes: 64 << 20,
        }
    }
}

impl ReplyLimits {
    /// The defaults, with [`REPLY_BYTES_VAR`], [`LINE_BYTES_VAR`] and [`BODY_BYTES_VAR`] from
    /// `env` when set. A value that is not a size is a [`ModelError::Config`].
    pub fn from_env(env: &Env) -> Result<Self, ModelError> {
        let mut limits = ReplyLimits::default();
        if let Some(value) = env.get(REPLY_BYTES_VAR) {
            limits.max_reply_bytes = parse_var(REPLY_BYTES_VAR, value)?;
        }
        if let Some(value) = env.get(LINE_BYTES_VAR) {
            limits.max_line_bytes = parse_var(LINE_BYTES_VAR, value)?;
        }
        if let Some(value) = env.get(BODY_BYTES_VAR) {
            limits.max_body_bytes = parse_var(BODY_BYTES_VAR, value)? as u64;
        }
        Ok(limits)
    }

    /// The error text when a reply's text and code pass [`max_reply_bytes`](Self::max_reply_bytes).
    pub fn reply_exceeded(&self) -> String {
        format!(
            "the reply carried more than {} of text and code (the limit for one reply), so oi stopped reading it. No real answer is that long: the model server may be misbehaving. To allow longer replies, set {REPLY_BYTES_VAR} (for example {REPLY_BYTES_VAR}=16MiB).",
            human_bytes(self.max_reply_bytes as u64)
        )
    }

    /// The error text when the body passes [`max_body_bytes`](Self::max_body_bytes).
    pub fn body_exceeded(&self) -> String {
        format!(
            "the server sent more than {} for one reply (the limit on bytes read per reply, framing and keep-alives included), so oi stopped reading it. The model server may be misbehaving. To allow more, set {BODY_BYTES_VAR} (for example {BODY_BYTES_VAR}=256MiB).",
            human_bytes(self.max_body_bytes)
        )
    }

    /// The error text for an event-stream error.
    pub fn stream_error(&self, error: &SseError) -> String {
        match error {
            SseError::LineTooLong { .. } | SseError::EventTooLarge { .. } => format!(
                "{error}, so oi stopped reading the reply. Model servers send lines of a few hundred bytes: this one may be misbehaving. To allow longer lines, set {LINE_BYTES_VAR} (for example {LINE_BYTES_VAR}=16MiB)."
            ),
            SseError::NotUtf8 { .. } => format!("the reply is not UTF-8 text: {error}"),
        }
    }
}

/// A size: a whole number of bytes, optionally with `K`/`KiB`, `M`/`MiB` or `G`/`GiB`.
fn parse_var(name: &str, value: &str) -> Result<usize, ModelError> {
    let invalid = || {
        ModelError::Config(format!(
            "{name} is `{value}`, which is not a size: write a whole number of bytes greater than 0, such as 8388608 or 8MiB."
        ))
    };
    let text = value.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(digits_end);
    let number: usize = digits.parse().map_err(|_| invalid())?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kib" | "kb" => 10,
        "m" | "mib" | "mb" => 20,
        "g" | "gib" | "gb" => 30,
        _ => return Err(invalid()),
    };
    let bytes = number.checked_mul(1 << shift).ok_or_else(invalid)?;
    if bytes == 0 {
        return Err(invalid());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_variables() {
        assert_eq!(
            ReplyLimits::from_env(&Env::empty()).unwrap(),
            ReplyLimits::default()
        );
        let env = Env::empty()
            .with(REPLY_BYTES_VAR, "16MiB")
            .with(LINE_BYTES_VAR, " 1024 ")
            .with(BODY_BYTES_VAR, "1g");
        assert_eq!(
            ReplyLimits::from_env(&env).unwrap(),
            ReplyLimits {
                max_reply_bytes: 16 << 20,
                max_line_bytes: 1024,
                max_body_bytes: 1 << 30,
            }
        );
    }

    #[test]
    fn bad_values_say_what_to_write() {
        for bad in ["abc", "0", "-5", "12 parsecs", "99999999999999999999"] {
            let error = ReplyLimits::from_env(&Env::empty().with(REPLY_BYTES_VAR, bad))
                .unwrap_err()
                .to_string();
            assert!(
                error.contains(REPLY_BYTES_VAR) && error.contains("8MiB"),
                "{bad}: {error}"
            );
        }
    }

    #[test]
    fn messages_name_the_limit_and_the_variable() {
        let limits = ReplyLimits::default();
        assert!(limits.reply_exceeded().contains("4 MiB"));
        assert!(limits.reply_exceeded().contains(REPLY_BYTES_VAR));
        assert!(limits.body_exceeded().contains("64 MiB"));
        let line = limits.stream_error(&SseError::LineTooLong { limit: 4 << 20 });
        assert!(
            line.contains("4 MiB") && line.contains(LINE_BYTES_VAR),
            "{line}"
        );
    }
}
