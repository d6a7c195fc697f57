//! The owned component model, after the seed library's `Uri` class.
//!
//! Like the seed, a [`Components`] holds a relative flag (no scheme), a
//! scheme, userinfo, host, port with a has-port flag, the path as a list of
//! segments (a first segment that is empty makes the path absolute), the
//! query and the fragment, and writes them back as a string with the seed's
//! disambiguation rules. It improves on the seed where the seed loses
//! information:
//!
//! * absent and empty are different for every component (`Option`), so an
//!   authority with an empty host (`file:///x`), an empty port (`h:`), an
//!   empty query (`?`) and an empty fragment (`#`) all round-trip;
//! * the port is kept as written (`080`, `99999`); [`port_u16`] gives the
//!   number when it fits;
//! * an IPvFuture host keeps its brackets;
//! * components are stored percent-encoded, exactly as in the input;
//!   decoding is explicit ([`super::pct`]). Setters percent-encode every
//!   byte the component does not allow, so a built value always parses.
//!
//! [`port_u16`]: Components::port_u16

use core::fmt;

use super::error::{ParseError, ParseErrorKind};
use super::pct::encode_into;
use super::table::{self, PCHAR, QUERY, REG_NAME, USERINFO};
use super::{host, UriRef};

/// An owned URI-reference split into its components; see the module docs.
///
/// ```
/// use urikey::uri::Components;
/// let mut c = Components::parse("http://example.com/a/b?x#y")?;
/// assert_eq!(c.path_segments(), ["", "a", "b"]);
/// c.set_path_segments(["", "c d", "e/f"]);
/// c.set_query(None);
/// assert_eq!(c.to_string(), "http://example.com/c%20d/e%2Ff#y");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Components {
    scheme: Option<String>,
    userinfo: Option<String>,
    host: Option<String>,
    port: Option<String>,
    path: Vec<String>,
    query: Option<String>,
    fragment: Option<String>,
}

impl Components {
    /// An empty relative reference (the empty string).
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `s` strictly and copies its components.
    ///
    /// # Errors
    /// The [`ParseError`] of [`UriRef::parse`].
    pub fn parse(s: &str) -> Result<Self, ParseError> {
        UriRef::parse(s).map(|u| Self::from(&u))
    }

    /// True for a relative reference (no scheme).
    pub fn is_relative(&self) -> bool {
        self.scheme.is_none()
    }

    /// The scheme, if any.
    pub fn scheme(&self) -> Option<&str> {
        self.scheme.as_deref()
    }

    /// True when the reference is written with an authority (`//`): a host
    /// (possibly empty), a userinfo or a port is set.
    pub fn has_authority(&self) -> bool {
        self.host.is_some() || self.userinfo.is_some() || self.port.is_some()
    }

    /// The userinfo (encoded), if any.
    pub fn userinfo(&self) -> Option<&str> {
        self.userinfo.as_deref()
    }

    /// The host (encoded; IP-literals keep their brackets). `Some("")` for
    /// an empty host.
    pub fn host(&self) -> Option<&str> {
        self.host.as_deref()
    }

    /// True when a port is written (even an empty one, `host:`).
    pub fn has_port(&self) -> bool {
        self.port.is_some()
    }

    /// The port digits as written.
    pub fn port(&self) -> Option<&str> {
        self.port.as_deref()
    }

    /// The port as a number, when present, non-empty and at most 65535.
    pub fn port_u16(&self) -> Option<u16> {
        self.port.as_deref().and_then(|p| p.parse().ok())
    }

    /// The path segments (encoded). A first segment that is empty means an
    /// absolute path: `/a/b` is `["", "a", "b"]`, `/` is `["", ""]`, the
    /// empty path is `[]`.
    pub fn path_segments(&self) -> &[String] {
        &self.path
    }

    /// The path as one string (segments joined with `/`).
    pub fn path(&self) -> String {
        self.path.join("/")
    }

    /// The query (encoded), if any.
    pub fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    /// The fragment (encoded), if any.
    pub fn fragment(&self) -> Option<&str> {
        self.fragment.as_deref()
    }

    /// Sets or clears the scheme; `None` makes this a relative reference.
    ///
    /// # Errors
    /// [`ParseErrorKind::InvalidScheme`] when `scheme` is not
    /// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`; a scheme cannot be
    /// percent-encoded.
    pub fn set_scheme(&mut self, scheme: Option<&str>) -> Result<(), ParseError> {
        if let Some(s) = scheme {
            let b = s.as_bytes();
            if !b.first().is_some_and(u8::is_ascii_alphabetic) {
                return Err(ParseError::new(0, ParseErrorKind::InvalidScheme));
            }
            if let Some(i) = b.iter().position(|&c| !table::is(c, table::SCHEME_CHAR)) {
                return Err(ParseError::new(i, ParseErrorKind::InvalidScheme));
            }
        }
        self.scheme = scheme.map(str::to_owned);
        Ok(())
    }

    /// Sets or clears the userinfo, percent-encoding disallowed bytes.
    pub fn set_userinfo(&mut self, userinfo: Option<&str>) {
        self.userinfo = userinfo.map(|u| encoded(u, USERINFO));
    }

    /// Sets or clears the host. A valid bracketed IP-literal is kept as it
    /// is; anything else is a reg-name whose disallowed bytes are
    /// percent-encoded. `Some("")` is an empty host (an authority with no
    /// host, as in `file:///x`); `None` removes the host, and the authority
    /// with it unless a userinfo or port is set.
    pub fn set_host(&mut self, host: Option<&str>) {
        self.host = host.map(|h| {
            if is_ip_literal(h) {
                h.to_owned()
            } else {
                encoded(h, REG_NAME)
            }
        });
    }

    /// Sets or clears the port.
    ///
    /// # Errors
    /// [`ParseErrorKind::InvalidPort`] when `port` is not `*DIGIT`.
    pub fn set_port(&mut self, port: Option<&str>) -> Result<(), ParseError> {
        if let Some(p) = port {
            if let Some(i) = p.bytes().position(|b| !b.is_ascii_digit()) {
                return Err(ParseError::new(i, ParseErrorKind::InvalidPort));
            }
        }
        self.port = port.map(str::to_owned);
        Ok(())
    }

    /// Sets or clears the port from a number.
    pub fn set_port_u16(&mut self, port: Option<u16>) {
        self.port = port.map(|p| p.to_string());
    }

    /// Replaces the path segments, percent-encoding in each one every byte
    /// that is not a `pchar` (so a `/` inside a segment becomes `%2F`).
    pub fn set_path_segments<I, S>(&mut self, segments: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.path = segments
            .into_iter()
            .map(|s| encoded(s.as_ref(), PCHAR))
            .collect();
    }

    /// Replaces the path with `path` split at `/`, each segment encoded as by
    /// [`set_path_segments`](Self::set_path_segments).
    pub fn set_path(&mut self, path: &str) {
        self.path = split_path(path).map(|s| encoded(s, PCHAR)).collect();
    }

    /// Sets or clears the query, percent-encoding disallowed bytes.
    pub fn set_query(&mut self, query: Option<&str>) {
        self.query = query.map(|q| encoded(q, QUERY));
    }

    /// Sets or clears the fragment, percent-encoding disallowed bytes.
    pub fn set_fragment(&mut self, fragment: Option<&str>) {
        self.fragment = fragment.map(|f| encoded(f, QUERY));
    }
}

impl From<&UriRef<'_>> for Components {
    fn from(u: &UriRef<'_>) -> Self {
        Self {
            scheme: u.scheme().map(str::to_owned),
            userinfo: u.userinfo().map(str::to_owned),
            host: u.host().map(str::to_owned),
            port: u.port().map(str::to_owned),
            path: split_path(u.path()).map(str::to_owned).collect(),
            query: u.query().map(str::to_owned),
            fragment: u.fragment().map(str::to_owned),
        }
    }
}

impl fmt::Display for Components {
    /// Recomposes the reference (§5.3) with the seed's disambiguation rules:
    /// with an authority, a non-empty path is written absolute
    /// (path-abempty); without one, a path that would start with `//` is
    /// written `/.//…` so that it is not read as an authority; in a relative
    /// reference, a first segment holding `:` is written `./seg`
    /// (path-noscheme).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.scheme {
            write!(f, "{s}:")?;
        }
        let authority = self.has_authority();
        if authority {
            f.write_str("//")?;
            if let Some(u) = &self.userinfo {
                write!(f, "{u}@")?;
            }
            f.write_str(self.host.as_deref().unwrap_or(""))?;
            if let Some(p) = &self.port {
                write!(f, ":{p}")?;
            }
        }
        let first = self.path.first().map(String::as_str);
        let absolute = first == Some("");
        if authority {
            if !self.path.is_empty() && !absolute {
                f.write_str("/")?;
            }
        } else if absolute && self.path.get(1).is_some_and(String::is_empty) && self.path.len() > 2
        {
            f.write_str("/.")?;
        } else if self.scheme.is_none() && first.is_some_and(|s| s.contains(':')) {
            f.write_str("./")?;
        }
        f.write_str(&self.path.join("/"))?;
        if let Some(q) = &self.query {
            write!(f, "?{q}")?;
        }
        if let Some(x) = &self.fragment {
            write!(f, "#{x}")?;
        }
        Ok(())
    }
}

/// Splits a path at `/`; the empty path has no segments.
fn split_path(path: &str) -> impl Iterator<Item = &str> {
    let empty = path.is_empty();
    path.split('/').filter(move |_| !empty)
}

fn encoded(s: &str, mask: u8) -> String {
    let mut out = Vec::with_capacity(s.len());
    encode_into(s.as_bytes(), mask, &mut out);
    // Every byte written is ASCII: allowed bytes of `mask`, `%` and hex digits.
    out.into_iter().map(char::from).collect()
}

fn is_ip_literal(h: &str) -> bool {
    let Some(inner) = h.strip_prefix('[').and_then(|r| r.strip_suffix(']')) else {
        return false;
    };
    let b = inner.as_bytes();
    if matches!(b.first(), Some(b'v' | b'V')) {
        host::check_ipv_future(b).is_ok()
    } else {
        host::parse_ipv6(b).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn round_trip(s: &str) {
        let c = Components::parse(s).unwrap();
        assert_eq!(c.to_string(), s);
    }

    #[test]
    fn components_round_trip() {
        for s in [
            "",
            "file:///x",
            "http://h:",
            "http://h?",
            "http://h#",
            "http://[v7.aB]/",
            "http://[::1]:080/a//b",
            "foo:bar:baz",
            "/a",
            "//h",
            "//",
            "a/b",
            "?q",
            "#f",
            "http://u@h",
            "mailto:x@y",
            "urn:a:b",
            "http:",
        ] {
            round_trip(s);
        }
    }

    #[test]
    fn components_disambiguation() {
        let mut c = Components::new();
        c.set_path_segments(["a:b", "c"]);
        assert_eq!(c.to_string(), "./a:b/c");
        assert!(UriRef::parse(&c.to_string()).unwrap().is_relative());

        let mut c = Components::parse("x:/a").unwrap();
        c.set_path_segments(["", "", "b"]);
        assert_eq!(c.to_string(), "x:/.//b");
        let reparsed = UriRef::parse("x:/.//b").unwrap();
        assert!(!reparsed.has_authority());

        let mut c = Components::new();
        c.set_host(Some("h"));
        c.set_path_segments(["a"]);
        assert_eq!(c.to_string(), "//h/a");

        let mut c = Components::new();
        c.set_port_u16(Some(8080));
        assert_eq!(c.to_string(), "//:8080");
    }

    #[test]
    fn components_setters_encode() {
        let mut c = Components::new();
        c.set_scheme(Some("http")).unwrap();
        c.set_userinfo(Some("us er:pw@"));
        c.set_host(Some("exa mple.com"));
        c.set_path("/a b/%41/100%");
        c.set_query(Some("q=1#2"));
        c.set_fragment(Some("f g"));
        let s = c.to_string();
        assert_eq!(
            s,
            "http://us%20er:pw%40@exa%20mple.com/a%20b/%41/100%25?q=1%232#f%20g"
        );
        assert!(UriRef::parse(&s).is_ok());
        assert!(c.set_scheme(Some("1http")).is_err());
        assert!(c.set_port(Some("8o")).is_err());
        c.set_host(Some("[::1]"));
        assert_eq!(c.host(), Some("[::1]"));
        c.set_host(Some("[::1"));
        assert_eq!(c.host(), Some("%5B%3A%3A1"));
    }
}
