//! Parse errors: a small `Copy` value holding the byte offset of the first
//! offending byte and what was expected there.

use core::fmt;

/// What went wrong while parsing a URI-reference.
///
/// The `Display` text is short and lower-case, in the style of `url`'s
/// errors ("invalid percent-encoding").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A byte that is not allowed in a scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`),
    /// or an empty scheme before `:`.
    InvalidScheme,
    /// A `%` that is not followed by two hexadecimal digits.
    InvalidPercentEncoding,
    /// A byte that is not allowed in the userinfo.
    InvalidUserinfo,
    /// A byte that is not allowed in a reg-name host, or after an IP-literal.
    InvalidHost,
    /// An IP-literal (`[...]`) without its closing bracket.
    UnclosedIpLiteral,
    /// An IP-literal whose content is not a valid IPv6address.
    InvalidIpv6,
    /// An IP-literal whose content is not a valid IPvFuture.
    InvalidIpvFuture,
    /// A port that is not `*DIGIT`.
    InvalidPort,
    /// A byte that is not allowed in the path.
    InvalidPath,
    /// A byte that is not allowed in the query.
    InvalidQuery,
    /// A byte that is not allowed in the fragment (a second `#`, for example).
    InvalidFragment,
    /// The input is longer than `u32::MAX` bytes.
    TooLong,
}

impl ParseErrorKind {
    /// The short lower-case message for this kind.
    pub const fn message(self) -> &'static str {
        match self {
            Self::InvalidScheme => "invalid scheme",
            Self::InvalidPercentEncoding => "invalid percent-encoding",
            Self::InvalidUserinfo => "invalid character in userinfo",
            Self::InvalidHost => "invalid character in host",
            Self::UnclosedIpLiteral => "unclosed IP-literal",
            Self::InvalidIpv6 => "invalid IPv6 address",
            Self::InvalidIpvFuture => "invalid IPvFuture address",
            Self::InvalidPort => "port is not digits",
            Self::InvalidPath => "invalid character in path",
            Self::InvalidQuery => "invalid character in query",
            Self::InvalidFragment => "invalid character in fragment",
            Self::TooLong => "input too long",
        }
    }

    /// A stable machine-readable name (`invalid-scheme`, ...), used in JSON
    /// output and statistics.
    pub const fn name(self) -> &'static str {
        match self {
            Self::InvalidScheme => "invalid-scheme",
            Self::InvalidPercentEncoding => "invalid-percent-encoding",
            Self::InvalidUserinfo => "invalid-userinfo",
            Self::InvalidHost => "invalid-host",
            Self::UnclosedIpLiteral => "unclosed-ip-literal",
            Self::InvalidIpv6 => "invalid-ipv6",
            Self::InvalidIpvFuture => "invalid-ipvfuture",
            Self::InvalidPort => "invalid-port",
            Self::InvalidPath => "invalid-path",
            Self::InvalidQuery => "invalid-query",
            Self::InvalidFragment => "invalid-fragment",
            Self::TooLong => "too-long",
        }
    }
}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// A URI-reference could not be parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ParseError {
    index: u32,
    kind: ParseErrorKind,
}

impl ParseError {
    #[cold]
    pub(crate) const fn new(index: usize, kind: ParseErrorKind) -> Self {
        Self { index: index as u32, kind }
    }

    /// Byte offset of the first offending byte in the input (it equals the
    /// input length when the input ended too early).
    pub const fn index(&self) -> usize {
        self.index as usize
    }

    /// What was expected at [`index`](Self::index).
    pub const fn kind(&self) -> ParseErrorKind {
        self.kind
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind, self.index)
    }
}

impl std::error::Error for ParseError {}
