//! Compatibility presets: the keys other tools compute, byte for byte,
//! quirks included, so that caches and indexes keyed by those tools can be
//! matched without running them.
//!
//! | preset | reference |
//! |---|---|
//! | [`Compat::W3lib`] (`w3lib`) | `w3lib.url.canonicalize_url(url)`, w3lib 2.5.0 |
//! | [`Compat::W3libKeepFragments`] (`w3lib-keep-fragments`) | the same with `keep_fragments=True` |
//! | [`Compat::IaSurt`] (`ia-surt`) | `surt.surt(url)`, surt 0.3.1 (the Internet Archive's CDX key) |
//!
//! Both references run on CPython 3.11 (and glibc, for `surt`'s numeric
//! host lookups); their Unicode behaviour (NFKC, `str.lower`, the IDNA 2003
//! codec) is reproduced from CPython's own data in `tables.rs`.
//!
//! **These presets merge URLs that RFC 3986 keeps apart**, because the user
//! asked for that tool's equality, not ours:
//!
//! - `w3lib` sorts the query arguments (`?b=1&a=2` = `?a=2&b=1`), turns
//!   `%20` and `+` in the query into `+`, drops empty query fields (`?&a`),
//!   decodes `%2C` and other reserved characters in the path (`a%2Cb` =
//!   `a,b`) and drops the fragment (unless `w3lib-keep-fragments`).
//! - `ia-surt` drops the scheme (`http` = `https` = `ftp`), the userinfo, a
//!   leading `www`, `www2.` etc., the fragment and session ids
//!   (`jsessionid`, `phpsessid`, `sid`, `aspsessionid…`, `cfid`/`cftoken`,
//!   ASP.NET path ids), lowercases path and query, decodes every escape
//!   repeatedly (`%2541` = `%41` = `A`), sorts the query and drops a trailing
//!   slash (`/a/` = `/a`).
//!
//! See `docs/compat.md` for every quirk and why it is there.
//!
//! ```
//! use urikey::uri::compat::{Compat, CompatScratch};
//! let mut scratch = CompatScratch::default();
//! let mut key = Vec::new();
//! Compat::IaSurt.write_key(b"http://www.Example.com/a?b=1", &mut key, &mut scratch)?;
//! assert_eq!(key, b"com,example)/a?b=1");
//! key.clear();
//! Compat::W3lib.write_key(b"http://Example.com/do?c=1&b=2#f", &mut key, &mut scratch)?;
//! assert_eq!(key, b"http://example.com/do?b=2&c=1");
//! # Ok::<(), urikey::uri::compat::CompatError>(())
//! ```

use core::fmt;
use core::str::FromStr;

mod bytes;
mod ia;
mod pyip;
#[allow(clippy::all)]
#[rustfmt::skip]
mod tables;
#[cfg(test)]
mod tests;
mod unicode;
mod w3lib;

/// A compatibility preset: whose keys to reproduce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compat {
    /// `w3lib.url.canonicalize_url(url)` of w3lib 2.5.0.
    W3lib,
    /// `w3lib.url.canonicalize_url(url, keep_fragments=True)` of w3lib 2.5.0.
    W3libKeepFragments,
    /// `surt.surt(url)` of surt 0.3.1.
    IaSurt,
}

impl Compat {
    /// Every preset, in documentation order.
    pub const ALL: [Compat; 3] = [Compat::W3lib, Compat::W3libKeepFragments, Compat::IaSurt];

    /// The preset's name, as [`FromStr`] reads it.
    pub const fn name(self) -> &'static str {
        match self {
            Compat::W3lib => "w3lib",
            Compat::W3libKeepFragments => "w3lib-keep-fragments",
            Compat::IaSurt => "ia-surt",
        }
    }

    /// The reference call this preset reproduces, with its pinned version.
    pub const fn reference(self) -> &'static str {
        match self {
            Compat::W3lib => "w3lib 2.5.0 canonicalize_url(url)",
            Compat::W3libKeepFragments => "w3lib 2.5.0 canonicalize_url(url, keep_fragments=True)",
            Compat::IaSurt => "surt 0.3.1 surt(url)",
        }
    }

    /// Appends the reference's output for `input` (one line, no newline) to
    /// `out`. On error `out` is left as it was.
    ///
    /// # Errors
    /// A [`CompatError`] when `input` is not UTF-8 (the references take a
    /// `str`) or where the reference raises an exception.
    pub fn write_key(
        self,
        input: &[u8],
        out: &mut Vec<u8>,
        scratch: &mut CompatScratch,
    ) -> Result<(), CompatError> {
        match self {
            // w3lib validates only the lines that are not ASCII.
            Compat::W3lib => w3lib::write_key(input, false, out, &mut scratch.w3lib),
            Compat::W3libKeepFragments => w3lib::write_key(input, true, out, &mut scratch.w3lib),
            Compat::IaSurt => {
                let input = core::str::from_utf8(input)
                    .map_err(|e| CompatError::new(e.valid_up_to(), Reason::InvalidUtf8))?;
                ia::write_key(input, out, &mut scratch.surt)
            }
        }
    }
}

impl fmt::Display for Compat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown preset name; its message lists the valid ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownCompat(String);

impl fmt::Display for UnknownCompat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown compat preset {:?} (valid: ", self.0)?;
        for (i, c) in Compat::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(c.name())?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownCompat {}

impl FromStr for Compat {
    type Err = UnknownCompat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Compat::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| UnknownCompat(s.to_owned()))
    }
}

/// Why a reference refuses an input (named after its exception).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The input is not UTF-8 (the references take a `str`).
    InvalidUtf8,
    /// `ValueError`: bad brackets or a bracketed host.
    InvalidIpv6Url,
    /// `ValueError`: the port is not an integer in 0-65535.
    InvalidPort,
    /// `ValueError`: the netloc holds a delimiter under NFKC.
    NetlocNfkc,
    /// `UnicodeEncodeError`: a non-ASCII bracketed host.
    UnicodeEncodeError,
    /// The URL is only whitespace.
    EmptyUrl,
}

impl Reason {
    /// A stable kebab-case name.
    pub const fn name(self) -> &'static str {
        match self {
            Reason::InvalidUtf8 => "invalid-utf8",
            Reason::InvalidIpv6Url => "invalid-ipv6-url",
            Reason::InvalidPort => "invalid-port",
            Reason::NetlocNfkc => "netloc-nfkc-delimiter",
            Reason::UnicodeEncodeError => "unicode-encode-error",
            Reason::EmptyUrl => "empty-url",
        }
    }

    /// What the reference does, in a sentence.
    pub const fn message(self) -> &'static str {
        match self {
            Reason::InvalidUtf8 => "input is not UTF-8 (the reference takes a str)",
            Reason::InvalidIpv6Url => {
                "ValueError: invalid IPv6 URL (bad brackets or bracketed host)"
            }
            Reason::InvalidPort => "ValueError: port is not an integer in 0-65535",
            Reason::NetlocNfkc => {
                "ValueError: netloc contains invalid characters under NFKC normalization"
            }
            Reason::UnicodeEncodeError => "UnicodeEncodeError: non-ASCII bracketed host",
            Reason::EmptyUrl => {
                "AttributeError: the URL is only whitespace (surt reads None.startswith)"
            }
        }
    }
}

/// The reference raises on this input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompatError {
    index: usize,
    reason: Reason,
}

impl CompatError {
    fn new(index: usize, reason: Reason) -> Self {
        Self { index, reason }
    }

    /// Byte index into the input near the cause (the start of the
    /// offending part; approximate when the reference removed whitespace
    /// inside the input first).
    pub fn index(&self) -> usize {
        self.index
    }

    /// A stable kebab-case name of the cause: `invalid-utf8`,
    /// `invalid-ipv6-url`, `invalid-port`, `netloc-nfkc-delimiter`,
    /// `unicode-encode-error` or `empty-url`.
    pub fn reason(&self) -> &'static str {
        self.reason.name()
    }

    /// The cause.
    pub fn kind(&self) -> Reason {
        self.reason
    }
}

impl fmt::Display for CompatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at byte {}: {}",
            self.reason.name(),
            self.index,
            self.reason.message()
        )
    }
}

impl std::error::Error for CompatError {}

/// Reusable buffers for [`Compat::write_key`]: keep one per thread, so the
/// common case allocates nothing once the buffers have grown.
#[derive(Default)]
pub struct CompatScratch {
    w3lib: W3libScratch,
    surt: SurtScratch,
}

impl fmt::Debug for CompatScratch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CompatScratch")
    }
}

#[derive(Default)]
struct W3libScratch {
    clean: String,
    scheme: String,
    backslash: String,
    host: String,
    text: String,
    text2: String,
    chars: Vec<(u32, u8)>,
    idna: unicode::IdnaScratch,
    netloc: Vec<u8>,
    qdata: Vec<u8>,
    fields: Vec<w3lib::Field>,
    tmp: Vec<u8>,
}

#[derive(Default)]
struct SurtScratch {
    url: Vec<u8>,
    host: Vec<u8>,
    path: Vec<u8>,
    query: Vec<u8>,
    tmp: Vec<u8>,
    tmp2: Vec<u8>,
    text: String,
    idna: unicode::IdnaScratch,
    ends: Vec<(usize, usize)>,
}
