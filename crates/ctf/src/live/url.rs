//! `net://HOST[:PORT][/host/HOSTNAME/SESSION]`, the URLs babeltrace2's
//! `lttng-live` source takes (`net4://` too; the default port is 5344).

use super::conn::LiveError;

/// The relayd's default viewer port.
pub const DEFAULT_PORT: u16 = 5344;

/// A parsed live URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveUrl {
    /// The URL as given (babeltrace2 builds the session list's URLs from it).
    pub text: String,
    pub host: String,
    pub port: u16,
    /// The traced host and session, when the URL names a session.
    pub target: Option<(String, String)>,
}

/// Whether `s` looks like a live URL (the CLI's choice of input kind).
pub fn is_live_url(s: &str) -> bool {
    s.starts_with("net://") || s.starts_with("net4://") || s.starts_with("net6://")
}

impl LiveUrl {
    pub fn parse(s: &str) -> Result<LiveUrl, LiveError> {
        let bad = |why: &str| LiveError::Url(format!("invalid LTTng live URL `{s}`: {why}"));
        let rest = if let Some(r) = s.strip_prefix("net://") {
            r
        } else if let Some(r) = s.strip_prefix("net4://") {
            r
        } else if s.starts_with("net6://") {
            return Err(bad("IPv6 (net6://) is not supported, as in babeltrace2"));
        } else {
            return Err(bad("expected net://"));
        };
        let (hostport, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => {
                let port: u16 = p.parse().map_err(|_| bad("bad port"))?;
                (h, port)
            }
            None => (hostport, DEFAULT_PORT),
        };
        if host.is_empty() {
            return Err(bad("missing host"));
        }
        let target = if path.is_empty() || path == "/" {
            None
        } else {
            let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
            match parts.as_slice() {
                ["host", h, sess] if !h.is_empty() && !sess.is_empty() => {
                    Some((h.to_string(), sess.to_string()))
                }
                _ => return Err(bad("expected /host/HOSTNAME/SESSION after the host")),
            }
        };
        Ok(LiveUrl {
            text: s.to_string(),
            host: host.to_string(),
            port,
            target,
        })
    }

    /// The URL without its session part (the base of the session list).
    pub fn base(&self) -> &str {
        match self.text.find("/host/") {
            Some(i) if self.target.is_some() => &self.text[..i],
            _ => self.text.trim_end_matches('/'),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = LiveUrl::parse("net://127.0.0.1:15344/host/vm/s1").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("127.0.0.1", 15344));
        assert_eq!(u.target, Some(("vm".into(), "s1".into())));
        assert_eq!(u.base(), "net://127.0.0.1:15344");
        let u = LiveUrl::parse("net://localhost").unwrap();
        assert_eq!((u.port, u.target.clone()), (DEFAULT_PORT, None));
        for bad in [
            "net://",
            "net://h:x",
            "net://h/host/vm",
            "http://h",
            "net://h/x/y/z",
        ] {
            assert!(LiveUrl::parse(bad).is_err(), "{bad}");
        }
    }
}
