//! RFC 3986 URI-references: the strict zero-copy parser ([`UriRef`]), the
//! owned component model ([`Components`]), reference resolution
//! ([`resolve()`]), percent-encoding helpers ([`pct`]) and normalization into
//! canonical keys ([`normalize`], [`key`]).
//!
//! This module knows nothing of the command-line engine.

// The library's `unsafe` code is where it opts in: the AVX2 scanner and
// the AVX-512 mask builder of the key tiers (`key/fast/avx2.rs`,
// `key/fast/avx512.rs`), the SSE2 lanes (`lanes.rs`), and one
// `from_utf8_unchecked` on input checked to be ASCII (`compat/w3lib/mod.rs`);
// everything else is safe.
#![deny(unsafe_code)]

pub mod compat;
mod components;
mod error;
pub mod host;
pub mod key;
pub(crate) mod lanes;
pub mod lenient;
mod meta;
pub mod normalize;
mod parse;
pub mod path;
pub mod pct;
pub mod resolve;
pub mod scheme;
pub mod surt;
pub mod table;

pub use components::Components;
pub use error::{ParseError, ParseErrorKind};
pub use meta::HostKind;
pub use resolve::{resolve, ResolveError, Resolver};

use meta::{Meta, NONE};

/// A parsed URI-reference (RFC 3986 §4.1) that borrows its input.
///
/// Parsing records only offsets; every accessor returns a slice of the
/// input, exactly as written (nothing is decoded or case-folded). An absent
/// component is `None`; a present but empty one is `Some("")`, so
/// `http://h?` (empty query) and `http://h` (no query) stay apart (§5.3).
///
/// ```
/// use urikey::uri::UriRef;
/// let u = UriRef::parse("foo://user@example.com:8042/over/there?name=ferret#nose")?;
/// assert_eq!(u.scheme(), Some("foo"));
/// assert_eq!(u.userinfo(), Some("user"));
/// assert_eq!(u.host(), Some("example.com"));
/// assert_eq!(u.port(), Some("8042"));
/// assert_eq!(u.path(), "/over/there");
/// assert_eq!(u.query(), Some("name=ferret"));
/// assert_eq!(u.fragment(), Some("nose"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UriRef<'a> {
    s: &'a str,
    m: Meta,
}

impl<'a> UriRef<'a> {
    /// Parses a URI-reference strictly: anything RFC 3986 rejects is an error.
    ///
    /// # Errors
    /// A [`ParseError`] with the byte offset of the first offending byte.
    pub fn parse(s: &'a str) -> Result<Self, ParseError> {
        let m = parse::parse(s.as_bytes())?;
        Ok(Self { s, m })
    }

    /// Parses a URI-reference from bytes. A valid URI-reference is ASCII, so
    /// any byte `>= 0x80` is an error at its offset.
    ///
    /// # Errors
    /// A [`ParseError`] with the byte offset of the first offending byte.
    pub fn parse_bytes(s: &'a [u8]) -> Result<Self, ParseError> {
        let m = parse::parse(s)?;
        // The parser accepted only ASCII bytes, so this cannot fail; the
        // error arm keeps the function panic-free all the same.
        let s = core::str::from_utf8(s)
            .map_err(|e| ParseError::new(e.valid_up_to(), ParseErrorKind::InvalidPath))?;
        Ok(Self { s, m })
    }

    /// `s[r]` (the parser's ranges are in bounds and on ASCII boundaries).
    #[inline]
    fn get(&self, r: core::ops::Range<usize>) -> &'a str {
        self.s.get(r).unwrap_or("")
    }

    /// The same reference as bytes, for the normalizer.
    #[inline]
    pub(crate) fn raw(&self) -> RawRef<'a> {
        RawRef {
            s: self.s.as_bytes(),
            m: self.m,
        }
    }

    /// The whole input.
    pub fn as_str(&self) -> &'a str {
        self.s
    }

    /// The scheme, if any (then this is a URI, not a relative reference).
    pub fn scheme(&self) -> Option<&'a str> {
        self.m.scheme().map(|r| self.get(r))
    }

    /// True for a relative reference (no scheme), §4.2.
    pub fn is_relative(&self) -> bool {
        self.m.scheme_end == NONE
    }

    /// True when the reference has an authority (`//` was present).
    pub fn has_authority(&self) -> bool {
        self.m.host_start != NONE
    }

    /// The authority (`userinfo@host:port`) without the leading `//`.
    pub fn authority(&self) -> Option<&'a str> {
        self.m.authority().map(|r| self.get(r))
    }

    /// The userinfo, without its `@`.
    pub fn userinfo(&self) -> Option<&'a str> {
        self.m.userinfo().map(|r| self.get(r))
    }

    /// The host as written; an IP-literal keeps its brackets. `Some("")` for
    /// an empty host (`file:///x`).
    pub fn host(&self) -> Option<&'a str> {
        self.m.host().map(|r| self.get(r))
    }

    /// The kind of host, when there is an authority.
    pub fn host_kind(&self) -> Option<HostKind> {
        self.has_authority().then_some(self.m.host_kind)
    }

    /// The port digits as written (`""` for `host:`). RFC 3986 sets no
    /// range, so `99999` is a valid port here; see [`port_u16`](Self::port_u16).
    pub fn port(&self) -> Option<&'a str> {
        self.m.port().map(|r| self.get(r))
    }

    /// The port as a number, when it is present, non-empty and fits in `u16`.
    pub fn port_u16(&self) -> Option<u16> {
        self.port().and_then(|p| p.parse().ok())
    }

    /// The path, possibly empty; never absent (§3.3).
    pub fn path(&self) -> &'a str {
        self.get(self.m.path())
    }

    /// The query, without its `?`.
    pub fn query(&self) -> Option<&'a str> {
        self.m.query().map(|r| self.get(r))
    }

    /// The fragment, without its `#`.
    pub fn fragment(&self) -> Option<&'a str> {
        self.m.fragment().map(|r| self.get(r))
    }

    /// The input without its fragment (and without the `#`).
    pub fn without_fragment(&self) -> &'a str {
        if self.m.fragment_start == NONE {
            self.s
        } else {
            self.get(0..self.m.fragment_start as usize - 1)
        }
    }

    /// The eight pieces of an IPv6 host.
    pub fn ipv6(&self) -> Option<[u16; 8]> {
        self.raw().ipv6()
    }
}

/// A parsed URI-reference as bytes: the parser's offsets over the input.
/// What the [`Normalizer`](normalize::Normalizer) reads; the key path
/// builds one straight from the parsed line, without the UTF-8 check that
/// a [`UriRef`] (which hands out `&str`) needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawRef<'a> {
    s: &'a [u8],
    m: Meta,
}

impl<'a> RawRef<'a> {
    /// Parses `s` strictly.
    #[inline]
    pub(crate) fn parse(s: &'a [u8]) -> Result<Self, ParseError> {
        Ok(Self {
            s,
            m: parse::parse(s)?,
        })
    }

    #[inline]
    fn get(&self, r: core::ops::Range<usize>) -> &'a [u8] {
        self.s.get(r).unwrap_or(b"")
    }

    pub(crate) fn scheme(&self) -> Option<&'a [u8]> {
        self.m.scheme().map(|r| self.get(r))
    }

    pub(crate) fn is_relative(&self) -> bool {
        self.m.scheme_end == NONE
    }

    pub(crate) fn has_authority(&self) -> bool {
        self.m.host_start != NONE
    }

    pub(crate) fn userinfo(&self) -> Option<&'a [u8]> {
        self.m.userinfo().map(|r| self.get(r))
    }

    pub(crate) fn host(&self) -> Option<&'a [u8]> {
        self.m.host().map(|r| self.get(r))
    }

    pub(crate) fn host_kind(&self) -> Option<HostKind> {
        self.has_authority().then_some(self.m.host_kind)
    }

    pub(crate) fn port(&self) -> Option<&'a [u8]> {
        self.m.port().map(|r| self.get(r))
    }

    pub(crate) fn path(&self) -> &'a [u8] {
        self.get(self.m.path())
    }

    pub(crate) fn query(&self) -> Option<&'a [u8]> {
        self.m.query().map(|r| self.get(r))
    }

    pub(crate) fn fragment(&self) -> Option<&'a [u8]> {
        self.m.fragment().map(|r| self.get(r))
    }

    /// The eight pieces of an IPv6 host.
    pub(crate) fn ipv6(&self) -> Option<[u16; 8]> {
        if self.host_kind() != Some(HostKind::Ipv6) {
            return None;
        }
        let h = self.host()?;
        host::parse_ipv6(h.get(1..h.len().checked_sub(1)?)?).ok()
    }
}

impl core::fmt::Display for UriRef<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.s)
    }
}

#[cfg(test)]
mod tests;

/// The fast single-pass parser and the precise reference parser on their
/// own, so this crate's tests can check that they agree (feature `__internal-testing`).
#[cfg(any(test, feature = "__internal-testing"))]
pub mod parsers {
    /// Component offsets as a comparable tuple, or the error.
    pub type Outcome = Result<[u32; 11], super::ParseError>;

    fn flat(m: super::Meta) -> [u32; 11] {
        [
            m.scheme_end,
            m.userinfo_end,
            m.host_start,
            m.host_end,
            m.port_start,
            m.authority_end,
            m.path_start,
            m.path_end,
            m.query_end,
            m.fragment_start,
            m.host_kind as u32,
        ]
    }

    /// The fast parser's answer, `None` when it defers to the precise one.
    pub fn parse_fast(s: &[u8]) -> Option<[u32; 11]> {
        super::parse::parse_fast(s).map(flat)
    }

    /// The precise parser's answer.
    ///
    /// # Errors
    /// The parse error's byte offset and kind, flattened.
    pub fn parse_precise(s: &[u8]) -> Outcome {
        super::parse::parse_precise(s).map(flat)
    }
}
