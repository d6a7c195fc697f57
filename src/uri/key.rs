//! Canonical keys: one line in, its normalized URI (or SURT, or hash) out.
//!
//! [`Canonicalizer::uri_key`] is the hot function of the dedup engine. Most
//! crawl URLs are already canonical, so it first tries a one-pass check
//! ([`fast_canonical`]) for the common `http(s)://host[:port]/path?query#frag`
//! shape; when that proves the input canonical, the input itself is the key
//! (borrowed, no copy, no parse). Otherwise the strict parser and the
//! [`Normalizer`] write the key into the reused [`KeyScratch`]; if the result
//! equals the input, the input is returned all the same.
//!
//! ```
//! use urikey::uri::key::{Canonicalizer, KeyFormat, KeyScratch};
//! let c = Canonicalizer::default();
//! let mut scratch = KeyScratch::default();
//! let key = c.uri_key(b"HTTP://Example.com:80", &mut scratch)?.to_vec();
//! assert_eq!(key, b"http://example.com/");
//! let mut out = Vec::new();
//! c.write_key(&key, KeyFormat::Surt, &mut out);
//! assert_eq!(out, b"com,example)/");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::error::ParseError;
use super::lenient::{self, LenientScratch};
use super::normalize::{Flag, Flags, NormalizeScratch, Normalizer};
use super::surt;
use super::table::{self, PCHAR, QUERY};
use super::UriRef;

/// How a canonical key is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum KeyFormat {
    /// The normalized URI string.
    #[default]
    Uri,
    /// Our Sort-friendly URI Reordering Transform (see [`surt`]).
    Surt,
    /// 32 lower-case hex digits of [`fingerprint`] of the `uri` key.
    Hash,
}

impl KeyFormat {
    /// The format's name (`uri`, `surt`, `hash`).
    pub const fn name(self) -> &'static str {
        match self {
            KeyFormat::Uri => "uri",
            KeyFormat::Surt => "surt",
            KeyFormat::Hash => "hash",
        }
    }
}

/// Reusable buffers for [`Canonicalizer::uri_key`]; keep one per thread.
#[derive(Default, Debug)]
pub struct KeyScratch {
    out: Vec<u8>,
    norm: NormalizeScratch,
    lenient: LenientScratch,
}

/// Flags the fast path can vouch for: for inputs it accepts, none of them
/// changes anything. The opt-in crawl flags are not among them.
const FAST_SAFE: Flags = Flags::of(&[
    Flag::LowercaseScheme,
    Flag::LowercaseHost,
    Flag::UppercaseEscapes,
    Flag::DecodeUnreserved,
    Flag::RemoveDotSegments,
    Flag::RemoveEmptyPort,
    Flag::RemoveDefaultPort,
    Flag::EmptyPathSlash,
    Flag::RemoveFragment,
    Flag::Ipv6Canonical,
    Flag::Ipv4Canonical,
    Flag::Idna,
    Flag::RemoveTrailingHostDot,
    Flag::RemoveEmptyQuery,
]);

/// What the fast path must know about the flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct FastPath {
    enabled: bool,
    remove_fragment: bool,
    remove_empty_query: bool,
}

/// Turns lines into canonical keys. `Default` is profile `rfc`, strict.
#[derive(Clone, Debug)]
pub struct Canonicalizer {
    normalizer: Normalizer,
    lenient: bool,
    fast: FastPath,
    identity: bool,
}

impl Default for Canonicalizer {
    fn default() -> Self {
        Self::new(Normalizer::default())
    }
}

impl Canonicalizer {
    /// A canonicalizer with the given normalizer.
    pub fn new(normalizer: Normalizer) -> Self {
        let flags = normalizer.flags();
        let fast = FastPath {
            enabled: flags.is_subset(FAST_SAFE),
            remove_fragment: flags.has(Flag::RemoveFragment),
            remove_empty_query: flags.has(Flag::RemoveEmptyQuery),
        };
        Self {
            identity: flags.is_empty(),
            normalizer,
            lenient: false,
            fast,
        }
    }

    /// Map dirty input the RFC 3987 §3.1 way before parsing (see
    /// [`lenient`]).
    pub fn with_lenient(mut self, lenient: bool) -> Self {
        self.lenient = lenient;
        self
    }

    /// The normalizer.
    pub fn normalizer(&self) -> &Normalizer {
        &self.normalizer
    }

    /// Is lenient input on?
    pub fn is_lenient(&self) -> bool {
        self.lenient
    }

    /// The canonical `uri` key of one line (without its newline): `input`
    /// itself when it is already canonical (or a prefix of it, when only a
    /// removed fragment or empty query differs), else a slice of `scratch`.
    ///
    /// # Errors
    /// The parse error, with an offset into `input` (also in lenient mode).
    #[inline]
    pub fn uri_key<'a>(
        &self,
        input: &'a [u8],
        scratch: &'a mut KeyScratch,
    ) -> Result<&'a [u8], ParseError> {
        if self.fast.enabled {
            let fast = fast_key_len(
                input,
                self.fast.remove_fragment,
                self.fast.remove_empty_query,
            );
            if let Some(key) = fast.and_then(|len| input.get(..len)) {
                return Ok(key);
            }
        }
        self.uri_key_slow(input, scratch)
    }

    /// [`uri_key`](Self::uri_key) without the fast path, for tests that
    /// check both paths agree.
    #[doc(hidden)]
    pub fn uri_key_slow<'a>(
        &self,
        input: &'a [u8],
        scratch: &'a mut KeyScratch,
    ) -> Result<&'a [u8], ParseError> {
        let KeyScratch {
            out,
            norm,
            lenient: lenient_scratch,
        } = scratch;
        // A line that strict reading accepts needs no lenient mapping (the
        // mapping leaves every valid URI-reference alone), so strict goes
        // first and the mapping only runs on lines strict reading rejects.
        let strict = self.normalize(input, out, norm);
        let err = match strict {
            Ok(false) => return Ok(input),
            Ok(true) => return Ok(out),
            Err(e) => e,
        };
        if self.lenient && lenient::map(input, lenient_scratch) {
            let mapped: &'a LenientScratch = lenient_scratch;
            return match self.normalize(mapped.mapped(), out, norm) {
                Ok(false) => Ok(mapped.mapped()),
                Ok(true) => Ok(out),
                Err(e) => Err(ParseError::new(mapped.origin(e.index()), e.kind())),
            };
        }
        Err(err)
    }

    /// Parses and normalizes `input` into `out`. `Ok(false)`: the key is
    /// `input` itself; `Ok(true)`: the key is in `out`.
    fn normalize(
        &self,
        input: &[u8],
        out: &mut Vec<u8>,
        norm: &mut NormalizeScratch,
    ) -> Result<bool, ParseError> {
        let u = UriRef::parse_bytes(input)?;
        if self.identity {
            return Ok(false);
        }
        out.clear();
        self.normalizer.normalize_with(&u, out, norm);
        Ok(out.as_slice() != input)
    }

    /// Appends `uri_key` written in `format` to `out`.
    pub fn write_key(&self, uri_key: &[u8], format: KeyFormat, out: &mut Vec<u8>) {
        write_key(uri_key, format, out);
    }
}

/// Appends `uri_key` (a key made by [`Canonicalizer::uri_key`]) written in
/// `format` to `out`.
pub fn write_key(uri_key: &[u8], format: KeyFormat, out: &mut Vec<u8>) {
    match format {
        KeyFormat::Uri => out.extend_from_slice(uri_key),
        KeyFormat::Surt => surt::write_surt(uri_key, out),
        KeyFormat::Hash => {
            let h = fingerprint(uri_key);
            for shift in (0..32).rev() {
                out.push(b"0123456789abcdef"[((h >> (shift * 4)) & 0xf) as usize]);
            }
        }
    }
}

/// The stable 128-bit fingerprint of a key (XXH3-128, seed 0). Stable
/// across releases: stored fingerprints stay valid.
pub fn fingerprint(key: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(key)
}

/// Byte classes of the fast path.
const F_HOST: u8 = 1; // a-z 0-9 - . _ ~
const F_UPHEX: u8 = 2; // 0-9 A-F
const F_PATH_PLAIN: u8 = 4; // pchar / "/", but not "%" or "."
const F_QUERY_PLAIN: u8 = 8; // pchar / "/" / "?", but not "%" (query and fragment)

const fn fast_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        let mut bits = 0;
        if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'-' | b'.' | b'_' | b'~') {
            bits |= F_HOST;
        }
        if c.is_ascii_digit() || matches!(c, b'A'..=b'F') {
            bits |= F_UPHEX;
        }
        if (table::CLASS[b] & PCHAR != 0 || c == b'/') && c != b'.' {
            bits |= F_PATH_PLAIN;
        }
        if table::CLASS[b] & QUERY != 0 {
            bits |= F_QUERY_PLAIN;
        }
        t[b] = bits;
        b += 1;
    }
    t
}

static FAST: [u8; 256] = fast_table();

#[inline(always)]
fn class(b: u8) -> u8 {
    FAST[b as usize]
}

/// Skips bytes of class `c` (a single bit) from `i` and returns the index
/// of the first byte outside the class (or `s.len()`).
///
/// Eight bytes at a time: the AND of their classes says whether all are in
/// the class; in the word where the run ends, the classes are packed into
/// a `u64` and `trailing_zeros` finds the byte, so the scan has no per-byte
/// branch. The last partial word is read as the input's last eight bytes,
/// ignoring the ones already scanned.
#[inline(always)]
fn skip(s: &[u8], mut i: usize, c: u8) -> usize {
    let n = s.len();
    while let Some(w) = s.get(i..).and_then(<[u8]>::first_chunk::<8>) {
        let all = class(w[0])
            & class(w[1])
            & class(w[2])
            & class(w[3])
            & class(w[4])
            & class(w[5])
            & class(w[6])
            & class(w[7]);
        if all & c == 0 {
            break;
        }
        i += 8;
    }
    if i + 8 <= n {
        // The run ends in this word.
        while class(s[i]) & c != 0 {
            i += 1;
        }
        return i;
    }
    if i >= n {
        return n;
    }
    match s.last_chunk::<8>() {
        // Bytes n-8 .. i were scanned already.
        Some(w) => n - 8 + first_outside(w, c, 8 - (n - i)),
        None => {
            while i < n && class(s[i]) & c != 0 {
                i += 1;
            }
            i
        }
    }
}

/// Index of the first byte of `w`, at or after `from`, outside class `c`
/// (8 when there is none).
#[inline(always)]
fn first_outside(w: &[u8; 8], c: u8, from: usize) -> usize {
    const LOW: u64 = 0x0101_0101_0101_0101;
    let classes = u64::from_le_bytes([
        class(w[0]),
        class(w[1]),
        class(w[2]),
        class(w[3]),
        class(w[4]),
        class(w[5]),
        class(w[6]),
        class(w[7]),
    ]);
    let outside = ((classes >> c.trailing_zeros()) & LOW) ^ LOW;
    let outside = outside & u64::MAX.checked_shl(8 * from as u32).unwrap_or(0);
    if outside == 0 {
        8
    } else {
        (outside.trailing_zeros() / 8) as usize
    }
}

/// Is `s[i..i + 3]` an escape with upper-case hex of an octet that must
/// stay encoded (not an unreserved character)?
#[inline(always)]
fn good_escape(s: &[u8], i: usize) -> bool {
    let (Some(&b1), Some(&b2)) = (s.get(i + 1), s.get(i + 2)) else {
        return false;
    };
    if class(b1) & class(b2) & F_UPHEX == 0 {
        return false;
    }
    let hi = if b1 <= b'9' {
        b1 - b'0'
    } else {
        b1 - b'A' + 10
    };
    let lo = if b2 <= b'9' {
        b2 - b'0'
    } else {
        b2 - b'A' + 10
    };
    !table::is_unreserved(hi << 4 | lo)
}

/// Does a path segment end at `j` (end, `/`, `?` or `#`)?
#[inline(always)]
fn segment_ends(s: &[u8], j: usize) -> bool {
    !matches!(s.get(j), Some(b) if !matches!(b, b'/' | b'?' | b'#'))
}

/// Proves in one pass that `s` is a valid URI that every flag of the fast
/// set leaves unchanged, apart from dropping its fragment (when
/// `remove_fragment`) or an empty query at its end (when
/// `remove_empty_query`): returns the length of the key, which is then a
/// prefix of `s`. The shape is `http(s)://host[:port]/path[?query][#fragment]`
/// with a lower-case `[a-z0-9-._~]` host that is not a number-like (IPv4)
/// host and has no trailing dot, a non-empty port without leading zero that
/// is not the default, a non-empty path without dot-segments, and only
/// upper-case escapes of octets that must stay encoded. `None` means "not
/// proven": the slow path decides.
///
/// Runs of ordinary bytes are skipped eight at a time with a table; only
/// `.`, `%`, `?` and `#` stop the scan.
#[doc(hidden)]
#[inline]
pub fn fast_key_len(s: &[u8], remove_fragment: bool, remove_empty_query: bool) -> Option<usize> {
    let (start, default_port): (usize, &[u8]) = if s.starts_with(b"https://") {
        (8, b"443")
    } else if s.starts_with(b"http://") {
        (7, b"80")
    } else {
        return None;
    };
    let n = s.len();

    // Host.
    let mut i = skip(s, start, F_HOST);
    let host = &s[start..i];
    let &last = host.last()?;
    if last == b'.' {
        return None;
    }
    let label = host.iter().rposition(|&b| b == b'.').map_or(0, |p| p + 1);
    if host[label].is_ascii_digit() {
        return None; // may be an IPv4 number form
    }

    // Port.
    if i < n && s[i] == b':' {
        let port_start = i + 1;
        i = port_start;
        while i < n && s[i].is_ascii_digit() {
            i += 1;
        }
        let port = &s[port_start..i];
        if port.is_empty() || port[0] == b'0' || port == default_port {
            return None;
        }
    }

    // Path: must start with "/" (an empty path is the slow path's).
    if i == n || s[i] != b'/' {
        return None;
    }
    loop {
        i = skip(s, i, F_PATH_PLAIN);
        if i == n {
            return Some(n);
        }
        match s[i] {
            b'.' => {
                // s[i - 1] exists: the path starts with '/'.
                if s[i - 1] == b'/'
                    && (segment_ends(s, i + 1)
                        || (s.get(i + 1) == Some(&b'.') && segment_ends(s, i + 2)))
                {
                    return None;
                }
                i += 1;
            }
            b'%' if good_escape(s, i) => i += 3,
            b'?' => break,
            b'#' => return fragment(s, i, remove_fragment),
            _ => return None,
        }
    }

    // Query: s[i] == '?'.
    let question = i;
    i += 1;
    if remove_empty_query && (i == n || s[i] == b'#') {
        // The key ends before the '?', if the fragment goes too.
        return match fragment(s, i, remove_fragment)? {
            end if end == i => Some(question),
            _ => None,
        };
    }
    loop {
        i = skip(s, i, F_QUERY_PLAIN);
        if i == n {
            return Some(n);
        }
        match s[i] {
            b'%' if good_escape(s, i) => i += 3,
            b'#' => return fragment(s, i, remove_fragment),
            _ => return None,
        }
    }
}

/// [`fast_key_len`] when the key must be the whole input.
#[doc(hidden)]
#[inline]
pub fn fast_canonical(s: &[u8], remove_fragment: bool, remove_empty_query: bool) -> bool {
    fast_key_len(s, remove_fragment, remove_empty_query) == Some(s.len())
}

/// The fragment part of [`fast_key_len`], from `i` (at a `#` or the end):
/// checks the fragment and returns the key length (`i` when the fragment
/// is removed, the input length when it stays).
#[inline(always)]
fn fragment(s: &[u8], i: usize, remove_fragment: bool) -> Option<usize> {
    let n = s.len();
    if i == n {
        return Some(n);
    }
    let mut j = i + 1;
    loop {
        j = skip(s, j, F_QUERY_PLAIN);
        if j == n {
            return Some(if remove_fragment { i } else { n });
        }
        if s[j] == b'%' && good_escape(s, j) {
            j += 3;
        } else {
            return None;
        }
    }
}
