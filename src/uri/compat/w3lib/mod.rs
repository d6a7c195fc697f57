//! `w3lib.url.canonicalize_url(url)` of w3lib 2.5.0 (default arguments,
//! optionally `keep_fragments=True`), on CPython 3.11.
//!
//! The steps follow the reference's order, because its quirks come from
//! the order: the URL is split WHATWG-style, every part is made "safe"
//! (percent-encoded with a per-part set), and only then is the query
//! decoded, sorted and re-encoded and the path decoded and re-encoded.
//!
//! This file holds the steps in that order (`key`); each part's work is a
//! module of its own: `sets` (the byte sets of the quoting passes),
//! `escapes` (reading and writing `%HH`), `scheme`, `netloc`, `path` and
//! `query`.

mod escapes;
mod netloc;
mod path;
mod query;
mod scheme;
mod sets;

pub(super) use query::Field;

use netloc::{
    bracketed_netloc_ok, is_netloc_delim, netloc_bytes, safe_netloc, NetlocBufs, SEEN_AT,
    SEEN_CLOSE, SEEN_COLON, SEEN_NON_ASCII, SEEN_OPEN, SEEN_PERCENT, SEEN_UPPER,
};
use path::{any_pair_block, write_path};
use query::write_query;
use scheme::{is_special, scheme_len, uses_netloc, uses_params};
use sets::PATH_SAFEST;

use super::bytes::{self, quote};
use super::unicode::Ucd;
use super::{CompatError, Reason, W3libScratch};
use crate::uri::lanes::Lanes;

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
