//! Percent-escapes: reading `%HH`, runs of escapes written back as they
//! are, decoding the userinfo, and finding the end of a plain run.

use crate::uri::compat::bytes::{self, Set, HEX_UPPER};
use crate::uri::lanes::Lanes;
use crate::uri::pct;

/// [`pct::hex_value`] of every byte, 0xff for the bytes that are not hex
/// digits: one lookup per digit, no branch.
pub(super) const HEX_VALUE: [u8; 256] = {
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
pub(super) fn kept_escapes(s: &[u8], kept: &Set) -> usize {
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
pub(super) fn escape_digits(s: &[u8], i: usize) -> Option<(u8, u8)> {
    let (Some(&h), Some(&l)) = (s.get(i + 1), s.get(i + 2)) else {
        return None;
    };
    let (h, l) = (HEX_VALUE[h as usize], HEX_VALUE[l as usize]);
    ((h | l) < 16).then_some((h, l))
}

/// The `%HH` at `s[i..]`, if `s[i]` is `%` and two hex digits follow.
#[inline(always)]
pub(super) fn escape_at(s: &[u8], i: usize) -> Option<u8> {
    if s.get(i) != Some(&b'%') {
        return None;
    }
    escape_digits(s, i).map(|(h, l)| h << 4 | l)
}

/// Percent-decoding (of the userinfo), appended to `out`. The bytes
/// between two `%` are copied as one run.
pub(super) fn unquote(s: &[u8], out: &mut Vec<u8>) {
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

/// The first position from `i` on of a byte of `data` in `stop` (`lanes`
/// being the same test on 16 bytes, or a little more), or the end. The
/// first bytes are tested one at a time: after an escape the plain run is
/// often short (a word between escapes), shorter than a 16-byte test costs.
#[inline(always)]
pub(super) fn skip_plain(
    data: &[u8],
    i: usize,
    stop: &Set,
    lanes: impl Fn(Lanes) -> Lanes,
) -> usize {
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
