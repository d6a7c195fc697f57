//! Why a line has no key: a parse error today, and the other reasons a
//! keying rule can give (each with a stable name).

use core::fmt;

use crate::uri::compat::{self, CompatError};
use crate::uri::{ParseError, ParseErrorKind};

/// What kept a line from getting a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyErrorKind {
    /// The line is not a URI-reference (strictly, or after lenient mapping).
    Parse(ParseErrorKind),
    /// A compatibility preset's reference raises on the line.
    Compat(compat::Reason),
}

impl KeyErrorKind {
    /// A stable machine-readable name (`invalid-host`, ...), as in
    /// statistics and JSON output.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Parse(kind) => kind.name(),
            Self::Compat(reason) => reason.name(),
        }
    }

    /// The short lower-case message.
    pub const fn message(self) -> &'static str {
        match self {
            Self::Parse(kind) => kind.message(),
            Self::Compat(reason) => reason.message(),
        }
    }
}

impl fmt::Display for KeyErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// A line that has no key: where (byte offset into the line) and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyError {
    index: usize,
    kind: KeyErrorKind,
}

impl KeyError {
    /// An error at byte `index` of the line.
    pub const fn new(index: usize, kind: KeyErrorKind) -> Self {
        Self { index, kind }
    }

    /// Byte offset of the offending byte in the line (the line's length
    /// when it ended too early).
    pub const fn index(&self) -> usize {
        self.index
    }

    /// What was wrong.
    pub const fn kind(&self) -> KeyErrorKind {
        self.kind
    }

    /// The stable name of the reason (`invalid-host`, ...).
    pub const fn reason(&self) -> &'static str {
        self.kind.name()
    }

    /// The parse error, when that is what it is.
    pub const fn parse_error(&self) -> Option<ParseError> {
        match self.kind {
            KeyErrorKind::Parse(kind) => Some(ParseError::new(self.index, kind)),
            KeyErrorKind::Compat(_) => None,
        }
    }
}

impl From<ParseError> for KeyError {
    #[cold]
    fn from(e: ParseError) -> Self {
        Self::new(e.index(), KeyErrorKind::Parse(e.kind()))
    }
}

impl From<CompatError> for KeyError {
    #[cold]
    fn from(e: CompatError) -> Self {
        Self::new(e.index(), KeyErrorKind::Compat(e.kind()))
    }
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.kind, self.index)
    }
}

impl std::error::Error for KeyError {}
