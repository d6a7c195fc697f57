//! `w3lib.url.canonicalize_url(url)` of w3lib 2.5.0 (default arguments,
//! optionally `keep_fragments=True`), on CPython 3.11.
//!
//! The steps follow the reference's order, because its quirks come from
//! the order: the URL is split WHATWG-style, every part is made "safe"
//! (percent-encoded with a per-part set), and only then is the query
//! decoded, sorted and re-encoded and the path decoded and re-encoded.

use core::cmp::Ordering;

use super::bytes::{self, push_escape, quote, Set, HEX_UPPER};
use super::pyip::{self, PyIp};
use super::unicode::{self, Ucd};
use super::{CompatError, Reason, W3libScratch};
use crate::uri::lanes::Lanes;
use crate::uri::pct;

const fn set(extra: &[u8], minus: &[u8]) -> Set {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
        c += 1;
    }
    let mut i = 0;
    while i < extra.len() {
        t[extra[i] as usize] = true;
        i += 1;
    }
    let mut i = 0;
    while i < minus.len() {
        t[minus[i] as usize] = false;
        i += 1;
    }
    t
}

/// RFC 3986 unreserved: what `urlencode` leaves alone.
const UNRESERVED: Set = set(b"", b"");
/// Userinfo: unreserved and sub-delims except `;` and `=` (no `%`: the
/// userinfo is decoded first, so every `%` left is a literal one).
const USERINFO_SAFEST: Set = set(b"!$&'()*+,", b"");
/// Path, query and fragment on the first, "make it safe" pass: reserved,
/// unreserved and `%`, minus `#[]|`.
const PATH_SAFEST: Set = set(b":/?#[]@!$&'()*+,;=|%", b"#[]|");
// (The reference's query set, which also escapes `'` for a special
// scheme, needs no table: the query is decoded right after that pass, see
// `write_query`.)
/// The path on the second pass keeps `[`, `]`, `|` and reserved bytes as
/// they are: these and the unreserved ones are copied.
const PATH_PLAIN: Set = set(b":/?[]@!$&'()*+,;=|", b"");

/// Where a plain run of the path stops: a byte that is not plain, the `?`
/// that ends the path, or a `;` that may start params.
const PATH_STOP: Set = {
    let mut t = not(&PATH_PLAIN);
    t[b'?' as usize] = true;
    t[b';' as usize] = true;
    t
};

/// `PATH_STOP` on 16 bytes at once, and a few plain bytes that are rare
/// in paths (`$=]|`): neighbours in ASCII are tested as one range, 6 tests
/// instead of 10. The path pass checks each byte it stops at in the table,
/// and passes over such a byte.
#[inline(always)]
fn path_stop_lanes(v: Lanes) -> Lanes {
    !v.range(0x21, 0x7e)
        | v.range(b'"', b'%')
        | v.range(b';', b'?')
        | v.range(b'\\', b'^')
        | v.eq(b'`')
        | v.range(b'{', b'}')
}

const fn not(set: &Set) -> Set {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = !set[c];
        c += 1;
    }
    t
}

/// The bytes not in `UNRESERVED`.
const RESERVED: Set = not(&UNRESERVED);

/// The bytes whose escapes `quote_plus` writes again: the reserved ones
/// but the space (a `+`).
const QUERY_KEPT: Set = {
    let mut t = RESERVED;
    t[b' ' as usize] = false;
    t
};

/// `RESERVED` on 16 bytes at once.
#[inline(always)]
fn reserved_lanes(v: Lanes) -> Lanes {
    !(v.range(b'0', b'9')
        | v.range(b'a', b'z')
        | v.range(b'A', b'Z')
        | v.range(b'-', b'.')
        | v.eq(b'_')
        | v.eq(b'~'))
}

// The bytes of the netloc that the authority split looks for, as bits.
const SEEN_OPEN: u8 = 1;
const SEEN_CLOSE: u8 = 2;
const SEEN_AT: u8 = 4;
const SEEN_COLON: u8 = 8;
const SEEN_PERCENT: u8 = 16;
const SEEN_NON_ASCII: u8 = 32;
const SEEN_UPPER: u8 = 64;

const NETLOC_CLASS: [u8; 256] = {
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
fn netloc_bytes(r: &[u8], len: usize) -> u8 {
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

/// [`pct::hex_value`] of every byte, 0xff for the bytes that are not hex
/// digits: one lookup per digit, no branch.
const HEX_VALUE: [u8; 256] = {
    let mut t = [0xff; 256];
    let mut c = 0;
    while c < 256 {
        if let Some(v) = pct::hex_value(c as u8) {
            t[c] = v;
        }
        c += 1;
    }
    t
};

/// The length of the run of escapes at the start of `s` that are written
/// back as they are: uppercase hex digits, of a byte in `kept` (the bytes
/// that are escaped again). Such runs (`%D8%A7%D9%84`, UTF-8 text) are
/// passed over like plain bytes, not decoded and re-encoded.
#[inline(always)]
fn kept_escapes(s: &[u8], kept: &Set) -> usize {
    let mut n = 0;
    while let Some(&[b'%', h, l]) = s.get(n..n + 3) {
        let (h, l) = (HEX_VALUE[h as usize], HEX_VALUE[l as usize]);
        let upper =
            HEX_UPPER.get(h as usize) == s.get(n + 1) && HEX_UPPER.get(l as usize) == s.get(n + 2);
        if !upper || !kept[(h << 4 | l) as usize] {
            break;
        }
        n += 3;
    }
    n
}

/// The two hex digits after the `%` at `s[i]`, as values, if both are hex
/// digits (two lookups and one test, no branch per digit).
#[inline(always)]
fn escape_digits(s: &[u8], i: usize) -> Option<(u8, u8)> {
    let (Some(&h), Some(&l)) = (s.get(i + 1), s.get(i + 2)) else {
        return None;
    };
    let (h, l) = (HEX_VALUE[h as usize], HEX_VALUE[l as usize]);
    ((h | l) < 16).then_some((h, l))
}

/// The `%HH` at `s[i..]`, if `s[i]` is `%` and two hex digits follow.
#[inline(always)]
fn escape_at(s: &[u8], i: usize) -> Option<u8> {
    if s.get(i) != Some(&b'%') {
        return None;
    }
    escape_digits(s, i).map(|(h, l)| h << 4 | l)
}

/// Percent-decoding (of the userinfo), appended to `out`. The bytes
/// between two `%` are copied as one run.
fn unquote(s: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while i < s.len() {
        // Escapes come in runs: one right after another skips the search.
        let next = if s[i] == b'%' {
            Some(0)
        } else {
            bytes::find(&s[i..], |v| v.eq(b'%'), |b| b == b'%')
        };
        let Some(n) = next else {
            out.extend_from_slice(&s[i..]);
            return;
        };
        out.extend_from_slice(&s[i..i + n]);
        i += n;
        // `s[i]` is a `%`: an escape or a literal one.
        if let Some(b) = escape_at(s, i) {
            out.push(b);
            i += 3;
        } else {
            out.push(b'%');
            i += 1;
        }
    }
}

/// Bytes of a scheme after its first letter.
const SCHEME_TAIL: Set = set(b"+", b"_~");

/// The length of the scheme `url` starts with (0 when it does not start
/// with a letter); the caller checks that a `:` follows.
fn scheme_len(url: &[u8]) -> usize {
    if !url.first().is_some_and(u8::is_ascii_alphabetic) {
        return 0;
    }
    url.iter()
        .position(|&b| !SCHEME_TAIL[b as usize])
        .unwrap_or(url.len())
}

/// Schemes whose URLs are "special" in the URL Standard.
fn is_special(scheme: &str) -> bool {
    matches!(scheme, "ftp" | "file" | "http" | "https" | "ws" | "wss")
}

/// `urllib.parse.uses_params` of CPython 3.11.
fn uses_params(scheme: &str) -> bool {
    matches!(
        scheme,
        "" | "ftp"
            | "hdl"
            | "prospero"
            | "http"
            | "imap"
            | "https"
            | "shttp"
            | "rtsp"
            | "rtsps"
            | "rtspu"
            | "sip"
            | "sips"
            | "mms"
            | "sftp"
            | "tel"
    )
}

/// `urllib.parse.uses_netloc` of CPython 3.11 (without `''`, which the
/// caller never asks about).
fn uses_netloc(scheme: &str) -> bool {
    matches!(
        scheme,
        "ftp"
            | "http"
            | "gopher"
            | "nntp"
            | "telnet"
            | "imap"
            | "wais"
            | "file"
            | "mms"
            | "https"
            | "shttp"
            | "snews"
            | "prospero"
            | "rtsp"
            | "rtsps"
            | "rtspu"
            | "rsync"
            | "svn"
            | "svn+ssh"
            | "sftp"
            | "nfs"
            | "git"
            | "git+ssh"
            | "ws"
            | "wss"
    )
}

/// Characters that NFKC may newly produce and that would change how the
/// authority splits.
fn is_netloc_delim(c: char) -> bool {
    matches!(c, '/' | '?' | '#' | '@' | ':' | '\\')
}

/// `_check_bracketed_host`: an IPvFuture (`v<hex>.<any>`, lowercase `v`
/// only) or an IPv6 address; an IPv4 address or anything else is refused.
fn bracketed_host_ok(h: &str) -> bool {
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
fn bracketed_netloc_ok(netloc: &str) -> bool {
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

/// `_strip`: trims C0 controls and spaces at both ends, then drops every
/// tab, CR and LF (only searched for when `rare`, see `key`). Returns the
/// input unchanged when there is nothing to do.
fn strip<'a>(input: &'a str, lead: usize, buf: &'a mut String, rare: bool) -> &'a str {
    let t = trim_c0_space(input, lead);
    let controls = |t: &str| {
        bytes::any(
            t.as_bytes(),
            |v| v.eq(b'\t') | v.eq(b'\n') | v.eq(b'\r'),
            |b| matches!(b, b'\t' | b'\n' | b'\r'),
        )
    };
    if !rare || !controls(t) {
        return t;
    }
    buf.clear();
    buf.extend(t.chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')));
    buf
}

/// `input` without the C0 controls and spaces at its ends, the first
/// `lead` bytes being such. They are ASCII, so the ends are trimmed byte by
/// byte (no UTF-8 decoding), and the cuts fall on character boundaries.
fn trim_c0_space(input: &str, lead: usize) -> &str {
    let b = input.as_bytes();
    let end = b.iter().rposition(|&c| c > b' ').map_or(lead, |i| i + 1);
    input.get(lead..end).unwrap_or_default()
}

/// How many C0 controls and spaces `input` starts with.
fn c0_space_lead(input: &str) -> usize {
    input.bytes().position(|c| c > b' ').unwrap_or(input.len())
}

/// What one pass over the raw line tells (see [`scan`]).
#[derive(Clone, Copy)]
struct Scan {
    /// A byte that needs the slower steps, absent from most URLs:
    /// non-ASCII (to validate as UTF-8), a tab, CR or LF to remove, a `\`
    /// to read as `/` (and the other controls below 14, which only cost
    /// the exact searches).
    rare: bool,
    /// A `/` followed by `.` or `%`: only then can the path have a dot
    /// segment, a `/` then `.` or `%2E` (`%2F` stays escaped, so a `/` of
    /// the key is a `/` of the line). Set on every rare line.
    dots: bool,
}

/// [`Scan`] of `input`, 16 bytes (and the 16 pairs they start) at a time,
/// the results gathered in the lanes and read once at the end: the dot
/// test costs less here than a search of the written path, which is then
/// skipped on most lines.
fn scan(input: &[u8]) -> Scan {
    let rare_byte = |b: u8| !(14..0x80).contains(&b) | (b == b'\\');
    let Some(last) = input.len().checked_sub(17) else {
        let rare = input.iter().any(|&b| rare_byte(b));
        let dots = input
            .windows(2)
            .any(|w| w[0] == b'/' && matches!(w[1], b'.' | b'%'));
        return Scan {
            rare,
            dots: rare | dots,
        };
    };
    let (mut rare, mut dots) = (Lanes::zero(), Lanes::zero());
    // The last byte starts no pair and is tested alone.
    any_pair_block(input, last, |a, b| {
        rare = rare | !a.range(14, 0x7f) | a.eq(b'\\');
        dots = dots | (a.eq(b'/') & (b.eq(b'.') | b.eq(b'%')));
        false
    });
    let rare = rare.bits() != 0 || input.last().is_some_and(|&b| rare_byte(b));
    Scan {
        rare,
        dots: rare || dots.bits() != 0,
    }
}

/// Appends the key of `input` to `out`.
pub(super) fn write_key(
    input: &[u8],
    keep_fragments: bool,
    out: &mut Vec<u8>,
    s: &mut W3libScratch,
) -> Result<(), CompatError> {
    let Scan { rare, dots } = scan(input);
    let input = if rare {
        core::str::from_utf8(input)
            .map_err(|e| CompatError::new(e.valid_up_to(), Reason::InvalidUtf8))?
    } else {
        // SAFETY: `rare` is false, so every byte is below 0x80: ASCII, which
        // is UTF-8. (Skipping `from_utf8` saves about 8% of the preset's
        // instructions per URL.)
        #[allow(unsafe_code)]
        unsafe {
            core::str::from_utf8_unchecked(input)
        }
    };
    let mut clean = core::mem::take(&mut s.clean);
    let r = key(
        input,
        Scan { rare, dots },
        keep_fragments,
        out,
        s,
        &mut clean,
    );
    s.clean = clean;
    r
}

fn key(
    input: &str,
    Scan { rare, dots }: Scan,
    keep_fragments: bool,
    out: &mut Vec<u8>,
    s: &mut W3libScratch,
    clean: &mut String,
) -> Result<(), CompatError> {
    // Error offsets point into the input when nothing was removed inside it.
    let lead = c0_space_lead(input);
    let url = strip(input, lead, clean, rare);
    let err = |at: usize, reason: Reason| CompatError::new(lead + at, reason);

    // Scheme: a letter, then letters, digits, `+-.`, then `:`. Most are
    // lowercase already and are used in place; `http:` and `https:`, which
    // start nearly every line, are known by their bytes.
    let b = url.as_bytes();
    let (n, http) = if b.starts_with(b"http:") {
        (4, true)
    } else if b.starts_with(b"https:") {
        (5, true)
    } else {
        (scheme_len(b), false)
    };
    let has_scheme = n > 0 && b.get(n) == Some(&b':');
    let (scheme, rest, rest_at): (&str, &str, usize) = if has_scheme {
        let raw = &url[..n];
        let scheme = if !http && raw.bytes().any(|b| b.is_ascii_uppercase()) {
            s.scheme.clear();
            s.scheme.push_str(raw);
            s.scheme.make_ascii_lowercase();
            s.scheme.as_str()
        } else {
            raw
        };
        (scheme, &url[n + 1..], n + 1)
    } else {
        ("", url, 0)
    };
    // `http` and `https` are special and use params.
    let special = http || is_special(scheme);

    // A special scheme reads `\` as `/` before the query and fragment.
    let rest: &str = if rare && special && rest.as_bytes().contains(&b'\\') {
        let cut = rest.find(['?', '#']).unwrap_or(rest.len());
        s.backslash.clear();
        s.backslash.push_str(&rest[..cut].replace('\\', "/"));
        s.backslash.push_str(&rest[cut..]);
        &s.backslash
    } else {
        rest
    };

    // Authority.
    let (netloc, after) = match rest.strip_prefix("//") {
        Some(r) => {
            let delim = bytes::find(
                r.as_bytes(),
                |v| v.eq(b'/') | v.eq(b'?') | v.eq(b'#'),
                |b| matches!(b, b'/' | b'?' | b'#'),
            )
            .unwrap_or(r.len());
            (&r[..delim], &r[delim..])
        }
        None => ("", rest),
    };
    // The netloc is followed by the rest of the line, so that 16 bytes can
    // often be read from its start.
    let seen = netloc_bytes(
        &rest.as_bytes()[rest.len() - netloc.len() - after.len()..],
        netloc.len(),
    );
    let open_br = seen & SEEN_OPEN != 0;
    if open_br != (seen & SEEN_CLOSE != 0) {
        return Err(err(rest_at, Reason::InvalidIpv6Url));
    }
    if open_br && !bracketed_netloc_ok(netloc) {
        return Err(err(rest_at, Reason::InvalidIpv6Url));
    }
    if seen & SEEN_NON_ASCII != 0 {
        // `_checknetloc`: NFKC must not bring in a new delimiter.
        s.text.clear();
        s.text.extend(
            netloc
                .chars()
                .filter(|c| !matches!(c, '@' | ':' | '#' | '?')),
        );
        s.text2.clear();
        Ucd::V14.nfkc(&s.text, &mut s.text2, &mut s.chars);
        if s.text != s.text2 && s.text2.chars().any(is_netloc_delim) {
            return Err(err(rest_at, Reason::NetlocNfkc));
        }
    }

    // Userinfo, host and port.
    let at_split = (seen & SEEN_AT != 0)
        .then(|| netloc.rsplit_once('@'))
        .flatten();
    let (userinfo, hostinfo) = match at_split {
        Some((u, h)) => (Some(u), h),
        None => (None, netloc),
    };
    let (hostname, port) = if open_br {
        match hostinfo.split_once('[') {
            Some((_, b)) => {
                let (h, p) = b.split_once(']').unwrap_or((b, ""));
                (h, p.split_once(':').map_or("", |(_, p)| p))
            }
            None => ("", ""),
        }
    } else if seen & SEEN_COLON != 0 {
        hostinfo.split_once(':').unwrap_or((hostinfo, ""))
    } else {
        (hostinfo, "")
    };
    let port = if port.is_empty() {
        None
    } else {
        if !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err(rest_at, Reason::InvalidPort));
        }
        let digits = port.trim_start_matches('0');
        if digits.len() > 5 {
            return Err(err(rest_at, Reason::InvalidPort));
        }
        let n: u32 = digits.parse().unwrap_or(0);
        if n > 65535 {
            return Err(err(rest_at, Reason::InvalidPort));
        }
        Some(n)
    };
    // The netloc, made safe. Most are a lowercase host name, which is
    // already what the key holds.
    let plain_host = userinfo.is_none()
        && port.is_none()
        && seen & (SEEN_NON_ASCII | SEEN_OPEN | SEEN_PERCENT | SEEN_UPPER) == 0;
    let netloc: &[u8] = if plain_host {
        hostname.as_bytes()
    } else {
        let bufs = NetlocBufs {
            netloc: &mut s.netloc,
            host: &mut s.host,
            text: &mut s.text,
            text2: &mut s.text2,
            chars: &mut s.chars,
            idna: &mut s.idna,
            tmp: &mut s.tmp,
        };
        safe_netloc(userinfo, hostname, port, seen, bufs).map_err(|r| err(rest_at, r))?;
        &s.netloc
    };

    // The reference makes the path and query safe (percent-encodes what is
    // not in `PATH_SAFEST` / `*_QUERY_SAFEST`) and then decodes and
    // re-encodes both. Both passes are done as one here, on the raw parts:
    // the first pass only adds `%HH` escapes, which the second decodes back
    // to the raw byte, and its `%` is no hex digit, so it can neither form
    // nor break an escape that the raw part has (see `write_path`).
    // `urlunsplit`: scheme, then the authority (or an empty one), then the
    // path, written in place and given its prefix once it is known (the
    // path always starts with `/` after a netloc).
    if http {
        out.extend_from_slice(if n == 4 { b"http:" } else { b"https:" });
    } else {
        write_scheme(scheme, out);
    }
    if !netloc.is_empty() {
        out.extend_from_slice(b"//");
        out.extend_from_slice(netloc);
    }
    let path_at = out.len();
    let params = http || uses_params(scheme);
    let path_len = write_path(after.as_bytes(), params, dots, out, &mut s.tmp);
    let path = &out[path_at..];
    if netloc.is_empty()
        && (path.starts_with(b"//")
            || (!scheme.is_empty() && uses_netloc(scheme) && path[0] == b'/'))
    {
        out.splice(path_at..path_at, *b"//");
    }
    // What follows the path is empty, or starts with its `?` or `#`; the
    // query ends at the first `#`, which `write_query` finds on its way.
    let rest = &after.as_bytes()[path_len..];
    let fragment = match rest.split_first() {
        Some((b'?', query)) => {
            let len = write_query(query, out, &mut s.qdata, &mut s.fields);
            query.get(len + 1..).unwrap_or_default()
        }
        Some((_, fragment)) => fragment,
        None => b"",
    };
    if keep_fragments && !fragment.is_empty() {
        out.push(b'#');
        quote(fragment, &PATH_SAFEST, out);
    }
    Ok(())
}

/// Appends `scheme:` (nothing for no scheme).
fn write_scheme(scheme: &str, out: &mut Vec<u8>) {
    if !scheme.is_empty() {
        out.extend_from_slice(scheme.as_bytes());
        out.push(b':');
    }
}

/// The scratch buffers [`safe_netloc`] writes (borrowed apart from the
/// ones the netloc may point into).
struct NetlocBufs<'a> {
    netloc: &'a mut Vec<u8>,
    host: &'a mut String,
    text: &'a mut String,
    text2: &'a mut String,
    chars: &'a mut Vec<(u32, u8)>,
    idna: &'a mut unicode::IdnaScratch,
    tmp: &'a mut Vec<u8>,
}

/// The netloc made safe, in `s.netloc`: the userinfo decoded and
/// re-encoded, the host lowercased (IDNA-encoded when not ASCII, an IPv6
/// address in its short form), the port as a number.
fn safe_netloc(
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

/// One field of the query, `key=value` (or a bare `key`): offsets into
/// the raw query and, after `write_field`, into the encoded bytes.
#[derive(Clone, Copy)]
pub(super) struct Field {
    /// Raw key `start..eq`, raw value `eq + 1..end` (empty when `eq == end`).
    start: usize,
    eq: usize,
    end: usize,
    /// `key=value` as it is written out, `enc.0..enc.1` of the encoded bytes.
    enc: (usize, usize),
    /// No `%`, `+` or byte that needs an escape: decoded = raw = encoded.
    plain: bool,
}

impl Field {
    fn key<'q>(&self, query: &'q [u8]) -> &'q [u8] {
        &query[self.start..self.eq]
    }

    fn value<'q>(&self, query: &'q [u8]) -> &'q [u8] {
        query.get(self.eq + 1..self.end).unwrap_or_default()
    }
}

/// The query as w3lib writes it: split on `&`, empty fields dropped, each
/// `key=value` decoded (`+` as space), sorted, and encoded with
/// `quote_plus`. The reference first makes the query safe; that pass only
/// adds escapes that the decoding removes again, so the raw query is
/// decoded here (the argument of `write_path`).
///
/// Decoding and re-encoding are one pass (`requote_plus`), and the sort
/// compares the raw fields, decoded on the fly only where an escape or `+`
/// could change the order: nothing is decoded into a buffer. Returns the
/// length of the query: up to its first `#`.
fn write_query(
    query: &[u8],
    out: &mut Vec<u8>,
    enc: &mut Vec<u8>,
    fields: &mut Vec<Field>,
) -> usize {
    enc.clear();
    fields.clear();
    // One search for the reserved bytes splits the fields (`&`), finds
    // their first `=`, tells the plain ones (no other reserved byte) and
    // finds the `#` that ends the query: most bytes are unreserved, and the
    // search stops about twice a field. Once a field is known not to be
    // plain, its escapes are passed over.
    let (mut start, mut eq, mut plain) = (0, None, true);
    let mut i = 0;
    let len = loop {
        let rest = &query[i..];
        i += if plain {
            bytes::find(rest, reserved_lanes, |b| RESERVED[b as usize])
        } else if eq.is_none() {
            bytes::find(
                rest,
                |v| v.eq(b'&') | v.eq(b'=') | v.eq(b'#'),
                |b| matches!(b, b'&' | b'=' | b'#'),
            )
        } else {
            bytes::find(
                rest,
                |v| v.eq(b'&') | v.eq(b'#'),
                |b| matches!(b, b'&' | b'#'),
            )
        }
        .unwrap_or(rest.len());
        match query.get(i) {
            None | Some(b'&' | b'#') => {
                if i > start {
                    let field = (start, eq.unwrap_or(i), i);
                    fields.push(write_field(query, field, plain, enc));
                }
                if query.get(i) != Some(&b'&') {
                    break i;
                }
                (start, eq, plain) = (i + 1, None, true);
            }
            Some(b'=') if eq.is_none() => eq = Some(i),
            Some(_) => plain = false,
        }
        i += 1;
    };
    if fields.len() < 2 {
        // `enc` holds the field (if any) and a `&`.
        if !fields.is_empty() {
            out.push(b'?');
            out.extend_from_slice(&enc[..enc.len() - 1]);
        }
        return len;
    }
    fields.sort_unstable_by(|a, b| cmp_fields(query, a, b));
    for (n, f) in fields.iter().enumerate() {
        out.push(if n == 0 { b'?' } else { b'&' });
        out.extend_from_slice(&enc[f.enc.0..f.enc.1]);
    }
    len
}

/// Appends the field `(start, eq, end)` of `query` (its `=` at `eq`, or
/// `eq == end`) to `enc`, encoded as `key=value&` (an empty value keeps
/// its `=`, as `urlencode` writes it). A `plain` field has no reserved
/// byte but its `=`: decoding and `quote_plus` leave it as it is.
fn write_field(
    query: &[u8],
    (start, eq, end): (usize, usize, usize),
    plain: bool,
    enc: &mut Vec<u8>,
) -> Field {
    let e0 = enc.len();
    if plain {
        enc.extend_from_slice(&query[start..end]);
        if eq == end {
            enc.push(b'=');
        }
    } else {
        requote_plus(&query[start..eq], enc);
        enc.push(b'=');
        requote_plus(&query[(eq + 1).min(end)..end], enc);
    }
    let e1 = enc.len();
    enc.push(b'&');
    Field {
        start,
        eq,
        end,
        enc: (e0, e1),
        plain,
    }
}

/// The order of Python's sort of `(key, value)` byte tuples, on the
/// decoded fields.
fn cmp_fields(query: &[u8], a: &Field, b: &Field) -> Ordering {
    let (ka, va, kb, vb) = (a.key(query), a.value(query), b.key(query), b.value(query));
    if a.plain && b.plain {
        return cmp_bytes(ka, kb).then_with(|| cmp_bytes(va, vb));
    }
    cmp_decoded(ka, kb).then_with(|| cmp_decoded(va, vb))
}

/// The length of the common prefix of `a` and `b`.
#[inline(always)]
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// `a.cmp(b)` in a loop: keys and values are a few bytes long and differ
/// early, where `memcmp`'s call costs more than the comparison.
fn cmp_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let d = common_prefix(a, b);
    match (a.get(d), b.get(d)) {
        (Some(x), Some(y)) => x.cmp(y),
        _ => a.len().cmp(&b.len()),
    }
}

/// `unquote_plus(a).cmp(unquote_plus(b))`. Where the raw strings first
/// differ, at `d`, the decoded ones differ in the same bytes unless an
/// escape or `+` is at `d` or an escape started just before it (its `%` at
/// `d - 1` or `d - 2`): before `d` both decode alike. Only then are the
/// two decoded byte by byte.
fn cmp_decoded(a: &[u8], b: &[u8]) -> Ordering {
    let d = common_prefix(a, b);
    let near = |s: &[u8]| {
        let (from, to) = (d.saturating_sub(2), (d + 1).min(s.len()));
        s[from..to].iter().any(|&c| c == b'%' || c == b'+')
    };
    if near(a) || near(b) {
        decoded(a).cmp(decoded(b))
    } else {
        cmp_bytes(&a[d..], &b[d..])
    }
}

/// The bytes of `unquote_plus(raw)`, decoded one at a time: the sort
/// compares fields that seldom share more than a few bytes.
fn decoded(raw: &[u8]) -> impl Iterator<Item = u8> + '_ {
    let mut i = 0;
    core::iter::from_fn(move || {
        let b = *raw.get(i)?;
        if let Some(d) = escape_at(raw, i) {
            i += 3;
            return Some(d);
        }
        i += 1;
        Some(if b == b'+' { b' ' } else { b })
    })
}

/// Appends the final path of `after` (what follows the authority) to
/// `out`: decoded and re-encoded, dot segments resolved, then the
/// `;params` of the last segment (with `params`) as the first pass made
/// them safe. Returns the length of the raw path: it ends at the first `?`
/// or `#`, which the re-encoding finds on its way. Without `dots` (see
/// [`Scan`]) the path has no dot segment.
///
/// `requote_path` of the raw path equals the reference's second pass over
/// its first: a byte the first pass escapes is decoded back and escaped
/// again unless it is path-safe (`[`, `]`, `|`), which is what the raw
/// byte gets; `/` and `;` are never escaped, so segments and params are
/// where they were.
fn write_path(
    after: &[u8],
    params: bool,
    dots: bool,
    out: &mut Vec<u8>,
    tmp: &mut Vec<u8>,
) -> usize {
    let at = out.len();
    let (len, semicolon) = requote_path(after, out);
    let path = &after[..len];
    // Most paths have no `;`; one that has params is re-encoded without them.
    let params_at = if params && semicolon {
        let from = path.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
        path[from..]
            .iter()
            .position(|&b| b == b';')
            .map(|i| from + i)
    } else {
        None
    };
    if let Some(p) = params_at {
        out.truncate(at);
        requote_path(&path[..p], out);
    }
    if out.len() == at {
        // `urlunsplit` gives an empty path of a URL with a netloc or query a
        // `/`, and w3lib's `path or "/"` does it otherwise.
        out.push(b'/');
    }
    if dots && out[at] == b'/' {
        remove_dot_segments(out, at, tmp);
    }
    // Empty params (a trailing `;`) vanish: `urlunparse` tests `if params`.
    if let Some(p) = params_at.filter(|&p| p + 1 < path.len()) {
        quote(&path[p..], &PATH_SAFEST, out);
    }
    len
}

/// `quote_plus(unquote_plus(raw))` in one pass: unreserved bytes as they
/// are, a space (raw, `+` or `%20`) as `+`, every other byte as `%HH` (a
/// `%` that starts no escape is a literal one: `%25`). As in the path, the
/// bytes written as they are (unreserved ones, `+`, escapes kept as they
/// are) are copied in one piece, from `from`, when a byte that changes or
/// the end is reached.
fn requote_plus(raw: &[u8], out: &mut Vec<u8>) {
    let mut from = 0;
    let mut i = bytes::find(raw, reserved_lanes, |b| RESERVED[b as usize]).unwrap_or(raw.len());
    while let Some(&b) = raw.get(i) {
        match kept_escapes(&raw[i..], &QUERY_KEPT) {
            0 if b == b'+' => i += 1,
            0 => {
                out.extend_from_slice(&raw[from..i]);
                let (byte, len) = match escape_at(raw, i) {
                    Some(d) => (d, 3),
                    None => (b, 1),
                };
                i += len;
                from = i;
                if UNRESERVED[byte as usize] {
                    out.push(byte);
                } else if byte == b' ' {
                    out.push(b'+');
                } else {
                    push_escape(byte, out);
                }
            }
            n => i += n,
        }
        i = skip_plain(raw, i, &RESERVED, reserved_lanes);
    }
    out.extend_from_slice(&raw[from..i]);
}

/// Lowercases `netloc[host_at..]` the way `str.lower()` does.
fn lower_host_part(netloc: &mut Vec<u8>, host_at: usize, text: &mut String) {
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

/// `_quote(_unquotepath(path), _PATH_SAFE_CHARS)`: decodes every escape
/// except `%25`, `%2F`, `%3B` and `%3F` (kept, with uppercase hex), then
/// escapes what is not path-safe, with uppercase hex. The path is `p` up
/// to its first `?` or `#`; returns its length and whether it has a `;`.
///
/// An escape never reaches past the path: its two hex digits would have to
/// be `?` or `#`.
fn requote_path(p: &[u8], out: &mut Vec<u8>) -> (usize, bool) {
    let mut semicolon = false;
    // The bytes written as they are (plain ones, `;`, escapes kept as they
    // are) are copied in one piece, from `from`, when a byte that changes or
    // the end is reached: one copy for most paths, and few for those full of
    // escapes (`%D8%A7%D9%84-%D8...`).
    let mut from = 0;
    // Most of a path is plain: the first search goes 16 bytes at a time.
    let mut i = bytes::find(p, path_stop_lanes, |b| PATH_STOP[b as usize]).unwrap_or(p.len());
    while let Some(&b) = p.get(i) {
        match b {
            b'?' | b'#' => break,
            b';' => {
                semicolon = true;
                i += 1;
            }
            b'%' => match kept_escapes(&p[i..], &PATH_KEPT) {
                0 => {
                    out.extend_from_slice(&p[from..i]);
                    i += requote_escape(p, i, out);
                    from = i;
                }
                n => i += n,
            },
            // A plain byte that `path_stop_lanes` flags too.
            _ if !PATH_STOP[b as usize] => i += 1,
            // Any other stop is neither plain nor `%`: not path-safe.
            _ => {
                out.extend_from_slice(&p[from..i]);
                push_escape(b, out);
                i += 1;
                from = i;
            }
        }
        i = skip_plain(p, i, &PATH_STOP, path_stop_lanes);
    }
    out.extend_from_slice(&p[from..i]);
    (i, semicolon)
}

/// The first position from `i` on of a byte of `data` in `stop` (`lanes`
/// being the same test on 16 bytes, or a little more), or the end. The
/// first bytes are tested one at a time: after an escape the plain run is
/// often short (a word between escapes), shorter than a 16-byte test costs.
#[inline(always)]
fn skip_plain(data: &[u8], i: usize, stop: &Set, lanes: impl Fn(Lanes) -> Lanes) -> usize {
    const SHORT: usize = 4;
    let rest = data.get(i..).unwrap_or_default();
    for (n, &b) in rest.iter().take(SHORT).enumerate() {
        if stop[b as usize] {
            return i + n;
        }
    }
    match rest.get(SHORT..) {
        Some(tail) => {
            i + SHORT + bytes::find(tail, lanes, |b| stop[b as usize]).unwrap_or(tail.len())
        }
        None => data.len(),
    }
}

/// The path bytes an escape is decoded to: the path-safe ones but `%`, `/`,
/// `;` and `?`, whose escapes are kept.
const PATH_DECODED: Set = set(b":[]@!$&'()*+,=|", b"");
/// The bytes whose escapes the path keeps.
const PATH_KEPT: Set = not(&PATH_DECODED);

/// The `%` at `p[i]` as the path pass writes it: an escape decoded (or kept
/// or re-escaped, with uppercase hex), or a literal `%`. Returns the bytes
/// read.
#[inline(always)]
fn requote_escape(p: &[u8], i: usize, out: &mut Vec<u8>) -> usize {
    let Some((h, l)) = escape_digits(p, i) else {
        out.push(b'%');
        return 1;
    };
    let d = h << 4 | l;
    if PATH_DECODED[d as usize] {
        out.push(d);
    } else {
        // The same escape, its digits in uppercase.
        out.extend_from_slice(&[b'%', HEX_UPPER[h as usize], HEX_UPPER[l as usize]]);
    }
    3
}

/// w3lib's `_remove_dot_segments` on `path[at..]`, which starts with `/`:
/// a `..` drops the last kept segment (none above the root), a trailing `.`
/// or `..` leaves the path ending in `/`.
fn remove_dot_segments(path: &mut Vec<u8>, at: usize, tmp: &mut Vec<u8>) {
    if !has_dot_segment(&path[at..]) {
        return;
    }
    // Kept segments are stored in `tmp`, each with its leading `/`; a `..`
    // truncates back to the previous `/`.
    tmp.clear();
    let mut segs = path[at + 1..].split(|&b| b == b'/').peekable();
    while let Some(seg) = segs.next() {
        let last = segs.peek().is_none();
        match seg {
            b".." | b"." => {
                if seg == b".." {
                    let cut = tmp.iter().rposition(|&b| b == b'/').unwrap_or(0);
                    tmp.truncate(cut);
                }
                if last {
                    tmp.push(b'/');
                }
            }
            _ => {
                tmp.push(b'/');
                tmp.extend_from_slice(seg);
            }
        }
    }
    path.truncate(at);
    path.extend_from_slice(tmp);
}

/// Does `path` hold a `/.`? Tested 16 byte pairs at a time: most paths
/// have dots, in file names, but no dot segment, and `memchr` stopped at
/// each dot.
fn has_dot_segment(path: &[u8]) -> bool {
    let Some(last) = path.len().checked_sub(17) else {
        return path.windows(2).any(|w| w == b"/.");
    };
    any_pair_block(path, last, |a, b| (a.eq(b'/') & b.eq(b'.')).bits() != 0)
}

/// Calls `f` on the 16 bytes at `at` and the 16 one byte on, for `at` =
/// 0, 16, 32, ... and last `last` = `s.len() - 17` (overlapping the block
/// before), so that every byte pair of `s` starts in one of them; stops
/// when `f` says so, and tells whether it did. (Written as a loop: an
/// iterator chain here cost 6% more instructions over the ISCX list.)
#[inline(always)]
fn any_pair_block(s: &[u8], last: usize, mut f: impl FnMut(Lanes, Lanes) -> bool) -> bool {
    let mut j = 0;
    loop {
        let at = j.min(last);
        let (Some(a), Some(b)) = (
            s.get(at..).and_then(<[u8]>::first_chunk::<16>),
            s.get(at + 1..).and_then(<[u8]>::first_chunk::<16>),
        ) else {
            return false;
        };
        if f(Lanes::load(a), Lanes::load(b)) {
            return true;
        }
        if at == last {
            return false;
        }
        j += 16;
    }
}

/// `_normalize_ipv6_host`: the first `[...]` of the netloc, if it is an
/// IPv6 address, printed the way `ipaddress` prints it.
fn normalize_ipv6_host(netloc: &mut Vec<u8>, tmp: &mut Vec<u8>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn predicates_agree_with_their_tables() {
        for b in 0..=255u8 {
            let v = Lanes::load(&[b; 16]);
            // The lanes flag every stop, and no other byte but `$=]|`.
            let flagged = path_stop_lanes(v).bits() != 0;
            let want = PATH_STOP[b as usize] || b"$=]|".contains(&b);
            assert_eq!(flagged, want, "{b:#x}");
            assert_eq!(
                reserved_lanes(v).bits() != 0,
                RESERVED[b as usize],
                "{b:#x}"
            );
        }
    }

    #[test]
    fn dot_segments_found_at_every_offset() {
        for len in 0..48 {
            for at in 0..len.max(1) {
                let mut path = vec![b'a'; len];
                if at + 1 < len {
                    path[at] = b'/';
                    path[at + 1] = b'.';
                }
                let naive = path.windows(2).any(|w| w == b"/.");
                assert_eq!(has_dot_segment(&path), naive, "{len} {at}");
            }
        }
    }
}
