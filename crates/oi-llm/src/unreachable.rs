//! A connection's failure as a typed [`ModelError::Unreachable`]: the kind
//! ([`UnreachableKind`]) is read here, where the HTTP library's error is at hand, so that
//! front ends say what to do from the kind and never parse the library's text.

use oi_core::{ModelError, UnreachableKind};

use crate::text::error_chain;

/// The error for a request to `url` that failed with `error`.
pub(crate) fn from_reqwest(url: &str, error: &reqwest::Error) -> ModelError {
    let reason = error_chain(error);
    let kind = kind_of(
        &reason,
        is_refused(error),
        error.is_timeout(),
        error.is_builder(),
    );
    ModelError::Unreachable {
        url: url.to_owned(),
        reason,
        kind,
    }
}

/// The error for a request to `url` that failed for `reason` (oi's own words: a time limit,
/// an answer that is not what the server sends), of `kind`.
pub(crate) fn said(url: &str, reason: String, kind: UnreachableKind) -> ModelError {
    ModelError::Unreachable {
        url: url.to_owned(),
        reason,
        kind,
    }
}

/// Whether nothing listens at the address: a connection refused.
pub(crate) fn is_refused(error: &reqwest::Error) -> bool {
    let mut source: Option<&dyn std::error::Error> = Some(error);
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::ConnectionRefused {
                return true;
            }
        }
        source = e.source();
    }
    false
}

/// The kind of a failure whose error chain reads `chain`: what the library's types say first
/// (`refused`, `timeout`, `builder`), then what its words say (name resolution and TLS
/// errors are not typed by the library).
fn kind_of(chain: &str, refused: bool, timeout: bool, builder: bool) -> UnreachableKind {
    let lower = chain.to_ascii_lowercase();
    if builder || lower.contains("relative url without a base") || lower.contains("builder error") {
        UnreachableKind::BadUrl
    } else if refused || lower.contains("connection refused") {
        UnreachableKind::Refused
    } else if lower.contains("dns error") || lower.contains("failed to lookup") {
        UnreachableKind::UnknownHost
    } else if lower.contains("certificate") || lower.contains("tls") || lower.contains("ssl") {
        UnreachableKind::Tls
    } else if timeout || lower.contains("timed out") || lower.contains("timeout") {
        UnreachableKind::TimedOut
    } else {
        UnreachableKind::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_chains_are_told_apart() {
        let kind = |chain: &str| kind_of(chain, false, false, false);
        assert_eq!(
            kind(
                "error sending request for url (http://127.0.0.1:9/v1/chat/completions): client error (Connect): tcp connect error: Connection refused (os error 111)"
            ),
            UnreachableKind::Refused
        );
        assert_eq!(
            kind("builder error: relative URL without a base"),
            UnreachableKind::BadUrl
        );
        assert_eq!(
            kind("client error (Connect): dns error: failed to lookup address information"),
            UnreachableKind::UnknownHost
        );
        assert_eq!(
            kind("client error (Connect): invalid peer certificate: UnknownIssuer"),
            UnreachableKind::Tls
        );
        assert_eq!(
            kind("the server sent nothing for 5 seconds: operation timed out"),
            UnreachableKind::TimedOut
        );
        assert_eq!(
            kind("error sending request: connection reset by peer"),
            UnreachableKind::Other
        );
        assert_eq!(kind_of("x", true, false, false), UnreachableKind::Refused);
        assert_eq!(kind_of("x", false, true, false), UnreachableKind::TimedOut);
        assert_eq!(kind_of("x", false, false, true), UnreachableKind::BadUrl);
    }
}
