//! When and how long to wait before trying a request again.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// Retries of a request that failed before anything of the reply was passed on: connection
/// failures, HTTP 408/429/5xx, and streams that broke before their first delta.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 = never retry).
    pub max_retries: u32,
    /// The first wait; each later one doubles.
    pub base_delay: Duration,
    /// The longest computed wait.
    pub max_delay: Duration,
    /// The longest `Retry-After` honoured; a longer one ends the retries.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..RetryPolicy::default()
        }
    }

    /// The wait before retry number `retry` after a refused connection: 0.2 s, then 0.4 s,
    /// then give up (within the policy's retries), so an `--api_base` where nothing listens
    /// fails in well under a second while a local server restarting still gets its chance.
    pub fn refused_delay(&self, retry: u32) -> Option<Duration> {
        const REFUSED_RETRIES: u32 = 2;
        if retry >= self.max_retries.min(REFUSED_RETRIES) {
            return None;
        }
        Some(Duration::from_millis(200).saturating_mul(2u32.saturating_pow(retry)))
    }

    /// The wait before retry number `retry` (0-based), or `None` to give up. A server's
    /// `Retry-After` wins over the computed backoff (base × 2^retry, capped, jitter 0.8–1.2).
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Option<Duration> {
        if retry >= self.max_retries {
            return None;
        }
        if let Some(asked) = retry_after {
            return (asked <= self.max_retry_after).then_some(asked);
        }
        let factor = 2u32.saturating_pow(retry);
        let backoff = self.base_delay.saturating_mul(factor).min(self.max_delay);
        Some(backoff.mul_f64(jitter()))
    }
}

/// A random factor in 0.8..1.2.
fn jitter() -> f64 {
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    0.8 + 0.4 * ((random % 10_000) as f64 / 10_000.0)
}

/// Whether an HTTP status is worth retrying.
pub fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500..=599)
}

/// Parses a `Retry-After` header given in seconds.
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_jitter_and_caps() {
        let policy = RetryPolicy {
            max_retries: 10,
            ..RetryPolicy::default()
        };
        for (retry, nominal) in [(0u32, 1.0f64), (1, 2.0), (2, 4.0), (6, 30.0)] {
            let delay = policy.delay(retry, None).unwrap().as_secs_f64();
            assert!(
                delay >= nominal * 0.8 - 1e-9 && delay <= nominal * 1.2 + 1e-9,
                "{retry}: {delay}"
            );
        }
        assert_eq!(policy.delay(10, None), None);
        assert_eq!(RetryPolicy::none().delay(0, None), None);
    }

    #[test]
    fn a_refused_connection_is_retried_briefly() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.refused_delay(0), Some(Duration::from_millis(200)));
        assert_eq!(policy.refused_delay(1), Some(Duration::from_millis(400)));
        assert_eq!(policy.refused_delay(2), None);
        assert_eq!(RetryPolicy::none().refused_delay(0), None);
    }

    #[test]
    fn retry_after_wins_unless_too_long() {
        let policy = RetryPolicy::default();
        assert_eq!(
            policy.delay(0, Some(Duration::from_secs(7))),
            Some(Duration::from_secs(7))
        );
        assert_eq!(policy.delay(0, Some(Duration::from_secs(600))), None);
        assert_eq!(parse_retry_after(" 3 "), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
