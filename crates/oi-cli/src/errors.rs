//! A failed turn said in one sentence: what went wrong and what to do, not the chain of
//! library errors behind it (`error sending request for url (…): client error (Connect): tcp
//! connect error: Connection refused (os error 111)` becomes "Nothing answers at …").

use oi_core::{ModelError, TurnError, UnreachableKind};

/// The sentence for `error`.
pub fn one_sentence(error: &TurnError) -> String {
    match error {
        TurnError::Model(ModelError::Unreachable { url, reason, kind }) => {
            unreachable(url, reason, *kind)
        }
        other => other.to_string(),
    }
}

/// Why `url` could not be reached, from the `kind` of failure the provider saw (and the
/// library's `reason` for its innermost cause): one sentence that starts with "could not
/// reach the model server at …" and says what to do.
fn unreachable(url: &str, reason: &str, kind: UnreachableKind) -> String {
    let server = url
        .strip_suffix("/chat/completions")
        .or_else(|| url.strip_suffix("/messages"))
        .unwrap_or(url);
    let why = match kind {
        UnreachableKind::BadUrl => {
            format!("it is not a URL; add http:// (or https://), e.g. --api_base http://{server}")
        }
        UnreachableKind::Refused => "the connection was refused (nothing listens there); start the model server, or point --api_base at one that runs".to_owned(),
        UnreachableKind::UnknownHost => {
            "its host name could not be found; check the name in --api_base, and that you are online"
                .to_owned()
        }
        UnreachableKind::Tls => format!(
            "the secure connection failed ({}); check https:// against the server's certificate, or use http:// for a local server",
            last_cause(reason)
        ),
        UnreachableKind::TimedOut => {
            "it did not answer in time; check that it runs and is not overloaded".to_owned()
        }
        UnreachableKind::Other => format!(
            "{}; check that it runs and that --api_base is right",
            last_cause(reason)
        ),
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

    fn unreachable_error(reason: &str, kind: UnreachableKind) -> String {
        one_sentence(&TurnError::Model(ModelError::Unreachable {
            url: "http://127.0.0.1:9/v1/chat/completions".to_owned(),
            reason: reason.to_owned(),
            kind,
        }))
    }

    #[test]
    fn each_kind_becomes_one_sentence() {
        let refused = unreachable_error(
            "error sending request for url (http://127.0.0.1:9/v1/chat/completions): client error (Connect): tcp connect error: Connection refused (os error 111)",
            UnreachableKind::Refused,
        );
        assert_eq!(
            refused,
            "could not reach the model server at http://127.0.0.1:9/v1: the connection was refused (nothing listens there); start the model server, or point --api_base at one that runs."
        );
        let other = unreachable_error(
            "error sending request: connection reset by peer",
            UnreachableKind::Other,
        );
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
