//! The descriptor limit: raised to the hard limit at start, so that the connection cap, not
//! the kernel, decides when a connection is refused; the cap is kept well below it.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// Descriptors kept free for the server itself (listener, model connections, files).
const RESERVED: u64 = 128;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit; returns the soft limit now in force
/// (`None` when unlimited).
pub fn raise_nofile() -> Option<u64> {
    let limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        let raised = Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        if setrlimit(Resource::Nofile, raised).is_ok() {
            return limit.maximum;
        }
    }
    limit.current
}

/// The connection cap that fits `nofile` descriptors: each connection may bring a session
/// whose language processes hold a few pipes, so connections get at most half of what is
/// left after a reserve.
pub fn connection_cap(configured: usize, nofile: Option<u64>) -> usize {
    let Some(nofile) = nofile else {
        return configured;
    };
    let fits = usize::try_from(nofile.saturating_sub(RESERVED) / 2).unwrap_or(usize::MAX);
    configured.min(fits).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_stays_below_the_descriptor_limit() {
        assert_eq!(connection_cap(4096, Some(20_000)), 4096);
        assert_eq!(connection_cap(4096, Some(1024)), 448);
        assert_eq!(connection_cap(4096, None), 4096);
        assert_eq!(connection_cap(4096, Some(10)), 1);
    }

    #[test]
    fn raising_reaches_the_hard_limit() {
        let now = raise_nofile();
        assert_eq!(now, getrlimit(Resource::Nofile).maximum);
    }
}
