//! Canonical keys: one line in, its normalized URI (or SURT, or hash) out.
//!
//! Build a [`Keyer`] from a [`KeyConfig`] (profile, flags, lenient input,
//! key format; every part parses from and prints as the command line's
//! spelling) and call [`Keyer::key`] or [`Keyer::fingerprint`]. This is
//! the one keying path: the commands, the engine and the bindings all go
//! through it. [`Keyer::uri_key`], the hot function of the dedup engine,
//! has three tiers, each tried when the one before does not cover a line:
//!
//! 1. The **mask tier** (`fast/masks.rs`): a line of up to 128 bytes of the
//!    shapes most crawl lines have is read from bit masks of its byte
//!    classes (built 64 bytes an instruction with AVX-512 in
//!    `fast/avx512.rs`, or by the portable scanner).
//! 2. The **fast tier** (`fast/mod.rs`): one pass over a
//!    `scheme://[userinfo@]host[:port]/path?query#frag` line checks it and
//!    applies the rules (lower-case scheme and host, port, escape and
//!    dot-segment rules, empty path) straight from the bytes; its byte
//!    runs are found by a scanner, `fast/scalar.rs` (eight bytes at a time,
//!    any target) or `fast/avx2.rs` (32 bytes, x86_64 with AVX2). Most
//!    crawl URLs are already canonical: then nothing is written and the
//!    input itself is the key (borrowed, no copy, no parse). Otherwise the
//!    key is written, copying the unchanged runs of the line.
//! 3. The **general tier**: anything else goes through the strict parser
//!    (`uri/parse.rs`) and the [`Normalizer`] (`uri/normalize/`); when the
//!    result equals the input, the input is returned all the same.
//!
//! Written keys live in the reused [`KeyScratch`].
//!
//! ```
//! use urikey::uri::key::{KeyConfig, KeyScratch};
//! let keyer = "rfc".parse::<KeyConfig>()?.keyer();
//! let mut scratch = KeyScratch::default();
//! let key = keyer.key(b"HTTP://Example.com:80", &mut scratch)?;
//! assert_eq!(key.as_str(), "http://example.com/");
//!
//! let surt = "rfc key=surt".parse::<KeyConfig>()?.keyer();
//! assert_eq!(surt.key(b"HTTP://Example.com:80", &mut scratch)?.as_str(), "com,example)/");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod config;
mod error;
mod fast;
mod identity;

use std::sync::Arc;

use super::compat::{Compat, CompatScratch};

use super::lenient::{self, LenientScratch};
use super::normalize::{Flag, Flags, NormalizeScratch, Normalizer};
use super::pct;
use super::resolve::Resolver;
use super::surt;
use super::RawRef;
use super::UriRef;
pub use config::{ConfigError, FlagList, FlagSetting, KeyConfig};
pub use error::{KeyError, KeyErrorKind};
use fast::scalar::Scalar;
use fast::{FastWriter, Written};
pub use identity::{Identity, IdentityDiff};

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

/// Reusable buffers for [`Keyer`]; keep one per thread.
#[derive(Default, Debug)]
pub struct KeyScratch {
    out: Vec<u8>,
    formatted: Vec<u8>,
    compat: CompatScratch,
    norm: NormalizeScratch,
    lenient: LenientScratch,
    resolved: String,
}

/// What a [`Keyer`] does with a relative reference (no scheme, §4.2).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Relative {
    /// Key it as it is (only the case and escape rules apply to it). The
    /// default: `urikey normalize` keys any URI-reference.
    #[default]
    Allow,
    /// It has no key: [`KeyErrorKind::RelativeReference`]. A URL dump holds
    /// absolute URLs, so `urikey dedup` rejects `hello` and
    /// `www.example.com` by default.
    Reject,
    /// Resolve it against this absolute base URI (§5.2, strict) and key the
    /// target. Build with [`Relative::resolve_against`].
    Resolve(Arc<str>),
}

impl Relative {
    /// Resolution against `base`, which must be an absolute URI (a
    /// URI-reference with a scheme; a fragment is ignored, §5.1).
    ///
    /// # Errors
    /// A [`KeyError`] when `base` does not parse or has no scheme.
    pub fn resolve_against(base: &str) -> Result<Self, KeyError> {
        let u = UriRef::parse(base)?;
        if u.is_relative() {
            return Err(KeyError::new(0, KeyErrorKind::RelativeReference));
        }
        Ok(Relative::Resolve(base.into()))
    }
}

/// Flags the fast tier applies (it writes what the
/// [`Normalizer`] writes). The opt-in crawl flags are not among them.
const FAST_SAFE: Flags = Flags::of(&[
    Flag::LowercaseScheme,
    Flag::LowercaseHost,
    Flag::UppercaseEscapes,
    Flag::DecodeUnreserved,
    Flag::RemoveDotSegments,
    Flag::RemoveEmptyPort,
    Flag::RemoveDefaultPort,
    Flag::PortLeadingZeros,
    Flag::EmptyPathSlash,
    Flag::RemoveFragment,
    Flag::Ipv6Canonical,
    Flag::Ipv4Canonical,
    Flag::Idna,
    Flag::RemoveTrailingHostDot,
    Flag::RemoveEmptyQuery,
]);

/// Turns lines into canonical keys: the one keying path. Build it from a
/// [`KeyConfig`] ([`KeyConfig::keyer`]) or from a [`Normalizer`]
/// ([`Keyer::new`]). `Default` is profile `rfc`, strict, `uri` keys.
///
/// A `Keyer` is immutable, `Send` and `Sync`: share one across threads and
/// give each thread its own [`KeyScratch`].
#[derive(Clone, Debug)]
pub struct Keyer {
    normalizer: Normalizer,
    lenient: bool,
    format: KeyFormat,
    compat: Option<Compat>,
    fast: FastWriter,
    identity: bool,
    scanner: Scanner,
    relative: Relative,
}

/// The run scanner of the fast tier, chosen once for the running CPU. Both
/// give the same keys; they differ only in speed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scanner {
    /// Eight bytes per step, on any target.
    Scalar,
    /// 32 bytes per step (x86_64 CPUs with AVX2).
    #[cfg(target_arch = "x86_64")]
    Avx2(fast::avx2::Avx2),
    /// Lines of up to 128 bytes read from masks of their byte classes,
    /// longer ones as with AVX2 (x86_64 CPUs with AVX-512 F, BW and VBMI).
    #[cfg(target_arch = "x86_64")]
    Avx512(fast::avx512::Avx512),
}

impl Scanner {
    fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = fast::avx512::Avx512::detect() {
            return Scanner::Avx512(t);
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(t) = fast::avx2::Avx2::detect() {
            return Scanner::Avx2(t);
        }
        Scanner::Scalar
    }
}

impl Default for Keyer {
    fn default() -> Self {
        Self::new(Normalizer::default())
    }
}

/// A key: a slice of the input when the input was already canonical, or of
/// the [`KeyScratch`] it was written into. Keys are ASCII.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key<'i, 's> {
    /// The input (or a prefix of it) is the key.
    Input(&'i [u8]),
    /// The key was written into the scratch.
    Written(&'s [u8]),
}

impl<'i, 's> Key<'i, 's> {
    /// The key's bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match *self {
            Key::Input(b) => b,
            Key::Written(b) => b,
        }
    }

    /// The key as a string. Keys are ASCII (the strict parser accepts only
    /// ASCII and lenient mapping percent-encodes the rest), so this never
    /// loses anything.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// The key's length in bytes.
    pub fn len(&self) -> usize {
        self.as_bytes().len()
    }

    /// True for an empty key (only an empty input has one).
    pub fn is_empty(&self) -> bool {
        self.as_bytes().is_empty()
    }

    /// True when the key borrows the input: nothing was written.
    pub fn is_input(&self) -> bool {
        matches!(self, Key::Input(_))
    }
}

impl core::ops::Deref for Key<'_, '_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl core::fmt::Display for Key<'_, '_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Keyer {
    /// A keyer with the given normalizer, strict, writing `uri` keys.
    pub fn new(normalizer: Normalizer) -> Self {
        let flags = normalizer.flags();
        Self {
            identity: flags.is_empty(),
            fast: FastWriter::new(flags, flags.is_subset(FAST_SAFE)),
            normalizer,
            lenient: false,
            format: KeyFormat::Uri,
            compat: None,
            scanner: Scanner::detect(),
            relative: Relative::Allow,
        }
    }

    /// A keyer that gives the keys of another tool, byte for byte (see
    /// [`compat`](crate::uri::compat)). Its keys are written as the tool
    /// writes them: the format is `uri`, and lenient input and the
    /// relative-reference setting do not apply (the tool decides).
    pub fn compat(preset: Compat) -> Self {
        Self {
            fast: FastWriter::new(Flags::EMPTY, false),
            identity: false,
            compat: Some(preset),
            ..Self::default()
        }
    }

    /// The compatibility preset, if this keyer reproduces another tool.
    pub fn compat_preset(&self) -> Option<Compat> {
        self.compat
    }

    /// Allow, reject or resolve relative references (see [`Relative`]).
    /// Only the general tier sees them: the fast tier covers
    /// `scheme://` lines, so this costs nothing on the hot path.
    pub fn with_relative(mut self, relative: Relative) -> Self {
        self.relative = relative;
        self
    }

    /// What this keyer does with relative references.
    pub fn relative(&self) -> &Relative {
        &self.relative
    }

    /// Map dirty input the RFC 3987 §3.1 way before parsing (see
    /// [`lenient`]).
    pub fn with_lenient(mut self, lenient: bool) -> Self {
        self.lenient = lenient;
        self
    }

    /// Write keys in `format` ([`key`](Self::key)). A compatibility
    /// preset's keys keep the tool's form: only `uri` applies to them.
    pub fn with_format(mut self, format: KeyFormat) -> Self {
        if self.compat.is_none() {
            self.format = format;
        }
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

    /// The format [`key`](Self::key) writes.
    pub fn format(&self) -> KeyFormat {
        self.format
    }

    /// The key of one line (without its newline) in this keyer's format.
    /// A `uri` key borrows the input when the input is already canonical.
    ///
    /// # Errors
    /// A [`KeyError`] with the byte offset into `input` and the reason.
    #[inline]
    pub fn key<'i, 's>(
        &self,
        input: &'i [u8],
        scratch: &'s mut KeyScratch,
    ) -> Result<Key<'i, 's>, KeyError> {
        if self.format == KeyFormat::Uri {
            return self.uri_key(input, scratch);
        }
        let KeyScratch { formatted, .. } = scratch;
        let mut formatted = core::mem::take(formatted);
        formatted.clear();
        let result = self.uri_key(input, scratch).map(|k| {
            write_key(&k, self.format, &mut formatted);
        });
        scratch.formatted = formatted;
        result.map(|()| Key::Written(&scratch.formatted))
    }

    /// The stable 128-bit fingerprint of the line's `uri` key (see
    /// [`fingerprint`]); its 32 hex digits are the `hash` key.
    ///
    /// # Errors
    /// As for [`key`](Self::key).
    #[inline]
    pub fn fingerprint(&self, input: &[u8], scratch: &mut KeyScratch) -> Result<u128, KeyError> {
        self.uri_key(input, scratch).map(|k| fingerprint(&k))
    }

    /// The canonical `uri` key of one line (without its newline), whatever
    /// the keyer's format: `input` itself when it is already canonical (or
    /// a prefix of it, when only a removed fragment or empty query
    /// differs), else a slice of `scratch`. The dedup engine keys on this
    /// and formats only what it prints ([`write_key`](Self::write_key)).
    ///
    /// # Errors
    /// As for [`key`](Self::key); the offset is into `input` in lenient
    /// mode too.
    #[inline(always)]
    pub fn uri_key<'i, 's>(
        &self,
        input: &'i [u8],
        scratch: &'s mut KeyScratch,
    ) -> Result<Key<'i, 's>, KeyError> {
        if self.fast.enabled() {
            match self.fast_key(input, &mut scratch.out) {
                Some(Written::Prefix(len)) => {
                    return Ok(Key::Input(input.get(..len).unwrap_or(input)))
                }
                Some(Written::Out) => return Ok(Key::Written(&scratch.out)),
                None => {}
            }
        }
        self.general_key(input, scratch)
    }

    /// The fast tier's key of `input` (see [`FastWriter::key`]).
    #[inline(always)]
    fn fast_key(&self, input: &[u8], out: &mut Vec<u8>) -> Option<Written> {
        match self.scanner {
            Scanner::Scalar => self.fast.key(Scalar, input, out),
            #[cfg(target_arch = "x86_64")]
            Scanner::Avx2(t) => t.key(&self.fast, input, out),
            #[cfg(target_arch = "x86_64")]
            Scanner::Avx512(t) => t.key(&self.fast, input, out),
        }
    }

    /// The second tier alone: the general parser and normalizer.
    fn general_key<'i, 's>(
        &self,
        input: &'i [u8],
        scratch: &'s mut KeyScratch,
    ) -> Result<Key<'i, 's>, KeyError> {
        let KeyScratch {
            out,
            norm,
            lenient: lenient_scratch,
            resolved,
            compat: compat_scratch,
            ..
        } = scratch;
        if let Some(preset) = self.compat {
            out.clear();
            preset
                .write_key(input, out, compat_scratch)
                .map_err(KeyError::from)?;
            return Ok(if out.as_slice() == input {
                Key::Input(input)
            } else {
                Key::Written(out)
            });
        }
        // A line that strict reading accepts needs no lenient mapping (the
        // mapping leaves every valid URI-reference alone), so strict goes
        // first and the mapping only runs on lines strict reading rejects.
        let strict = self.normalize(input, out, norm, resolved);
        let err = match strict {
            Ok(Normalized::Same) => return Ok(Key::Input(input)),
            Ok(Normalized::Out) => return Ok(Key::Written(out)),
            Ok(Normalized::Resolved) => return Ok(Key::Written(resolved.as_bytes())),
            Err(e) => e,
        };
        if self.lenient && lenient::map(input, lenient_scratch) {
            let mapped: &'s LenientScratch = lenient_scratch;
            if mapped.mapped().is_empty() {
                // Only whitespace: a blank line, not the empty reference.
                return Err(KeyError::new(0, KeyErrorKind::Blank));
            }
            return match self.normalize(mapped.mapped(), out, norm, resolved) {
                Ok(Normalized::Same) => Ok(Key::Written(mapped.mapped())),
                Ok(Normalized::Out) => Ok(Key::Written(out)),
                Ok(Normalized::Resolved) => Ok(Key::Written(resolved.as_bytes())),
                Err(e) => Err(KeyError::new(mapped.origin(e.index()), e.kind())),
            };
        }
        Err(err)
    }

    /// Parses and normalizes `input` (resolving a relative reference first
    /// when asked to): where the key is.
    fn normalize(
        &self,
        input: &[u8],
        out: &mut Vec<u8>,
        norm: &mut NormalizeScratch,
        resolved: &mut String,
    ) -> Result<Normalized, KeyError> {
        // Bytes all the way: the parser accepts only ASCII, so the UTF-8
        // check a `UriRef` needs would be a second pass for nothing.
        let u = RawRef::parse(input)?;
        if u.is_relative() {
            match &self.relative {
                Relative::Allow => {}
                Relative::Reject => return Err(KeyError::new(0, KeyErrorKind::RelativeReference)),
                Relative::Resolve(base) => return self.resolve(base, input, out, norm, resolved),
            }
        }
        if self.identity {
            return Ok(Normalized::Same);
        }
        out.clear();
        self.normalizer.normalize_raw(&u, out, norm);
        Ok(if out.as_slice() == input {
            Normalized::Same
        } else {
            Normalized::Out
        })
    }

    /// Resolves the relative reference `input` against `base` (§5.2) into
    /// `resolved` and normalizes the target.
    #[cold]
    fn resolve(
        &self,
        base: &str,
        input: &[u8],
        out: &mut Vec<u8>,
        norm: &mut NormalizeScratch,
        resolved: &mut String,
    ) -> Result<Normalized, KeyError> {
        // Both parsed before (the base when the keyer was built), so
        // neither fails; errors are kept all the same.
        let base = UriRef::parse(base)?;
        let reference = UriRef::parse_bytes(input)?;
        resolved.clear();
        Resolver::new()
            .resolve_into(&base, &reference, resolved)
            .map_err(|_| KeyError::new(0, KeyErrorKind::RelativeReference))?;
        let target = RawRef::parse(resolved.as_bytes())?;
        if self.identity {
            return Ok(Normalized::Resolved);
        }
        out.clear();
        self.normalizer.normalize_raw(&target, out, norm);
        Ok(Normalized::Out)
    }

    /// Appends `uri_key` (a key made by [`uri_key`](Self::uri_key)) written
    /// in this keyer's format to `out`.
    pub fn write_key(&self, uri_key: &[u8], out: &mut Vec<u8>) {
        write_key(uri_key, self.format, out);
    }
}

/// Each tier of [`Keyer::uri_key`] on its own, and the portable scanner, for
/// this crate's tests, benchmarks and fuzz targets (feature `__internal-testing`).
#[cfg(any(test, feature = "__internal-testing"))]
impl Keyer {
    /// The general tier alone (parser and normalizer).
    ///
    /// # Errors
    /// As for [`key`](Self::key).
    pub fn general_tier_key<'i, 's>(
        &self,
        input: &'i [u8],
        scratch: &'s mut KeyScratch,
    ) -> Result<Key<'i, 's>, KeyError> {
        self.general_key(input, scratch)
    }

    /// The fast tier alone: `None` when it does not cover `input`.
    pub fn fast_tier_key<'i, 's>(
        &self,
        input: &'i [u8],
        scratch: &'s mut KeyScratch,
    ) -> Option<Key<'i, 's>> {
        if !self.fast.enabled() {
            return None;
        }
        match self.fast_key(input, &mut scratch.out)? {
            Written::Prefix(len) => input.get(..len).map(Key::Input),
            Written::Out => Some(Key::Written(&scratch.out)),
        }
    }

    /// The same keyer with the portable scanner in the fast tier.
    pub fn with_portable_scan(mut self) -> Self {
        self.scanner = Scanner::Scalar;
        self
    }

    /// The same keyer without the mask tier of CPUs with AVX-512: the
    /// AVX2 scanner where the CPU has it, else unchanged.
    pub fn without_mask_tier(mut self) -> Self {
        #[cfg(target_arch = "x86_64")]
        if let (Scanner::Avx512(_), Some(t)) = (self.scanner, fast::avx2::Avx2::detect()) {
            self.scanner = Scanner::Avx2(t);
        }
        self
    }
}

/// Where [`Keyer::normalize`] left the key.
enum Normalized {
    /// The input itself.
    Same,
    /// The scratch's `out`.
    Out,
    /// The resolved target, unchanged by normalization.
    Resolved,
}

/// Appends `uri_key` (a key made by [`Keyer::uri_key`]) written in
/// `format` to `out`.
pub fn write_key(uri_key: &[u8], format: KeyFormat, out: &mut Vec<u8>) {
    match format {
        KeyFormat::Uri => out.extend_from_slice(uri_key),
        KeyFormat::Surt => surt::write_surt(uri_key, out),
        KeyFormat::Hash => {
            let h = fingerprint(uri_key);
            // Formatted on the stack, then appended at once (a push per
            // digit checked the vector's capacity 32 times).
            let mut hex = [0u8; 32];
            for (i, digit) in hex.iter_mut().enumerate() {
                *digit = pct::HEX_LOWER[((h >> ((31 - i) * 4)) & 0xf) as usize];
            }
            out.extend_from_slice(&hex);
        }
    }
}

/// The version of the keys this crate writes. It is bumped, and the bump
/// listed in the CHANGELOG, whenever a release changes the key of any input
/// under any configuration (a normalization rule, a compatibility preset,
/// [`fingerprint`]): stores of keys or fingerprints built by an older
/// version (a seen-store, `urikey state`) then say they must be rebuilt,
/// since mixing keys of two versions silently breaks deduplication.
///
/// Version 1: the keys of the first release with a seen-store.
pub const KEY_VERSION: u32 = 1;

/// The stable 128-bit fingerprint of a key (XXH3-128, seed 0). Stable
/// across releases: stored fingerprints stay valid.
pub fn fingerprint(key: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(key)
}
