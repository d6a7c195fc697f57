//! Lenient input: maps a dirty crawl line to a URI-reference candidate the
//! way RFC 3987 §3.1 maps an IRI to a URI, before the strict parser runs.
//!
//! The mapping, in order:
//!
//! 1. trim surrounding ASCII whitespace (space, TAB, LF, FF, CR);
//! 2. drop TAB, CR and LF inside the line (they come from line wrapping);
//! 3. percent-encode, as `%XX` with upper-case hex, every byte outside the
//!    URI character set (`unreserved / reserved / "%"`, §2): non-ASCII
//!    octets (UTF-8 or not), controls, space, `" < > \ ^ `` ` `` { | }`;
//! 4. a `%` not followed by two hex digits becomes `%25`;
//! 5. `[` and `]` are kept only as the brackets of an IP-literal at the
//!    start of the host; anywhere else they are encoded;
//! 6. every `#` after the first becomes `%23`.
//!
//! A line that is already a valid URI-reference is left exactly as it is
//! (none of the steps applies to it), so lenient reading never rejects a
//! line that strict reading accepts, nor gives it another key. The mapping
//! keeps, for every output byte, the offset of the input byte it came from,
//! so that errors point into the original line.

use super::pct;
use super::table::{self, HEXDIG};

/// Reusable buffers for [`map`].
#[derive(Default, Debug, Clone)]
pub struct LenientScratch {
    clean: Vec<u8>,
    clean_origin: Vec<u32>,
    out: Vec<u8>,
    origin: Vec<u32>,
}

impl LenientScratch {
    /// The output of the last [`map`] that returned `true`.
    pub fn mapped(&self) -> &[u8] {
        &self.out
    }

    /// The offset in the original line of byte `index` of the last mapped
    /// output (`index` may equal the output length: the end of the line's
    /// content).
    pub fn origin(&self, index: usize) -> usize {
        self.origin.get(index).map_or(0, |&o| o as usize)
    }
}

/// Bytes that may appear literally in a URI (§2): `unreserved`,
/// `reserved` and `%`.
#[inline]
fn is_uri_char(b: u8) -> bool {
    table::is(
        b,
        table::UNRESERVED
            | table::SUB_DELIMS
            | table::COLON
            | table::AT
            | table::SLASH
            | table::QUESTION,
    ) || matches!(b, b'#' | b'[' | b']' | b'%')
}

#[inline]
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// Where the brackets of an IP-literal may stand, and where the fragment
/// starts.
struct Layout {
    /// Index of a `[` that opens an IP-literal host, or `usize::MAX`.
    open: usize,
    /// Index of the `]` that closes it, or `usize::MAX`.
    close: usize,
    /// Index of the first `#`, or `usize::MAX`.
    hash: usize,
}

impl Layout {
    fn of(s: &[u8]) -> Layout {
        let hash = memchr::memchr(b'#', s).unwrap_or(usize::MAX);
        let mut layout = Layout {
            open: usize::MAX,
            close: usize::MAX,
            hash,
        };
        let head = memchr::memchr3(b'/', b'?', b'#', s).unwrap_or(s.len());
        let mut pos = 0;
        if let Some(colon) = memchr::memchr(b':', &s[..head]) {
            pos = colon + 1;
        }
        if !s[pos..].starts_with(b"//") {
            return layout;
        }
        let start = pos + 2;
        let end = start + memchr::memchr3(b'/', b'?', b'#', &s[start..]).unwrap_or(s.len() - start);
        let host = memchr::memchr(b'@', &s[start..end]).map_or(start, |at| start + at + 1);
        if s.get(host) == Some(&b'[') && host < end {
            layout.open = host;
            if let Some(c) = memchr::memchr(b']', &s[host..end]) {
                layout.close = host + c;
            }
        }
        layout
    }

    /// Must byte `i` of `s` be percent-encoded?
    #[inline]
    fn must_encode(&self, s: &[u8], i: usize) -> bool {
        let b = s[i];
        match b {
            b'%' => {
                !(i + 2 < s.len() && table::is(s[i + 1], HEXDIG) && table::is(s[i + 2], HEXDIG))
            }
            b'[' => i != self.open,
            b']' => i != self.close,
            b'#' => i != self.hash,
            _ => !is_uri_char(b),
        }
    }
}

/// Maps `input` leniently. Returns `false` when the line needs no mapping
/// (use it as it is), or `true` when the mapped bytes are in `scratch`
/// ([`LenientScratch::mapped`]) together with their origins
/// ([`LenientScratch::origin`]).
pub fn map(input: &[u8], scratch: &mut LenientScratch) -> bool {
    let start = input
        .iter()
        .position(|&b| !is_space(b))
        .unwrap_or(input.len());
    let end = input
        .iter()
        .rposition(|&b| !is_space(b))
        .map_or(start, |p| p + 1);
    let trimmed = &input[start..end];
    let has_breaks = memchr::memchr3(b'\t', b'\r', b'\n', trimmed).is_some();
    if start == 0 && end == input.len() && !has_breaks {
        let layout = Layout::of(input);
        if !(0..input.len()).any(|i| layout.must_encode(input, i)) {
            return false;
        }
    }

    let LenientScratch {
        clean,
        clean_origin,
        out,
        origin,
    } = scratch;
    clean.clear();
    clean_origin.clear();
    for (i, &b) in trimmed.iter().enumerate() {
        if !matches!(b, b'\t' | b'\r' | b'\n') {
            clean.push(b);
            clean_origin.push((start + i) as u32);
        }
    }
    clean_origin.push(end as u32);

    out.clear();
    origin.clear();
    let layout = Layout::of(clean);
    for i in 0..clean.len() {
        let b = clean[i];
        let o = clean_origin[i];
        if layout.must_encode(clean, i) {
            pct::push_encoded(b, out);
            origin.extend_from_slice(&[o, o, o]);
        } else {
            out.push(b);
            origin.push(o);
        }
    }
    origin.push(end as u32);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lenient(s: &[u8]) -> Option<String> {
        let mut scratch = LenientScratch::default();
        map(s, &mut scratch).then(|| String::from_utf8(scratch.mapped().to_vec()).unwrap())
    }

    #[test]
    fn valid_lines_need_no_mapping() {
        for s in [
            "http://a/b?c#d",
            "http://[::1]:80/",
            "//[v1.x]/",
            "a:b",
            "",
            "%41",
            "?#",
        ] {
            assert_eq!(lenient(s.as_bytes()), None, "{s}");
        }
    }

    #[test]
    fn maps_dirty_lines() {
        let cases: &[(&[u8], &str)] = &[
            (b"  http://a/b c\r\n", "http://a/b%20c"),
            (b"http://a/\tb\nc", "http://a/bc"),
            (
                "http://bücher.de/ü".as_bytes(),
                "http://b%C3%BCcher.de/%C3%BC",
            ),
            (b"http://a/\xff", "http://a/%FF"),
            (b"http://a/%zz%4", "http://a/%25zz%254"),
            (b"http://a/[x]?[y]#[z]", "http://a/%5Bx%5D?%5By%5D#%5Bz%5D"),
            (b"http://u[@[::1]/", "http://u%5B@[::1]/"),
            (b"http://a/#b#c", "http://a/#b%23c"),
            (
                b"http://a/{|}^`\\\"<>",
                "http://a/%7B%7C%7D%5E%60%5C%22%3C%3E",
            ),
            (b"http://a/\x01", "http://a/%01"),
        ];
        for (input, want) in cases {
            assert_eq!(
                lenient(input).as_deref(),
                Some(*want),
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn origins_point_into_the_input() {
        let mut scratch = LenientScratch::default();
        assert!(map(b"  a\tb c ", &mut scratch));
        let out = scratch.mapped().to_vec();
        assert_eq!(out, b"ab%20c");
        let origins: Vec<usize> = (0..=out.len()).map(|i| scratch.origin(i)).collect();
        assert_eq!(origins, [2, 4, 5, 5, 5, 6, 7]);
    }
}
