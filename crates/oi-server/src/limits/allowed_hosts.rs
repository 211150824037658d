//! Which `Host` and `Origin` values the server answers to: the defence against DNS rebinding
//! (a page on `evil.example` whose name now resolves to 127.0.0.1 sends `Host: evil.example`)
//! and against other sites' pages (their `Origin` names another host).
//!
//! Allowed host names: `localhost`, loopback addresses (`127.0.0.0/8`, `[::1]`), the address
//! the server is bound to, any IP address when it is bound to every interface (`0.0.0.0`,
//! `::`: a DNS rebinding attack needs a name, and behind NAT or a container's port mapping
//! the server cannot know every address it is reached at), and the names the operator lists.

use std::net::IpAddr;

/// One name the operator allowed: `NAME` (any port) or `NAME:PORT`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Listed {
    name: String,
    port: Option<u16>,
}

/// The names and port the server answers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHosts {
    port: u16,
    bound: Option<IpAddr>,
    listed: Vec<Listed>,
}

/// A `host[:port]` authority split into a lower-case name (IPv6 without brackets) and port.
fn split_authority(authority: &str) -> Option<(String, Option<u16>)> {
    let authority = authority.trim();
    if authority.is_empty() || authority.contains(['/', '@', ' ']) {
        return None;
    }
    let (name, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (name, after) = rest.split_once(']')?;
        match after {
            "" => (name, None),
            _ => (name, Some(after.strip_prefix(':')?)),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((name, port)) if !name.contains(':') => (name, Some(port)),
            Some(_) => return None,
            None => (authority, None),
        }
    };
    let port = match port {
        Some(port) => Some(port.parse::<u16>().ok()?),
        None => None,
    };
    if name.is_empty() {
        return None;
    }
    Some((name.to_ascii_lowercase(), port))
}

impl AllowedHosts {
    /// For a server bound to `bound_host` (as configured: an address or a name) and `port`,
    /// with the operator's extra names (`NAME` or `NAME:PORT`).
    pub fn new(bound_host: &str, port: u16, listed: &[String]) -> Self {
        let bound = bound_host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .ok();
        let mut listed: Vec<Listed> = listed
            .iter()
            .filter_map(|entry| split_authority(entry))
            .map(|(name, port)| Listed { name, port })
            .collect();
        if bound.is_none() && !bound_host.trim().is_empty() {
            // Bound by name (e.g. `localhost`, or the machine's own name): that name is allowed.
            listed.extend(split_authority(bound_host).map(|(name, _)| Listed { name, port: None }));
        }
        AllowedHosts {
            port,
            bound,
            listed,
        }
    }

    /// The port pages must come from (the port the server listens on).
    pub fn port(&self) -> u16 {
        self.port
    }

    fn name_allowed(&self, name: &str, port: Option<u16>) -> bool {
        if name == "localhost" {
            return true;
        }
        if let Ok(ip) = name.parse::<IpAddr>() {
            let wildcard = self.bound.is_some_and(|b| b.is_unspecified());
            if ip.is_loopback() || Some(ip) == self.bound || wildcard {
                return true;
            }
        }
        self.listed
            .iter()
            .any(|l| l.name == name && (l.port.is_none() || l.port == port))
    }

    /// Whether a `Host` header value (`name[:port]`) names this server.
    pub fn host_ok(&self, host: &str) -> bool {
        split_authority(host).is_some_and(|(name, port)| self.name_allowed(&name, port))
    }

    /// Whether an `Origin` (`http://name[:port]`) is a page this server may serve: scheme
    /// `http` (the server speaks plain HTTP), an allowed name, and this server's port (or the
    /// port of a listed `NAME:PORT`, for a page behind a proxy). An `https://` origin is
    /// accepted only for a listed name (a TLS-terminating proxy in front of the server).
    pub fn origin_ok(&self, origin: &str) -> bool {
        let (authority, https) = if let Some(rest) = origin.strip_prefix("http://") {
            (rest, false)
        } else if let Some(rest) = origin.strip_prefix("https://") {
            (rest, true)
        } else {
            return false;
        };
        let Some((name, port)) = split_authority(authority.trim_end_matches('/')) else {
            return false;
        };
        let port = port.unwrap_or(if https { 443 } else { 80 });
        let listed = |any_port: bool| {
            self.listed
                .iter()
                .any(|l| l.name == name && (l.port == Some(port) || (any_port && l.port.is_none())))
        };
        if https {
            return listed(true);
        }
        self.name_allowed(&name, Some(port)) && (port == self.port || listed(false))
    }
}

#[cfg(test)]
mod tests {
    use super::AllowedHosts;

    #[test]
    fn loopback_server_answers_to_loopback_names_only() {
        let allowed = AllowedHosts::new("127.0.0.1", 8000, &[]);
        for host in [
            "127.0.0.1:8000",
            "localhost:8000",
            "LOCALHOST",
            "[::1]:8000",
            "127.0.0.2:8000",
        ] {
            assert!(allowed.host_ok(host), "{host}");
        }
        for host in [
            "evil.example:8000",
            "evil.example",
            "localhost.evil.example:8000",
            "10.0.0.5:8000",
            "",
            "127.0.0.1:8000/x",
            "user@127.0.0.1",
            "[::1",
        ] {
            assert!(!allowed.host_ok(host), "{host}");
        }
    }

    #[test]
    fn origins_need_http_an_allowed_name_and_the_port() {
        let allowed = AllowedHosts::new("127.0.0.1", 8000, &[]);
        assert!(allowed.origin_ok("http://127.0.0.1:8000"));
        assert!(allowed.origin_ok("http://LOCALHOST:8000/"));
        assert!(allowed.origin_ok("http://[::1]:8000"));
        assert!(!allowed.origin_ok("https://127.0.0.1:8000"));
        assert!(!allowed.origin_ok("http://evil.example:8000"));
        assert!(!allowed.origin_ok("http://127.0.0.1:9999"));
        assert!(!allowed.origin_ok("http://127.0.0.1"));
        assert!(!allowed.origin_ok("null"));
    }

    #[test]
    fn listed_names_and_wildcard_binding() {
        let listed = ["oi.lan".to_owned(), "proxy.lan:443".to_owned()];
        let allowed = AllowedHosts::new("0.0.0.0", 8000, &listed);
        assert!(allowed.host_ok("oi.lan:8000") && allowed.host_ok("oi.lan"));
        assert!(
            allowed.host_ok("192.168.1.20:8000"),
            "any address when bound to all"
        );
        assert!(allowed.host_ok("proxy.lan:443") && !allowed.host_ok("proxy.lan:80"));
        assert!(!allowed.host_ok("evil.example:8000"));
        assert!(allowed.origin_ok("http://oi.lan:8000"));
        assert!(allowed.origin_ok("http://proxy.lan:443"));
        assert!(!allowed.origin_ok("http://oi.lan:9000"));
        assert!(allowed.origin_ok("https://proxy.lan") && allowed.origin_ok("https://oi.lan"));
        assert!(!allowed.origin_ok("https://127.0.0.1:8000"));
        assert!(!allowed.origin_ok("https://proxy.lan:8443"));
        let by_name = AllowedHosts::new("box.local", 8000, &[]);
        assert!(by_name.host_ok("box.local:8000") && !by_name.host_ok("10.0.0.1:8000"));
        let specific = AllowedHosts::new("10.0.0.1", 8000, &[]);
        assert!(specific.host_ok("10.0.0.1:8000") && !specific.host_ok("10.0.0.2:8000"));
    }
}
