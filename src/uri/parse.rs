//! The strict single-pass parser for `URI-reference` (RFC 3986 §4.1).
//!
//! BE ADVISED: the parser never copies and never allocates. It walks the
//! input once, left to right, recording component boundaries in a [`Meta`].
//! Invariants: `pos <= len`, and `pos` never decreases. Every error is
//! raised at the first byte that cannot belong to the component being read
//! (or at the end of the input when something is missing there).
//!
//! Two parsers share this file. [`parse_fast`] makes one pass over the
//! bytes for the common shapes and gives up (`None`) on anything unusual:
//! an IP-literal, or any byte it cannot place. [`parse_precise`] is the
//! readable reference implementation; it handles every input and computes
//! the exact error. [`parse`] tries the first and falls back to the second,
//! so the fast path only has to be right when it says yes; tests check that
//! the two agree on every input they see.
//!
//! The component boundaries follow the Appendix B reading of the grammar:
//! the scheme ends at the first `:` that comes before any `/`, `?` or `#`;
//! an authority follows `//` and ends at the next `/`, `?`, `#` or the end;
//! the path ends at `?` or `#`; the query ends at `#`. Each piece is then
//! checked against its ABNF rule.

use super::error::{ParseError, ParseErrorKind as K};
use super::host;
use super::lanes::{lanes_at, Lanes};
use super::meta::{self, HostKind, Meta};
use super::table::{self, FRAGMENT, HEXDIG, PATH, PCHAR, QUERY, REG_NAME, USERINFO};

/// Parses `s` as a URI-reference and returns the component offsets.
#[inline]
pub(crate) fn parse(s: &[u8]) -> Result<Meta, ParseError> {
    match parse_fast(s) {
        Some(m) => Ok(m),
        None => parse_precise(s),
    }
}

/// One pass over `s` for the common shapes: an optional scheme, an optional
/// authority with a reg-name or IPv4 host, then path, query and fragment.
/// Returns `None` for an IP-literal and for any invalid input.
#[inline]
pub(crate) fn parse_fast(s: &[u8]) -> Option<Meta> {
    let len = s.len();
    if len >= u32::MAX as usize {
        return None;
    }
    let mut m = Meta::empty(len as u32);
    let mut i = 0;
    if s.first().is_some_and(u8::is_ascii_alphabetic) {
        let j = skip_plain(s, 1, table::SCHEME_CHAR);
        if s.get(j) == Some(&b':') {
            m.scheme_end = j as u32;
            i = j + 1;
        }
    }

    if s.get(i) == Some(&b'/') && s.get(i + 1) == Some(&b'/') {
        let start = i + 2;
        let mut host_start = start;
        // Userinfo bytes are a superset of reg-name and port bytes.
        let mut j = skip(s, start, USERINFO);
        if s.get(j) == Some(&b'@') {
            m.userinfo_end = j as u32;
            host_start = j + 1;
            j = skip(s, host_start, USERINFO);
        }
        if j < len && !matches!(s[j], b'/' | b'?' | b'#') {
            return None; // an IP-literal, or an error
        }
        let host_port = &s[host_start..j];
        let host_end = match memchr::memchr(b':', host_port) {
            Some(c) => {
                let port = host_start + c + 1;
                if !s[port..j].iter().all(u8::is_ascii_digit) {
                    return None;
                }
                m.port_start = port as u32;
                host_start + c
            }
            None => j,
        };
        let host = &s[host_start..host_end];
        m.host_kind =
            if host.first().is_some_and(u8::is_ascii_digit) && host::parse_ipv4(host).is_some() {
                HostKind::Ipv4
            } else {
                HostKind::RegName
            };
        m.host_start = host_start as u32;
        m.host_end = host_end as u32;
        m.authority_end = j as u32;
        i = j;
    } else if m.scheme_end == meta::NONE {
        // path-noscheme: the first segment of a relative path has no ':'.
        let j = skip(s, i, PCHAR & !table::COLON);
        if s.get(j) == Some(&b':') {
            return None;
        }
    }

    m.path_start = i as u32;
    let mut j = skip(s, i, PATH);
    m.path_end = j as u32;
    if s.get(j) == Some(&b'?') {
        j = skip(s, j + 1, QUERY);
        m.query_end = j as u32;
    }
    if s.get(j) == Some(&b'#') {
        m.fragment_start = (j + 1) as u32;
        j = skip(s, j + 1, FRAGMENT);
    }
    if j != len {
        return None;
    }
    m.debug_check();
    Some(m)
}

/// Whether `s` is a valid `path-abempty [ "?" query ] [ "#" fragment ]`:
/// what follows the authority of a URI. Past its first byte, such a tail
/// is any run of `query` bytes (`pchar`, `/` and `?`) and `pct-encoded`
/// triplets with at most one `#`, which is checked sixteen bytes at a
/// time (a byte loop is a third of a SURT's time on crawl keys).
#[inline]
pub(crate) fn is_after_authority(s: &[u8]) -> bool {
    if s.first().is_some_and(|&b| !matches!(b, b'/' | b'?' | b'#')) {
        return false;
    }
    let is_hex = |at: usize| s.get(at).is_some_and(|&b| table::is(b, HEXDIG));
    let mut hashes = 0u32;
    let mut at = 0;
    while at < s.len() {
        let (v, valid, base) = lanes_at(s, at);
        if not_in_query_but_pct_hash(v).bits() & valid != 0 {
            return false;
        }
        hashes += (v.eq(b'#').bits() & valid).count_ones();
        let mut escapes = v.eq(b'%').bits() & valid;
        while escapes != 0 {
            let e = base + escapes.trailing_zeros() as usize;
            if !(is_hex(e + 1) && is_hex(e + 2)) {
                return false;
            }
            escapes &= escapes - 1;
        }
        at += 16;
    }
    hashes <= 1
}

/// The lanes of `v` that hold neither a `query` byte nor `%` or `#`: not
/// printable ASCII, or one of the eleven printable bytes that no part of a
/// URI allows unescaped.
#[inline(always)]
fn not_in_query_but_pct_hash(v: Lanes) -> Lanes {
    !v.range(0x21, 0x7e)
        | v.eq(b'"')
        | v.eq(b'<')
        | v.eq(b'>')
        | v.eq(b'[')
        | v.eq(b'\\')
        | v.eq(b']')
        | v.eq(b'^')
        | v.eq(b'`')
        | v.eq(b'{')
        | v.eq(b'|')
        | v.eq(b'}')
}

/// Advances from `i` over bytes of `mask` and valid `pct-encoded` triplets.
///
/// Runs of allowed bytes are checked eight at a time with one branch per
/// block (the loads and tests are independent, so they pipeline); a `%` or
/// the stop byte drops to the byte loop.
#[inline(always)]
fn skip(s: &[u8], mut i: usize, mask: u8) -> usize {
    while let Some(block) = s.get(i..i + 8) {
        let ok = block.iter().fold(true, |ok, &b| ok & table::is(b, mask));
        if !ok {
            break;
        }
        i += 8;
    }
    while i < s.len() {
        let b = s[i];
        if table::is(b, mask) {
            i += 1;
        } else if b == b'%'
            && i + 2 < s.len()
            && table::is(s[i + 1], HEXDIG)
            && table::is(s[i + 2], HEXDIG)
        {
            i += 3;
        } else {
            break;
        }
    }
    i
}

/// Advances from `i` over bytes of `mask` (no percent-encoding).
#[inline(always)]
fn skip_plain(s: &[u8], mut i: usize, mask: u8) -> usize {
    while i < s.len() && table::is(s[i], mask) {
        i += 1;
    }
    i
}

/// The reference parser: handles every input and finds the exact error.
pub(crate) fn parse_precise(s: &[u8]) -> Result<Meta, ParseError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// [`is_after_authority`] as [`parse_fast`] reads a tail, a byte at a
    /// time.
    fn after_authority_by_skip(s: &[u8]) -> bool {
        if s.first().is_some_and(|&b| !matches!(b, b'/' | b'?' | b'#')) {
            return false;
        }
        let mut j = skip(s, 0, PATH);
        if s.get(j) == Some(&b'?') {
            j = skip(s, j + 1, QUERY);
        }
        if s.get(j) == Some(&b'#') {
            j = skip(s, j + 1, FRAGMENT);
        }
        j == s.len()
    }

    #[test]
    fn parse_lanes_outside_query_are_the_table_s() {
        for b in 0..=255u8 {
            let lanes = not_in_query_but_pct_hash(Lanes::load(&[b; 16])).bits() != 0;
            let table = !(table::is(b, QUERY) || b == b'%' || b == b'#');
            assert_eq!(lanes, table, "{b:#x}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn parse_after_authority_in_blocks_is_byte_by_byte(
            pieces in prop::collection::vec(
                prop::sample::select(vec![
                    "/", "/", "a", "Z", "9", "?", "#", "%", "%4", "%41", "%4a", "%zz", "&", "=",
                    "@", ":", "~", " ", "[", "|", "\u{e9}", "\u{7f}", "/abcdefghijklmno",
                    "/pqrstuvwxyz0123",
                ]),
                0..16,
            )
        ) {
            let s = pieces.concat();
            prop_assert_eq!(
                is_after_authority(s.as_bytes()),
                after_authority_by_skip(s.as_bytes()),
                "{:?}", s
            );
        }
    }
}
