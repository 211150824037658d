//! A failed turn said in one sentence: what went wrong and what to do, not the chain of
//! library errors behind it (`error sending request for url (…): client error (Connect): tcp
//! connect error: Connection refused (os error 111)` becomes "Nothing answers at …").

use oi_core::{ModelError, TurnError};

/// The sentence for `error`.
pub fn one_sentence(error: &TurnError) -> String {
    match error {
        TurnError::Model(ModelError::Unreachable { url, reason }) => unreachable(url, reason),
        other => other.to_string(),
    }
}

/// Why `url` could not be reached, from the library's `reason`: one sentence that starts
/// with "could not reach the model server at …" and says what to do.
fn unreachable(url: &str, reason: &str) -> String {
    let server = url
        .strip_suffix("/chat/completions")
        .or_else(|| url.strip_suffix("/messages"))
        .unwrap_or(url);
    let lower = reason.to_ascii_lowercase();
    let why = if lower.contains("relative url without a base") || lower.contains("builder error") {
        format!("it is not a URL; add http:// (or https://), e.g. --api_base http://{server}")
    } else if lower.contains("connection refused") {
        "the connection was refused (nothing listens there); start the model server, or point --api_base at one that runs".to_owned()
    } else if lower.contains("dns error") || lower.contains("failed to lookup") {
        "its host name could not be found; check the name in --api_base, and that you are online"
            .to_owned()
    } else if lower.contains("certificate") || lower.contains("tls") || lower.contains("ssl") {
        format!(
            "the secure connection failed ({}); check https:// against the server's certificate, or use http:// for a local server",
            last_cause(reason)
        )
    } else if lower.contains("timed out") || lower.contains("timeout") {
        "it did not answer in time; check that it runs and is not overloaded".to_owned()
    } else {
        format!(
            "{}; check that it runs and that --api_base is right",
            last_cause(reason)
        )
    };
    format!("could not reach the model server at {server}: {why}.")
}

/// The innermost cause of a chain of `outer: inner: innermost` errors.
fn last_cause(reason: &str) -> &str {
    reason
        .rsplit(": ")
        .next()
        .unwrap_or(reason)
        .trim()
        .trim_end_matches('.')
}

/// Whether `base` (an `--api_base` value) lacks its scheme; the sentence that says so.
pub fn missing_scheme(base: &str) -> Option<String> {
    let base = base.trim();
    if base.is_empty() || base.contains("://") {
        return None;
    }
    Some(format!(
        "--api_base {base} has no scheme: add http:// (or https://), e.g. --api_base http://{base}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unreachable_error(reason: &str) -> String {
        one_sentence(&TurnError::Model(ModelError::Unreachable {
            url: "http://127.0.0.1:9/v1/chat/completions".to_owned(),
            reason: reason.to_owned(),
        }))
    }

    #[test]
    fn library_chains_become_one_sentence() {
        let refused = unreachable_error(
            "error sending request for url (http://127.0.0.1:9/v1/chat/completions): client error (Connect): tcp connect error: Connection refused (os error 111)",
        );
        assert_eq!(
            refused,
            "could not reach the model server at http://127.0.0.1:9/v1: the connection was refused (nothing listens there); start the model server, or point --api_base at one that runs."
        );
        let other = unreachable_error("error sending request: connection reset by peer");
        assert!(
            other.ends_with(
                ": connection reset by peer; check that it runs and that --api_base is right."
            ),
            "{other}"
        );
    }

    #[test]
    fn a_base_without_scheme_is_named() {
        assert_eq!(
            missing_scheme("127.0.0.1:8080/v1").as_deref(),
            Some(
                "--api_base 127.0.0.1:8080/v1 has no scheme: add http:// (or https://), e.g. --api_base http://127.0.0.1:8080/v1"
            )
        );
        assert_eq!(missing_scheme("http://127.0.0.1:8080/v1"), None);
    }
}
