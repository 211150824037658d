//! Refuses to serve beyond loopback without a key: anyone who can reach such a port could run
//! code on this machine.

use std::net::SocketAddr;

/// Why the server will not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExposureError {
    /// Bound beyond loopback with no `INTERPRETER_API_KEY` and no `--insecure-no-key`.
    #[error(
        "refusing to serve on {0} without a key: anyone who can reach it could run code here. Set INTERPRETER_API_KEY=SECRET (clients then send it), bind to 127.0.0.1, or pass --insecure-no-key to accept the risk"
    )]
    NoKey(SocketAddr),
}

/// Checks the address the server is bound to: a non-loopback address (`0.0.0.0` and `::`
/// included) needs a key unless `insecure_no_key`. Returns a warning to print when the
/// server runs exposed without a key.
pub fn check(
    bound: SocketAddr,
    has_key: bool,
    insecure_no_key: bool,
) -> Result<Option<String>, ExposureError> {
    if bound.ip().is_loopback() || has_key {
        return Ok(None);
    }
    if !insecure_no_key {
        return Err(ExposureError::NoKey(bound));
    }
    Ok(Some(format!(
        "WARNING: serving on {bound} with no INTERPRETER_API_KEY (--insecure-no-key): ANYONE WHO CAN REACH THIS PORT CAN RUN CODE ON THIS MACHINE."
    )))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn loopback_or_key_or_explicit_risk() {
        let at = |s: &str| s.parse::<SocketAddr>().unwrap();
        assert_eq!(check(at("127.0.0.1:8000"), false, false), Ok(None));
        assert_eq!(check(at("[::1]:8000"), false, false), Ok(None));
        assert_eq!(check(at("0.0.0.0:8000"), true, false), Ok(None));
        for exposed in ["0.0.0.0:8000", "[::]:8000", "192.168.1.2:8000"] {
            let err = check(at(exposed), false, false).unwrap_err();
            assert!(err.to_string().contains("INTERPRETER_API_KEY"), "{err}");
            assert!(check(at(exposed), false, true).unwrap().is_some());
        }
    }
}
