//! Percent-encoding (RFC 3986 §2.1): decoding, and encoding of the bytes a
//! component does not allow.
//!
//! Decoding is always explicit: the parser and the component model keep
//! every component encoded exactly as written.

use core::fmt;

use super::table;

/// A `%` that is not followed by two hexadecimal digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Offset of the offending `%`.
    pub index: usize,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid percent-encoding at byte {}", self.index)
    }
}

impl std::error::Error for DecodeError {}

/// Decodes every `pct-encoded` triplet of `s` into its octet and appends the
/// result to `out`. Other bytes are copied as they are.
///
/// # Errors
/// [`DecodeError`] when a `%` is not followed by two hex digits; `out` then
/// holds the bytes decoded so far.
///
/// ```
/// let mut out = Vec::new();
/// urikey::uri::pct::decode_into(b"%41%4a%43%4B", &mut out)?;
/// assert_eq!(out, b"AJCK");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn decode_into(s: &[u8], out: &mut Vec<u8>) -> Result<(), DecodeError> {
    let mut i = 0;
    while let Some(p) = memchr::memchr(b'%', &s[i..]) {
        let at = i + p;
        out.extend_from_slice(&s[i..at]);
        match (
            s.get(at + 1).and_then(|&b| hex_value(b)),
            s.get(at + 2).and_then(|&b| hex_value(b)),
        ) {
            (Some(hi), Some(lo)) => out.push(hi << 4 | lo),
            _ => return Err(DecodeError { index: at }),
        }
        i = at + 3;
    }
    out.extend_from_slice(&s[i..]);
    Ok(())
}

/// Decodes `s` into a new vector; see [`decode_into`].
///
/// # Errors
/// [`DecodeError`] when a `%` is not followed by two hex digits.
pub fn decode(s: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::with_capacity(s.len());
    decode_into(s, &mut out)?;
    Ok(out)
}

/// The escape `%XX` (upper-case hex, §2.1) of `b`.
#[inline]
pub const fn encoded(b: u8) -> [u8; 3] {
    [
        b'%',
        HEX_UPPER[(b >> 4) as usize],
        HEX_UPPER[(b & 15) as usize],
    ]
}

/// Appends `%XX` (upper-case hex) for `b`.
#[inline]
pub fn push_encoded(b: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(&encoded(b));
}

/// Appends `s` to `out`, percent-encoding every byte that is not in the
/// class `mask` (see [`table`]). A `%` is kept only when it starts a valid
/// `pct-encoded` triplet, so text that is already encoded stays as it is
/// and a stray `%` becomes `%25`.
pub fn encode_into(s: &[u8], mask: u8, out: &mut Vec<u8>) {
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        if table::is(b, mask) {
            out.push(b);
        } else if b == b'%' && is_triplet(s, i) {
            out.extend_from_slice(&s[i..i + 3]);
            i += 3;
            continue;
        } else {
            push_encoded(b, out);
        }
        i += 1;
    }
}

/// Appends `s` to `out`, percent-encoding every byte that is not in the
/// class `mask`, `%` included: use this for decoded text.
pub fn encode_all_into(s: &[u8], mask: u8, out: &mut Vec<u8>) {
    for &b in s {
        if table::is(b, mask) {
            out.push(b);
        } else {
            push_encoded(b, out);
        }
    }
}

/// True when `s[i..]` starts with `%` and two hex digits.
#[inline]
pub fn is_triplet(s: &[u8], i: usize) -> bool {
    i + 2 < s.len()
        && s[i] == b'%'
        && table::is(s[i + 1], table::HEXDIG)
        && table::is(s[i + 2], table::HEXDIG)
}

/// The value of a hexadecimal digit, or `None`.
#[inline(always)]
pub const fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Upper-case hexadecimal digits, for writing `%XX`.
pub const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Lower-case hexadecimal digits (IPv6 text, `hash` keys).
pub const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uri::table::{PATH, PCHAR};

    #[test]
    fn decode_basics() {
        assert_eq!(decode(b"a%20b").unwrap(), b"a b");
        assert_eq!(decode(b"%e2%82%AC").unwrap(), "€".as_bytes());
        assert_eq!(decode(b"%ff").unwrap(), [0xff]);
        assert_eq!(decode(b"100%"), Err(DecodeError { index: 3 }));
        assert_eq!(decode(b"%4"), Err(DecodeError { index: 0 }));
        assert_eq!(decode(b"ab%zz"), Err(DecodeError { index: 2 }));
    }

    #[test]
    fn encode_keeps_valid_triplets_and_escapes_the_rest() {
        let mut out = Vec::new();
        encode_into(b"a b/%41%zz?", PCHAR, &mut out);
        assert_eq!(out, b"a%20b%2F%41%25zz%3F");
        out.clear();
        encode_into("é/x".as_bytes(), PATH, &mut out);
        assert_eq!(out, b"%C3%A9/x");
        out.clear();
        encode_all_into(b"50%/", PCHAR, &mut out);
        assert_eq!(out, b"50%25%2F");
    }
}
