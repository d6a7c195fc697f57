//! RFC 3986 URI-references: the strict zero-copy parser ([`UriRef`]), the
//! owned component model ([`Components`]), reference resolution
//! ([`resolve`]), percent-encoding helpers ([`pct`]) and normalization into
//! canonical keys ([`normalize`], [`key`]).
//!
//! This module knows nothing of the command-line engine.

#![forbid(unsafe_code)]

mod components;
mod error;
pub mod host;
pub mod key;
pub mod lenient;
mod meta;
pub mod normalize;
mod parse;
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

    #[inline]
    fn slice(&self, from: u32, to: u32) -> &'a str {
        &self.s[from as usize..to as usize]
    }

    /// The whole input.
    pub fn as_str(&self) -> &'a str {
        self.s
    }

    /// The scheme, if any (then this is a URI, not a relative reference).
    pub fn scheme(&self) -> Option<&'a str> {
        (self.m.scheme_end != NONE).then(|| self.slice(0, self.m.scheme_end))
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
        self.has_authority().then(|| {
            let start = if self.m.scheme_end == NONE { 2 } else { self.m.scheme_end + 3 };
            self.slice(start, self.m.authority_end)
        })
    }

    /// The userinfo, without its `@`.
    pub fn userinfo(&self) -> Option<&'a str> {
        if self.m.userinfo_end == NONE {
            return None;
        }
        let start = if self.m.scheme_end == NONE { 2 } else { self.m.scheme_end + 3 };
        Some(self.slice(start, self.m.userinfo_end))
    }

    /// The host as written; an IP-literal keeps its brackets. `Some("")` for
    /// an empty host (`file:///x`).
    pub fn host(&self) -> Option<&'a str> {
        self.has_authority().then(|| self.slice(self.m.host_start, self.m.host_end))
    }

    /// The kind of host, when there is an authority.
    pub fn host_kind(&self) -> Option<HostKind> {
        self.has_authority().then_some(self.m.host_kind)
    }

    /// The port digits as written (`""` for `host:`). RFC 3986 sets no
    /// range, so `99999` is a valid port here; see [`port_u16`](Self::port_u16).
    pub fn port(&self) -> Option<&'a str> {
        (self.m.port_start != NONE).then(|| self.slice(self.m.port_start, self.m.authority_end))
    }

    /// The port as a number, when it is present, non-empty and fits in `u16`.
    pub fn port_u16(&self) -> Option<u16> {
        self.port().and_then(|p| p.parse().ok())
    }

    /// The path, possibly empty; never absent (§3.3).
    pub fn path(&self) -> &'a str {
        self.slice(self.m.path_start, self.m.path_end)
    }

    /// The query, without its `?`.
    pub fn query(&self) -> Option<&'a str> {
        (self.m.query_end != NONE).then(|| self.slice(self.m.path_end + 1, self.m.query_end))
    }

    /// The fragment, without its `#`.
    pub fn fragment(&self) -> Option<&'a str> {
        (self.m.fragment_start != NONE).then(|| self.slice(self.m.fragment_start, self.m.len))
    }

    /// The input without its fragment (and without the `#`).
    pub fn without_fragment(&self) -> &'a str {
        if self.m.fragment_start == NONE {
            self.s
        } else {
            self.slice(0, self.m.fragment_start - 1)
        }
    }

    /// The eight pieces of an IPv6 host.
    pub fn ipv6(&self) -> Option<[u16; 8]> {
        if self.host_kind() != Some(HostKind::Ipv6) {
            return None;
        }
        let h = self.host()?.as_bytes();
        host::parse_ipv6(&h[1..h.len() - 1]).ok()
    }
}

impl core::fmt::Display for UriRef<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.s)
    }
}

#[cfg(test)]
mod tests;
