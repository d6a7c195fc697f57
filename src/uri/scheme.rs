//! Known schemes and what scheme-based normalization (RFC 3986 §6.2.3)
//! may assume about them.
//!
//! One small table, looked up by `(length, first byte)` and then compared
//! case-insensitively (the scheme is case-insensitive, §3.1), so a look-up
//! costs one `match` and at most one short comparison. A scheme that is not
//! in the table gets no scheme-based rule at all.

/// What normalization knows about one scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchemeInfo {
    /// The scheme name, lower-case.
    pub name: &'static str,
    /// The port the scheme's specification names as default, if any.
    /// `remove-default-port` drops a port equal to it (§6.2.3).
    pub default_port: Option<u16>,
    /// An empty path after an authority means `/` (§6.2.3 for `http`; the
    /// same holds for `https`, `ws`, `wss` and `ftp`).
    pub empty_path_is_slash: bool,
    /// Hosts are DNS names or IPv4 addresses that browsers read with the
    /// WHATWG number rules, so `ipv4-canonical` may rewrite `0x7f.1`.
    pub http_like: bool,
}

const fn info(name: &'static str, port: u16, http_like: bool) -> SchemeInfo {
    SchemeInfo {
        name,
        default_port: Some(port),
        empty_path_is_slash: http_like,
        http_like,
    }
}

/// `http`, RFC 9110 §4.2.1.
pub const HTTP: SchemeInfo = info("http", 80, true);
/// `https`, RFC 9110 §4.2.2.
pub const HTTPS: SchemeInfo = info("https", 443, true);
/// `ws`, RFC 6455 §3.
pub const WS: SchemeInfo = info("ws", 80, true);
/// `wss`, RFC 6455 §3.
pub const WSS: SchemeInfo = info("wss", 443, true);
/// `ftp`, RFC 1738 §3.2.
pub const FTP: SchemeInfo = info("ftp", 21, true);
/// `gopher`, RFC 4266 §2.1.
pub const GOPHER: SchemeInfo = info("gopher", 70, false);
/// `telnet`, RFC 4248 §2.
pub const TELNET: SchemeInfo = info("telnet", 23, false);
/// `nntp`, RFC 5538 §2.
pub const NNTP: SchemeInfo = info("nntp", 119, false);
/// `ldap`, RFC 4516 §2.
pub const LDAP: SchemeInfo = info("ldap", 389, false);
/// `rtsp`, RFC 7826 §19.1.
pub const RTSP: SchemeInfo = info("rtsp", 554, false);
/// `imap`, RFC 5092 §3.
pub const IMAP: SchemeInfo = info("imap", 143, false);
/// `pop`, RFC 2384 §3.
pub const POP: SchemeInfo = info("pop", 110, false);

/// Every known scheme.
pub const KNOWN: &[SchemeInfo] = &[
    HTTP, HTTPS, WS, WSS, FTP, GOPHER, TELNET, NNTP, LDAP, RTSP, IMAP, POP,
];

/// Looks `scheme` up, ignoring ASCII case.
///
/// ```
/// use urikey::uri::scheme;
/// assert_eq!(scheme::lookup(b"HTTPS").map(|s| s.default_port), Some(Some(443)));
/// assert!(scheme::lookup(b"foo").is_none());
/// ```
#[inline]
pub fn lookup(scheme: &[u8]) -> Option<&'static SchemeInfo> {
    let first = scheme.first()?.to_ascii_lowercase();
    let candidate: &'static SchemeInfo = match (scheme.len(), first) {
        (4, b'h') => &HTTP,
        (5, b'h') => &HTTPS,
        (2, b'w') => &WS,
        (3, b'w') => &WSS,
        (3, b'f') => &FTP,
        (6, b'g') => &GOPHER,
        (6, b't') => &TELNET,
        (4, b'n') => &NNTP,
        (4, b'l') => &LDAP,
        (4, b'r') => &RTSP,
        (4, b'i') => &IMAP,
        (3, b'p') => &POP,
        _ => return None,
    };
    candidate
        .name
        .as_bytes()
        .eq_ignore_ascii_case(scheme)
        .then_some(candidate)
}

/// True when `port` (ASCII digits, as written) is numerically equal to
/// `default`. Leading zeros are ignored: a port is a decimal number
/// (§3.2.3), so `:080` names the same port as `:80`. An empty port is never
/// a default port (it is handled by `remove-empty-port`).
#[inline]
pub fn is_port(port: &[u8], default: u16) -> bool {
    let digits = match port.iter().position(|&b| b != b'0') {
        Some(first) => &port[first..],
        None => return !port.is_empty() && default == 0,
    };
    if digits.len() > 5 {
        return false;
    }
    let mut value = 0u32;
    for &b in digits {
        if !b.is_ascii_digit() {
            return false;
        }
        value = value * 10 + u32::from(b - b'0');
    }
    value == u32::from(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_scheme_is_found_in_any_case() {
        for s in KNOWN {
            assert_eq!(lookup(s.name.as_bytes()), Some(s));
            assert_eq!(lookup(s.name.to_ascii_uppercase().as_bytes()), Some(s));
        }
        for miss in [
            "", "h", "htt", "httpx", "hxxp", "wx", "file", "mailto", "urn",
        ] {
            assert_eq!(lookup(miss.as_bytes()), None, "{miss}");
        }
    }

    #[test]
    fn ports_compare_numerically() {
        assert!(is_port(b"80", 80));
        assert!(is_port(b"080", 80));
        assert!(is_port(b"0000080", 80));
        assert!(!is_port(b"8080", 80));
        assert!(!is_port(b"", 80));
        assert!(!is_port(b"800000000000000000080", 80));
        assert!(!is_port(b"0", 80));
        assert!(!is_port(b"65616", 80)); // 80 + 65536: no wrap-around
    }
}
