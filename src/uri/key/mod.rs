//! Canonical keys: one line in, its normalized URI (or SURT, or hash) out.
//!
//! [`Canonicalizer::uri_key`] is the hot function of the dedup engine. It
//! has two tiers:
//!
//! 1. A one-pass writer for the common `http(s)://host[:port]/path?query#frag`
//!    shape (the `http` module; also other schemes with `://`, userinfo
//!    and IPv6 hosts) checks the line and applies the rules (lower-case
//!    scheme and host, port, escape and dot-segment rules, empty path)
//!    straight from the bytes. Most crawl URLs are already
//!    canonical: then nothing is written and the input itself is the key
//!    (borrowed, no copy, no parse). Otherwise the key is written, copying
//!    the unchanged runs of the line.
//! 2. Anything that writer does not cover goes through the strict parser
//!    and the [`Normalizer`]; when the result equals the input, the input
//!    is returned all the same.
//!
//! Written keys live in the reused [`KeyScratch`].
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

mod http;
mod scan;
#[cfg(target_arch = "x86_64")]
mod simd;

use super::error::ParseError;
use super::lenient::{self, LenientScratch};
use super::normalize::{Flag, Flags, NormalizeScratch, Normalizer};
use super::surt;
use super::RawRef;
use http::{HttpWriter, Written};
use scan::Scalar;

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

/// Flags the one-pass writer of `scheme://` lines applies (it writes what the
/// [`Normalizer`] writes). The opt-in crawl flags are not among them.
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

/// Turns lines into canonical keys. `Default` is profile `rfc`, strict.
#[derive(Clone, Debug)]
pub struct Canonicalizer {
    normalizer: Normalizer,
    lenient: bool,
    http: HttpWriter,
    identity: bool,
    scanner: Scanner,
}

/// The run scanner of the fast tier, chosen once for the running CPU. Both
/// give the same keys; they differ only in speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scanner {
    /// Eight bytes per step, on any target.
    Scalar,
    /// 32 bytes per step (x86_64 CPUs with AVX2).
    #[cfg(target_arch = "x86_64")]
    Avx2(simd::Avx2),
}

impl Scanner {
    fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = simd::Avx2::detect() {
            return Scanner::Avx2(t);
        }
        Scanner::Scalar
    }
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
        Self {
            identity: flags.is_empty(),
            http: HttpWriter::new(flags, flags.is_subset(FAST_SAFE)),
            normalizer,
            lenient: false,
            scanner: Scanner::detect(),
        }
    }

    /// Use the portable scanner in the fast tier even where the CPU has a
    /// faster one; the keys are the same (for tests that check both).
    #[doc(hidden)]
    pub fn with_portable_scan(mut self) -> Self {
        self.scanner = Scanner::Scalar;
        self
    }

    /// The fast tier's key of `input` (see [`HttpWriter::key`]).
    #[inline(always)]
    fn http_key(&self, input: &[u8], out: &mut Vec<u8>) -> Option<Written> {
        match self.scanner {
            Scanner::Scalar => self.http.key(Scalar, input, out),
            #[cfg(target_arch = "x86_64")]
            Scanner::Avx2(t) => t.key(&self.http, input, out),
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
        if self.http.enabled() {
            match self.http_key(input, &mut scratch.out) {
                Some(Written::Prefix(len)) => return Ok(input.get(..len).unwrap_or(input)),
                Some(Written::Out) => return Ok(&scratch.out),
                None => {}
            }
        }
        self.uri_key_slow(input, scratch)
    }

    /// The first tier of [`uri_key`](Self::uri_key) alone: the key when the
    /// one-pass writer of `scheme://` lines covers `input`, for tests that check it
    /// against [`uri_key_slow`](Self::uri_key_slow).
    #[doc(hidden)]
    pub fn uri_key_http<'a>(
        &self,
        input: &'a [u8],
        scratch: &'a mut KeyScratch,
    ) -> Option<&'a [u8]> {
        if !self.http.enabled() {
            return None;
        }
        match self.http_key(input, &mut scratch.out)? {
            Written::Prefix(len) => input.get(..len),
            Written::Out => Some(&scratch.out),
        }
    }

    /// [`uri_key`](Self::uri_key) without its fast tier (only the general
    /// parser and normalizer), for tests that check both paths agree.
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
        // Bytes all the way: the parser accepts only ASCII, so the UTF-8
        // check a `UriRef` needs would be a second pass for nothing.
        let u = RawRef::parse(input)?;
        if self.identity {
            return Ok(false);
        }
        out.clear();
        self.normalizer.normalize_raw(&u, out, norm);
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
