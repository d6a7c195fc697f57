//! The strict single-pass parser for `URI-reference` (RFC 3986 §4.1).
//!
//! BE ADVISED: the parser never copies and never allocates. It walks the
//! input once, left to right, recording component boundaries in a [`Meta`].
//! Invariants: `pos <= len`, and `pos` never decreases. Every error is
//! raised at the first byte that cannot belong to the component being read
//! (or at the end of the input when something is missing there).
//!
//! The component boundaries follow the Appendix B reading of the grammar:
//! the scheme ends at the first `:` that comes before any `/`, `?` or `#`;
//! an authority follows `//` and ends at the next `/`, `?`, `#` or the end;
//! the path ends at `?` or `#`; the query ends at `#`. Each piece is then
//! checked against its ABNF rule.

use super::error::{ParseError, ParseErrorKind as K};
use super::host;
use super::meta::{HostKind, Meta};
use super::table::{self, FRAGMENT, HEXDIG, PATH, QUERY, REG_NAME, USERINFO};

/// Parses `s` as a URI-reference and returns the component offsets.
pub(crate) fn parse(s: &[u8]) -> Result<Meta, ParseError> {
    if s.len() >= u32::MAX as usize {
        return Err(ParseError::new(0, K::TooLong));
    }
    let len = s.len();
    let mut m = Meta::empty(len as u32);

    // Scheme: a ':' before any of "/?#" can only end a scheme, because a
    // relative reference's first segment may not hold ':' (path-noscheme).
    let mut pos = 0;
    let head = memchr::memchr3(b'/', b'?', b'#', s).unwrap_or(len);
    if let Some(colon) = memchr::memchr(b':', &s[..head]) {
        check_scheme(&s[..colon])?;
        m.scheme_end = colon as u32;
        pos = colon + 1;
    }

    // Authority.
    if s[pos..].starts_with(b"//") {
        let start = pos + 2;
        let end = start + memchr::memchr3(b'/', b'?', b'#', &s[start..]).unwrap_or(len - start);
        parse_authority(s, start, end, &mut m)?;
        pos = end;
    }

    // Path.
    m.path_start = pos as u32;
    let path_end = pos + memchr::memchr2(b'?', b'#', &s[pos..]).unwrap_or(len - pos);
    scan(s, pos, path_end, PATH, K::InvalidPath)?;
    m.path_end = path_end as u32;
    pos = path_end;

    // Query.
    if pos < len && s[pos] == b'?' {
        let end = pos + 1 + memchr::memchr(b'#', &s[pos + 1..]).unwrap_or(len - pos - 1);
        scan(s, pos + 1, end, QUERY, K::InvalidQuery)?;
        m.query_end = end as u32;
        pos = end;
    }

    // Fragment.
    if pos < len {
        debug_assert_eq!(s[pos], b'#');
        scan(s, pos + 1, len, FRAGMENT, K::InvalidFragment)?;
        m.fragment_start = (pos + 1) as u32;
    }
    m.debug_check();
    Ok(m)
}

/// `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` (§3.1)
fn check_scheme(s: &[u8]) -> Result<(), ParseError> {
    match s.first() {
        Some(b) if b.is_ascii_alphabetic() => {}
        _ => return Err(ParseError::new(0, K::InvalidScheme)),
    }
    match s.iter().position(|&b| !table::is(b, table::SCHEME_CHAR)) {
        Some(i) => Err(ParseError::new(i, K::InvalidScheme)),
        None => Ok(()),
    }
}

/// `authority = [ userinfo "@" ] host [ ":" port ]` over `s[start..end]` (§3.2)
fn parse_authority(s: &[u8], start: usize, end: usize, m: &mut Meta) -> Result<(), ParseError> {
    m.host_start = start as u32;
    let mut pos = start;
    if let Some(at) = memchr::memchr(b'@', &s[start..end]) {
        let at = start + at;
        scan(s, start, at, USERINFO, K::InvalidUserinfo)?;
        m.userinfo_end = at as u32;
        pos = at + 1;
        m.host_start = pos as u32;
    }

    let host_end;
    if pos < end && s[pos] == b'[' {
        // IP-literal = "[" ( IPv6address / IPvFuture ) "]"
        let close = match memchr::memchr(b']', &s[pos..end]) {
            Some(c) => pos + c,
            None => return Err(ParseError::new(end, K::UnclosedIpLiteral)),
        };
        let inner = &s[pos + 1..close];
        if matches!(inner.first(), Some(b'v' | b'V')) {
            host::check_ipv_future(inner)
                .map_err(|i| ParseError::new(pos + 1 + i, K::InvalidIpvFuture))?;
            m.host_kind = HostKind::IpvFuture;
        } else {
            host::parse_ipv6(inner).map_err(|i| ParseError::new(pos + 1 + i, K::InvalidIpv6))?;
            m.host_kind = HostKind::Ipv6;
        }
        host_end = close + 1;
        if host_end < end && s[host_end] != b':' {
            return Err(ParseError::new(host_end, K::InvalidHost));
        }
    } else {
        let stop = scan_until_invalid(s, pos, end, REG_NAME)?;
        if stop < end && s[stop] != b':' {
            return Err(ParseError::new(stop, K::InvalidHost));
        }
        host_end = stop;
        // First match wins: a host that is an IPv4address is one (§3.2.2).
        m.host_kind = if host::parse_ipv4(&s[pos..host_end]).is_some() {
            HostKind::Ipv4
        } else {
            HostKind::RegName
        };
    }
    m.host_end = host_end as u32;

    if host_end < end {
        // port = *DIGIT
        let port = host_end + 1;
        if let Some(bad) = s[port..end].iter().position(|b| !b.is_ascii_digit()) {
            return Err(ParseError::new(port + bad, K::InvalidPort));
        }
        m.port_start = port as u32;
    }
    m.authority_end = end as u32;
    Ok(())
}

/// Checks that `s[from..to]` holds only bytes of `mask` and valid
/// `pct-encoded` triplets; `kind` names the component for errors.
#[inline]
fn scan(s: &[u8], from: usize, to: usize, mask: u8, kind: K) -> Result<(), ParseError> {
    let stop = scan_until_invalid(s, from, to, mask)?;
    if stop < to {
        return Err(ParseError::new(stop, kind));
    }
    Ok(())
}

/// Advances from `from` while the bytes belong to `mask` or form valid
/// percent-encodings; returns where it stopped (at most `to`). A `%` that is
/// not followed by two hex digits is an error at the `%`.
#[inline]
fn scan_until_invalid(s: &[u8], from: usize, to: usize, mask: u8) -> Result<usize, ParseError> {
    let mut i = from;
    while i < to {
        let b = s[i];
        if table::is(b, mask) {
            i += 1;
        } else if b == b'%' {
            if i + 2 < to && table::is(s[i + 1], HEXDIG) && table::is(s[i + 2], HEXDIG) {
                i += 3;
            } else {
                return Err(invalid_pct(i));
            }
        } else {
            break;
        }
    }
    Ok(i)
}

#[cold]
fn invalid_pct(i: usize) -> ParseError {
    ParseError::new(i, K::InvalidPercentEncoding)
}
