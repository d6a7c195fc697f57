//! The mask tier: the key of a line of up to [`MAX_LEN`]
//! bytes read from bit masks of its byte classes, for the shapes most
//! crawl lines have.
//!
//! Most lines of a crawl dump are their own key (69% of the lines of the
//! 1 GiB gen-crawl dump), and most of the others differ by a case, a
//! default port or an escape. For those, what [`FastWriter::key`] does
//! is mostly checking: one scan per component and a branch at every stop,
//! about 350 instructions for a line that needs no change. Here the
//! classes of every byte of the line are known at once, one bit per byte
//! and class ([`LineMasks`], built 64 bytes an instruction by the
//! `simd512` module); the line is cut into its parts at the lowest bits of
//! the delimiter masks, each part is checked against its class with one
//! AND, and the edits are made from the masks: scheme and host case, an
//! empty or default port, the `/` of an empty path, escapes to decode or
//! upper-case, dot segments.
//!
//! Anything else (userinfo, an IP literal, an escape in the host, an
//! escaped `.` where dot segments go, port zeros, an empty query the rules
//! remove, a longer line) is left to the writer, which reads the line from
//! the start: so this tier gives the writer's key or none, never another
//! one. The tests check it against the writer on every line they have.

use super::scalar::{hex, CLASSES, F_HOST_ANY, F_PATH_PLAIN, F_QUERY_PLAIN, LOWER_HEX};
use super::{escape_at, scheme_of, FastWriter, Written};
use crate::uri::normalize::strip_port_zeros;
use crate::uri::path::remove_dot_segments_in_place;
use crate::uri::{pct, scheme, table};

/// The longest line the mask tier reads: two 64-byte blocks. Nine lines in ten
/// of the crawl dumps are this short (median 72 bytes).
pub(in crate::uri::key) const MAX_LEN: usize = 128;

/// Mask bit of an unreserved host byte in either case (`F_HOST_ANY`).
pub(in crate::uri::key) const M_HOST: u8 = 1;
/// Mask bit of a path byte other than `%` (`F_PATH_PLAIN` and `.`).
pub(in crate::uri::key) const M_PATH: u8 = 2;
/// Mask bit of a query or fragment byte other than `%` (`F_QUERY_PLAIN`).
pub(in crate::uri::key) const M_QUERY: u8 = 4;
/// Mask bit of `/`.
pub(in crate::uri::key) const M_SLASH: u8 = 8;
/// Mask bit of `?`.
pub(in crate::uri::key) const M_QUESTION: u8 = 16;
/// Mask bit of `#`.
pub(in crate::uri::key) const M_HASH: u8 = 32;
/// Mask bit of `.`.
pub(in crate::uri::key) const M_DOT: u8 = 64;
/// Mask bit of `:`.
pub(in crate::uri::key) const M_COLON: u8 = 128;

/// The mask bits of each ASCII byte; every byte from 128 up has none (no
/// class of the fast tier holds a byte outside ASCII).
pub(in crate::uri::key) const MASK_BITS: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let class = CLASSES[b];
        let mut bits = 0;
        if class & F_HOST_ANY != 0 {
            bits |= M_HOST;
        }
        if class & F_PATH_PLAIN != 0 || b == b'.' as usize {
            bits |= M_PATH;
        }
        if class & F_QUERY_PLAIN != 0 {
            bits |= M_QUERY;
        }
        bits |= match b as u8 {
            b'/' => M_SLASH,
            b'?' => M_QUESTION,
            b'#' => M_HASH,
            b'.' => M_DOT,
            b':' => M_COLON,
            _ => 0,
        };
        t[b] = bits;
        b += 1;
    }
    t
};

/// Per class, bit `i` is set when byte `i` of the line is in it. Bits at
/// and past the line's end are clear.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(in crate::uri::key) struct LineMasks {
    pub host: u128,
    pub path: u128,
    pub query: u128,
    pub slash: u128,
    pub question: u128,
    pub hash: u128,
    pub dot: u128,
    pub colon: u128,
    /// `0-9`.
    pub digit: u128,
    /// `A-Z`.
    pub upper: u128,
    /// `%`.
    pub percent: u128,
    /// Bits `0..len`: the line's bytes.
    pub line: u128,
}

impl LineMasks {
    /// The masks of `s`, byte by byte (`None` past [`MAX_LEN`]): the
    /// reference the SIMD builder is tested against.
    #[cfg(test)]
    pub(in crate::uri::key) fn of(s: &[u8]) -> Option<Self> {
        if s.len() > MAX_LEN {
            return None;
        }
        let mut m = Self {
            line: line_bits(s.len()),
            ..Self::default()
        };
        for (i, &b) in s.iter().enumerate() {
            let bits = MASK_BITS.get(usize::from(b)).copied().unwrap_or(0);
            let at = |bit: u8| u128::from(bits & bit != 0) << i;
            m.host |= at(M_HOST);
            m.path |= at(M_PATH);
            m.query |= at(M_QUERY);
            m.slash |= at(M_SLASH);
            m.question |= at(M_QUESTION);
            m.hash |= at(M_HASH);
            m.dot |= at(M_DOT);
            m.colon |= at(M_COLON);
            m.digit |= u128::from(b.is_ascii_digit()) << i;
            m.upper |= u128::from(b.is_ascii_uppercase()) << i;
            m.percent |= u128::from(b == b'%') << i;
        }
        Some(m)
    }
}

/// Bits `0..len` (`len` at most [`MAX_LEN`]).
#[inline(always)]
pub(in crate::uri::key) fn line_bits(len: usize) -> u128 {
    u128::MAX
        .checked_shr(MAX_LEN.saturating_sub(len) as u32)
        .unwrap_or(0)
}

/// For each byte value, 0x20 in the bytes of a word whose bit is set in
/// it: the case bits of the letters that an 8-bit slice of a mask marks.
const CASE_BITS: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut bits = 0;
    while bits < 256 {
        let mut k = 0;
        while k < 8 {
            if bits >> k & 1 != 0 {
                t[bits] |= 0x20 << (8 * k);
            }
            k += 1;
        }
        bits += 1;
    }
    t
};

/// Appends `s[..end]` to `out` with the upper-case letters at the bits of
/// `upper` lower-cased, eight bytes at a time (the last word may read past
/// `end` in `s`; what it writes past it is cut). Lower-casing `out` after
/// copying into it read back bytes just stored, in other widths: a
/// store-forwarding stall on each such key.
#[inline(always)]
fn copy_lowered(s: &[u8], end: usize, upper: u128, out: &mut Vec<u8>) {
    let start = out.len();
    let mut at = 0;
    while at < end {
        let Some(word) = s.get(at..at + 8) else {
            for (k, &b) in s[at..end].iter().enumerate() {
                let bit = (upper >> (at + k)) as u8 & 1;
                out.push(b | bit << 5);
            }
            break;
        };
        let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
        let case = CASE_BITS[usize::from((upper >> at) as u8)];
        out.extend_from_slice(&(w | case).to_le_bytes());
        at += 8;
    }
    out.truncate(start + end);
}

/// The lowest set bit of `mask` alone (0 for 0).
#[inline(always)]
fn lowest(mask: u128) -> u128 {
    mask & mask.wrapping_neg()
}

/// The bits below the lowest set bit of `mask` (all of them for 0).
#[inline(always)]
fn below_lowest(mask: u128) -> u128 {
    lowest(mask).wrapping_sub(1)
}

impl FastWriter {
    /// What [`key`](Self::key) returns for `s`, when `s` has one of the
    /// shapes read here; `None` when it might not (then `key` decides).
    /// `m` are the masks of `s`, which has at most [`MAX_LEN`] bytes; `out`
    /// receives a written key.
    ///
    /// The line is cut at its delimiters, the lowest bits of masks, and
    /// each part is checked against its class at once. The edits made
    /// here are the common ones: scheme and host case, an empty or default
    /// port, the `/` of an empty path, escapes, dot segments.
    #[inline(always)]
    pub(in crate::uri::key) fn mask_key(
        &self,
        m: &LineMasks,
        s: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<Written> {
        let head = u64::from_le_bytes(*s.first_chunk::<8>()?);
        let (known, lower) = scheme_of(head)?;
        // `scheme://` host [: port] path ? query # fragment: the authority
        // ends at the first `/`, `?` or `#`, the path at the first `?` or
        // `#` after it, the query at the first `#` after that. `before_x`
        // holds the bits of the bytes before part x.
        let host_start = known.name.len() + 3;
        let before_authority = (1 << host_start) - 1;
        let before_path = below_lowest((m.slash | m.question | m.hash) & !before_authority);
        let authority = before_path & !before_authority;
        let colon = lowest(m.colon & authority);
        let before_port = colon.wrapping_sub(1);
        let host = authority & before_port;
        let port = authority & !before_port & !colon;
        let path_end = (m.question | m.hash) & !before_path;
        let before_query = below_lowest(path_end);
        let before_fragment = below_lowest(m.hash & !before_query);
        let path = before_query & !before_path;
        // The `?` and `#` themselves are in neither part.
        let query = before_fragment & !before_query & !lowest(path_end);
        let fragment = !before_fragment & !lowest(m.hash & !before_query);

        // Userinfo, an IP literal, an escape in the authority or a `#` in
        // the fragment is a byte outside its part's class; escapes are read
        // below.
        let escapes = m.percent & (path | query | fragment);
        let escaped = escapes | escapes << 1 | escapes << 2;
        let outside = (host & !m.host
            | port & !m.digit
            | path & !(m.path | escaped)
            | query & !(m.query | escaped)
            | fragment & !(m.query | escaped))
            & m.line;
        if outside != 0 {
            return None;
        }
        // A dot segment: a `.` or `..` between a `/` and the end of a
        // segment (past the masks is the end of the line).
        let segment_end = m.slash | m.question | m.hash | !m.line;
        let after_slash = path & m.dot & m.slash << 1;
        let dots = after_slash
            & (segment_end >> 1 | 1 << 127 | m.dot >> 1 & (segment_end >> 2 | 3 << 126));
        let dots = self.dot_segments && dots != 0;
        // Escapes to rewrite (none in a fragment that goes: the writer
        // only checks those).
        let edits = if escapes == 0 {
            0
        } else {
            let checked = if self.remove_fragment { fragment } else { 0 };
            self.escape_edits(s, escapes, checked)?
        };
        if self.remove_empty_query && lowest(path_end) & m.question != 0 && query & m.line == 0 {
            return None;
        }

        let n = s.len();
        let position = |before: u128| (before.count_ones() as usize).min(n);
        let host_end = position(host | before_authority);
        let path_start = position(before_path);
        if self.host_rules {
            self.check_host(&s[host_start..host_end], false)?;
        }
        let mut upper = 0;
        if self.lowercase_scheme && !lower {
            upper |= m.upper & before_authority;
        }
        if self.lowercase_host {
            upper |= m.upper & host;
        }
        // The port is kept, dropped, or rewritten by the writer.
        let mut kept_port = &[][..];
        let mut port_edit = false;
        if colon != 0 {
            let digits = &s[host_end + 1..path_start];
            let drop = if digits.is_empty() {
                self.empty_port
            } else {
                self.default_port && known.port.is_some_and(|d| scheme::is_port(digits, d))
            };
            if drop {
                port_edit = true;
            } else if self.port_zeros && strip_port_zeros(digits).len() < digits.len() {
                return None;
            } else {
                kept_port = &s[host_end..host_end + 1 + digits.len()];
            }
        }
        let empty_path_slash = self.empty_path_slash && known.empty_path_is_slash;
        let slash = empty_path_slash && path & m.line == 0;
        let len = if self.remove_fragment {
            position(before_fragment)
        } else {
            n
        };
        if upper == 0 && !port_edit && !slash && edits == 0 && !dots {
            return Some(Written::Prefix(len));
        }

        out.clear();
        if upper == 0 {
            out.extend_from_slice(&s[..host_end]);
        } else {
            copy_lowered(s, host_end, upper, out);
        }
        out.extend_from_slice(kept_port);
        if !dots {
            // The path, query and fragment in one piece (an empty path that
            // becomes `/` has no dot segment).
            if slash {
                out.push(b'/');
            }
            self.write_edited(s, path_start, len, edits, out);
            return Some(Written::Out);
        }
        let out_path = out.len();
        let path_end = position(before_query);
        self.write_edited(s, path_start, path_end, edits & path, out);
        remove_dot_segments_in_place(out, out_path, out_path);
        if empty_path_slash && out.len() == out_path {
            out.push(b'/');
        }
        self.write_edited(s, path_end, len, edits & !path, out);
        Some(Written::Out)
    }

    /// Writes `s[from..to]` to `out`, with the escapes at the bits of
    /// `edits` (valid escapes, from [`escape_edits`](Self::escape_edits))
    /// rewritten: decoded or upper-cased.
    #[inline(always)]
    fn write_edited(
        &self,
        s: &[u8],
        mut from: usize,
        to: usize,
        mut edits: u128,
        out: &mut Vec<u8>,
    ) {
        while edits != 0 {
            let at = edits.trailing_zeros() as usize;
            // Always an escape here; were it not, it would be copied as is.
            if let Some((_, _, byte)) = escape_at(s, at) {
                out.extend_from_slice(&s[from..at]);
                if self.decode && table::is_unreserved(byte) {
                    out.push(byte);
                } else {
                    out.extend_from_slice(&pct::encoded(byte));
                }
                from = at + 3;
            }
            edits &= edits - 1;
        }
        out.extend_from_slice(&s[from..to]);
    }

    /// The escapes at the bits of `escapes` that the escape rules
    /// rewrite: lower-case digits (when upper-casing) and unreserved octets
    /// (when decoding); `None` when one is not a valid escape, or decodes
    /// to a `.` where dot segments are removed (it could make one). The
    /// escapes at the bits of `checked` are only checked.
    #[inline(always)]
    fn escape_edits(&self, s: &[u8], escapes: u128, checked: u128) -> Option<u128> {
        let mut edits = 0;
        let mut rest = escapes;
        while rest != 0 {
            let at = rest.trailing_zeros() as usize;
            let (h, l, byte) = escape_at(s, at)?;
            let decoded = self.decode && table::is_unreserved(byte);
            if decoded && self.dot_segments && byte == b'.' {
                return None;
            }
            if decoded || (self.upper && (hex(h) | hex(l)) & LOWER_HEX != 0) {
                edits |= 1 << at;
            }
            rest &= rest - 1;
        }
        Some(edits & !checked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uri::key::fast::scalar::Scalar;
    use crate::uri::key::fast::Written;
    use crate::uri::key::KeyConfig;

    #[test]
    fn mask_bits_follow_the_classes() {
        for b in 0..=255u8 {
            let bits = MASK_BITS.get(usize::from(b)).copied().unwrap_or(0);
            let class = CLASSES[usize::from(b)];
            assert_eq!(bits & M_HOST != 0, class & F_HOST_ANY != 0, "{b:#x}");
            assert_eq!(
                bits & M_PATH != 0,
                class & F_PATH_PLAIN != 0 || b == b'.',
                "{b:#x}"
            );
            assert_eq!(bits & M_QUERY != 0, class & F_QUERY_PLAIN != 0, "{b:#x}");
            assert_eq!(bits & M_COLON != 0, b == b':', "{b:#x}");
            if b >= 128 {
                assert_eq!(class, 0, "{b:#x}: a class holds a byte outside ASCII");
            }
        }
    }

    #[test]
    fn lowest_bits() {
        assert_eq!(lowest(0b1100), 0b100);
        assert_eq!(lowest(0), 0);
        assert_eq!(below_lowest(0b1100), 0b11);
        assert_eq!(below_lowest(0), u128::MAX);
        assert_eq!(below_lowest(1 << 127), u128::MAX >> 1);
        assert_eq!(line_bits(0), 0);
        assert_eq!(line_bits(3), 0b111);
        assert_eq!(line_bits(128), u128::MAX);
    }

    /// The fast tier's writer under each profile, and variants of `rfc`
    /// with the rules the mask tier reads turned on or off.
    fn writers() -> Vec<FastWriter> {
        let configs = [
            "syntax",
            "rfc",
            "crawl",
            "rfc +remove-fragment",
            "rfc -remove-dot-segments",
            "rfc +remove-empty-query",
            "rfc -empty-path-slash",
            "rfc -lowercase-host",
            "rfc -lowercase-scheme",
            "rfc -remove-default-port +remove-port-leading-zeros",
            "rfc +remove-empty-port",
        ];
        configs
            .into_iter()
            .map(|c| {
                let writer = c.parse::<KeyConfig>().unwrap().keyer().fast;
                assert!(writer.enabled(), "{c}");
                writer
            })
            .collect()
    }

    /// The key of `s` written from its masks, if it is one of their
    /// shapes, after checking it against the writer's.
    fn agrees(w: &FastWriter, s: &[u8]) -> Option<Vec<u8>> {
        let m = LineMasks::of(s)?;
        let mut out = Vec::new();
        let key = |written: Written, out: &[u8]| match written {
            Written::Prefix(len) => s[..len].to_vec(),
            Written::Out => out.to_vec(),
        };
        let from_masks = key(w.mask_key(&m, s, &mut out)?, &out);
        let written = w.key(Scalar, s, &mut out);
        let from_writer = written.map(|k| key(k, &out));
        assert_eq!(
            Some(&from_masks),
            from_writer.as_ref(),
            "{w:?} {:?}",
            String::from_utf8_lossy(s)
        );
        Some(from_masks)
    }

    #[test]
    fn canonical_lines_are_recognized_and_others_left_to_the_writer() {
        let yes = [
            (
                "http://example.com/a/b.html?x=1&y=2",
                "http://example.com/a/b.html?x=1&y=2",
            ),
            ("https://a.b-c.d/", "https://a.b-c.d/"),
            ("http://example.com/a/b#frag", "http://example.com/a/b#frag"),
            ("ftp://host/file", "ftp://host/file"),
            ("file:///etc/hosts", "file:///etc/hosts"),
            ("ws://h/?", "ws://h/?"),
            ("HTTP://example.com/", "http://example.com/"),
            ("http://Example.COM/A", "http://example.com/A"),
            ("http://example.com:80/", "http://example.com/"),
            ("http://example.com:/", "http://example.com/"),
            ("http://example.com:8080/", "http://example.com:8080/"),
            ("HTTPS://WWW.A.B:443", "https://www.a.b/"),
            ("HTTP://A.B", "http://a.b/"),
            ("http://A.b?Q#F", "http://a.b/?Q#F"),
            ("http://example.com", "http://example.com/"),
            ("http://h/%7e%2f?%41%3a#%7e", "http://h/~%2F?A%3A#~"),
            ("http://example.com/?q=%41", "http://example.com/?q=A"),
            ("http://h/a/./b/../c?x/../y", "http://h/a/c?x/../y"),
            ("http://h/.well-known/a.b", "http://h/.well-known/a.b"),
            ("http://h/a/..", "http://h/"),
            ("HTTP://h/..#/./", "http://h/#/./"),
            ("http://h/a/%7e/../%41", "http://h/a/A"),
        ];
        let no = [
            "http://example.com:0443/",
            "http://example.com:8a/",
            "http://u@example.com/",
            "http://[::1]/",
            "http://example.com/a%2e",
            "http://example.com/%7",
            "http://example.com/%2e/b",
            "http://example.com/#a#b",
            "http://example.com/ x",
            "mailto:a@b.c",
            "urn:isbn:123",
            "http:/x",
        ];
        let rfc = &writers()[1];
        for (s, key) in yes {
            assert_eq!(
                agrees(rfc, s.as_bytes()).as_deref(),
                Some(key.as_bytes()),
                "{s}"
            );
        }
        for s in no {
            assert_eq!(agrees(rfc, s.as_bytes()), None, "{s}");
        }
    }

    #[test]
    fn check_agrees_with_the_writer_on_generated_lines() {
        // Lines of every length up to MAX_LEN + 1 over the bytes that
        // decide the shape, from a fixed xorshift sequence.
        let parts: [&[u8]; 24] = [
            b"http://",
            b"HTTP://",
            b"file://",
            b"fTp://",
            b"wss://",
            b"a",
            b"Z",
            b"-",
            b".",
            b"/",
            b"/.",
            b"/..",
            b"?",
            b"#",
            b":",
            b":80",
            b"@",
            b"%41",
            b"%zz",
            b"[",
            b" ",
            b"\xc3\xa9",
            b":0443",
            b"7",
        ];
        let writers = writers();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut yes = 0;
        for _ in 0..100_000 {
            let mut s = parts[(next() % 5) as usize].to_vec();
            let len = (next() % (MAX_LEN as u64 + 8)) as usize;
            while s.len() < len {
                // Plain letters two times in three, so that runs are long.
                let p = (next() % 72) as usize;
                s.extend_from_slice(parts.get(p).copied().unwrap_or(b"abc"));
            }
            s.truncate(len.max(1));
            for w in &writers {
                if agrees(w, &s).is_some() {
                    yes += 1;
                }
            }
        }
        assert!(yes > 10_000, "too few canonical lines generated: {yes}");
    }
}
