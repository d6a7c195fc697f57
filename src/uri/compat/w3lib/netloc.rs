//! The netloc (`userinfo@host:port`): classifying its bytes, the bracket
//! checks, and making it safe (the userinfo re-encoded, the host lowercased,
//! IDNA-encoded or printed as `ipaddress` prints an IPv6 address).

use super::escapes::unquote;
use super::sets::USERINFO_SAFEST;
use crate::uri::compat::bytes::quote;
use crate::uri::compat::pyip::{self, PyIp};
use crate::uri::compat::unicode::{self, Ucd};
use crate::uri::compat::Reason;
use crate::uri::lanes::Lanes;

// The bytes of the netloc that the authority split looks for, as bits.
pub(super) const SEEN_OPEN: u8 = 1;
pub(super) const SEEN_CLOSE: u8 = 2;
pub(super) const SEEN_AT: u8 = 4;
pub(super) const SEEN_COLON: u8 = 8;
pub(super) const SEEN_PERCENT: u8 = 16;
pub(super) const SEEN_NON_ASCII: u8 = 32;
pub(super) const SEEN_UPPER: u8 = 64;

pub(super) const NETLOC_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'[' as usize] = SEEN_OPEN;
    t[b']' as usize] = SEEN_CLOSE;
    t[b'@' as usize] = SEEN_AT;
    t[b':' as usize] = SEEN_COLON;
    t[b'%' as usize] = SEEN_PERCENT;
    let mut c = b'A' as usize;
    while c <= b'Z' as usize {
        t[c] = SEEN_UPPER;
        c += 1;
    }
    let mut c = 128;
    while c < 256 {
        t[c] = SEEN_NON_ASCII;
        c += 1;
    }
    t
};

/// The `SEEN_*` bits of the bytes of the netloc, the first `len` bytes of
/// `r`: most netlocs are a plain lowercase host name and then skip every
/// search of the split. One 16-byte test tells such a host (of up to 16
/// bytes, with 16 bytes of `r` to read) from one that may have a seen byte;
/// other netlocs are classified byte by byte.
pub(super) fn netloc_bytes(r: &[u8], len: usize) -> u8 {
    if let Some(chunk) = r.first_chunk::<16>().filter(|_| len <= 16) {
        let v = Lanes::load(chunk);
        // `@`, `A-Z`, `[` and `]` are neighbours in ASCII (with `\`).
        let maybe = v.range(b'@', b']') | v.eq(b':') | v.eq(b'%') | v.range(0x80, 0xff);
        if maybe.bits() & ((1 << len) - 1) == 0 {
            return 0;
        }
    }
    r[..len]
        .iter()
        .fold(0, |seen, &b| seen | NETLOC_CLASS[b as usize])
}

/// Characters that NFKC may newly produce and that would change how the
/// authority splits.
pub(super) fn is_netloc_delim(c: char) -> bool {
    matches!(c, '/' | '?' | '#' | '@' | ':' | '\\')
}

/// `_check_bracketed_host`: an IPvFuture (`v<hex>.<any>`, lowercase `v`
/// only) or an IPv6 address; an IPv4 address or anything else is refused.
pub(super) fn bracketed_host_ok(h: &str) -> bool {
    if let Some(rest) = h.strip_prefix(['v', 'V']) {
        if !h.starts_with('v') {
            return false;
        }
        let hex_len = rest.bytes().take_while(u8::is_ascii_hexdigit).count();
        return hex_len > 0
            && rest[hex_len..]
                .strip_prefix('.')
                .is_some_and(|r| !r.is_empty());
    }
    matches!(pyip::ip_address(h), Some(PyIp::V6(..)))
}

/// `_check_bracketed_netloc` (a backport of CPython's bracket checks).
pub(super) fn bracketed_netloc_ok(netloc: &str) -> bool {
    let hp = netloc.rsplit_once('@').map_or(netloc, |(_, h)| h);
    let host = match hp.split_once('[') {
        Some((before, bracketed)) => {
            if !before.is_empty() {
                return false;
            }
            let (host, port) = bracketed.split_once(']').unwrap_or((bracketed, ""));
            if !port.is_empty() && !port.starts_with(':') {
                return false;
            }
            host
        }
        None => hp.split_once(':').map_or(hp, |(h, _)| h),
    };
    bracketed_host_ok(host)
}

/// The scratch buffers [`safe_netloc`] writes (borrowed apart from the
/// ones the netloc may point into).
pub(super) struct NetlocBufs<'a> {
    pub(super) netloc: &'a mut Vec<u8>,
    pub(super) host: &'a mut String,
    pub(super) text: &'a mut String,
    pub(super) text2: &'a mut String,
    pub(super) chars: &'a mut Vec<(u32, u8)>,
    pub(super) idna: &'a mut unicode::IdnaScratch,
    pub(super) tmp: &'a mut Vec<u8>,
}

/// The netloc made safe, in `s.netloc`: the userinfo decoded and
/// re-encoded, the host lowercased (IDNA-encoded when not ASCII, an IPv6
/// address in its short form), the port as a number.
pub(super) fn safe_netloc(
    userinfo: Option<&str>,
    hostname: &str,
    port: Option<u32>,
    seen: u8,
    s: NetlocBufs<'_>,
) -> Result<(), Reason> {
    s.netloc.clear();
    if let Some(u) = userinfo {
        let (user, pass) = match u.split_once(':') {
            Some((a, b)) => (a, Some(b)),
            None => (u, None),
        };
        s.tmp.clear();
        unquote(user.as_bytes(), s.tmp);
        quote(s.tmp, &USERINFO_SAFEST, s.netloc);
        if let Some(p) = pass {
            s.netloc.push(b':');
            s.tmp.clear();
            unquote(p.as_bytes(), s.tmp);
            quote(s.tmp, &USERINFO_SAFEST, s.netloc);
        }
        s.netloc.push(b'@');
    }
    let host_at = s.netloc.len();
    // The common host (ASCII, no brackets, no zone) is lowercased as it is
    // copied, and needs no second lowercasing below (a port is digits).
    let mut lowered = true;
    if seen & (SEEN_NON_ASCII | SEEN_OPEN | SEEN_PERCENT) == 0 {
        s.netloc.extend_from_slice(hostname.as_bytes());
        // Most hosts are lowercase already.
        if seen & SEEN_UPPER != 0 {
            s.netloc[host_at..].make_ascii_lowercase();
        }
    } else {
        // The hostname is lowercased up to a `%` (an IPv6 zone keeps its case).
        s.host.clear();
        let zone_at = (seen & SEEN_PERCENT != 0)
            .then(|| hostname.split_once('%'))
            .flatten();
        let (h, zone) = match zone_at {
            Some((h, z)) => (h, Some(z)),
            None => (hostname, None),
        };
        unicode::lower(h, s.host);
        if let Some(z) = zone {
            s.host.push('%');
            s.host.push_str(z);
        }
        lowered = zone.is_none();
        // An ASCII host has a `:` only if the netloc has one (lowercasing ASCII
        // adds none), so the common host skips the search.
        if seen & (SEEN_COLON | SEEN_NON_ASCII) != 0 && s.host.as_bytes().contains(&b':') {
            if !s.host.is_ascii() {
                return Err(Reason::UnicodeEncodeError);
            }
            s.netloc.push(b'[');
            s.netloc.extend_from_slice(s.host.as_bytes());
            s.netloc.push(b']');
        } else if s.host.is_ascii() {
            s.netloc.extend_from_slice(s.host.as_bytes());
        } else {
            lowered = false;
            s.text.clear();
            s.text.extend(
                s.host
                    .chars()
                    .filter(|c| !matches!(c, '@' | ':' | '#' | '?')),
            );
            s.text2.clear();
            Ucd::V14.nfkc(s.text, s.text2, s.chars);
            let mark = s.netloc.len();
            if unicode::idna_encode(s.text2, s.netloc, s.idna).is_err() {
                // The reference falls back to the hostname as it was.
                s.netloc.truncate(mark);
                s.netloc.extend_from_slice(s.host.as_bytes());
            }
        }
    }
    if let Some(p) = port {
        s.netloc.push(b':');
        let _ = std::io::Write::write_fmt(s.netloc, format_args!("{p}"));
    }
    // The whole host part (port and any zone included) is lowercased.
    if !lowered {
        lower_host_part(s.netloc, host_at, s.text);
    }
    if s.netloc.last() == Some(&b':') && s.netloc.len() > host_at {
        s.netloc.pop();
    }
    // Only a bracketed host, or one NFKC mapped (a fullwidth `［`), has a `[`.
    if seen & (SEEN_OPEN | SEEN_NON_ASCII) != 0 {
        normalize_ipv6_host(s.netloc, s.tmp);
    }
    Ok(())
}

/// Lowercases `netloc[host_at..]` the way `str.lower()` does.
pub(super) fn lower_host_part(netloc: &mut Vec<u8>, host_at: usize, text: &mut String) {
    if netloc[host_at..].is_ascii() {
        netloc[host_at..].make_ascii_lowercase();
        return;
    }
    let host_part = String::from_utf8_lossy(&netloc[host_at..]).into_owned();
    text.clear();
    unicode::lower(&host_part, text);
    netloc.truncate(host_at);
    netloc.extend_from_slice(text.as_bytes());
}

/// `_normalize_ipv6_host`: the first `[...]` of the netloc, if it is an
/// IPv6 address, printed the way `ipaddress` prints it.
pub(super) fn normalize_ipv6_host(netloc: &mut Vec<u8>, tmp: &mut Vec<u8>) {
    let Some(open) = netloc.iter().position(|&b| b == b'[') else {
        return;
    };
    let Some(close) = netloc[open..].iter().position(|&b| b == b']') else {
        return;
    };
    let close = open + close;
    let Ok(inner) = core::str::from_utf8(&netloc[open + 1..close]) else {
        return;
    };
    let Some(PyIp::V6(a, zone)) = pyip::ip_address(inner) else {
        return;
    };
    tmp.clear();
    tmp.extend_from_slice(&netloc[..=open]);
    pyip::write_v6(&a, zone, tmp);
    tmp.extend_from_slice(&netloc[close..]);
    core::mem::swap(netloc, tmp);
}
