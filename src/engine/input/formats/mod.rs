//! Reading crawl data as it is published: CDXJ and legacy CDX index lines,
//! WARC records, the outlinks of WAT records and (feature `parquet`) a
//! column of the Parquet index. Each reader turns its input into URLs, each
//! with the bytes `--emit original` prints, its line or record number and
//! its byte offset in the (decompressed) input, or into an invalid record
//! with a reason ([`Problem`]).
//!
//! - Line formats ([`Format::Lines`], [`Format::Cdxj`], [`Format::Cdx`])
//!   keep the engine's chunks of lines: the URL of a line is taken out by
//!   [`Extract`] on the worker threads ([`extract_url`]), so JSON parsing
//!   runs on all cores.
//! - Record formats ([`Format::Warc`], [`Format::Wat`],
//!   [`Format::Parquet`]) are read record by record on the reader thread
//!   (Parquet: row groups on all cores), which writes one line per URL:
//!   the bytes `--emit original` prints, with the URL in it ([`Lines`]).
//!
//! [`open`] opens an input in its format (given, or detected by
//! [`detect::detect`]) and gives its [`Reader`]: the pipeline and
//! [`for_each_record`] both read what it gives. Adding a format takes its
//! file here (a [`RecordSource`] for a record format), its entry in
//! [`Format`] and in `open`, its detection, its docs and its tests.
//!
//! A fault in a line or record is an invalid line and the run goes on; a
//! fault that leaves the rest of the file unreadable (a WARC record cut
//! short, a Parquet file that does not parse) stops the run
//! ([`Error::Format`](crate::engine::Error::Format)).

pub mod arc;
pub mod cdx;
pub mod cdxj;
mod cdxj_fast;
pub mod detect;
mod each_record;
mod open;
#[cfg(feature = "parquet")]
pub mod parquet;
mod reader;
mod record_lines;
pub mod warc;
pub mod wat;

use core::fmt;

use crate::engine::{Field, Problem};

pub use each_record::{for_each_record, Record};
pub use open::{open, Opened};
#[cfg(feature = "parquet")]
pub use reader::ParquetFile;
pub use reader::{read_error, Reader, RecordSource};
pub use record_lines::Lines;

/// How an input is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One URL a line (the default).
    Lines,
    /// CDXJ index lines (`SURT timestamp {json}`): the JSON's `url`.
    Cdxj,
    /// Legacy space-separated CDX lines (9 or 11 fields): the original-URL
    /// column (`a`), placed by a ` CDX ...` header line when there is one.
    Cdx,
    /// WARC records: `WARC-Target-URI` of the records of the chosen types.
    Warc,
    /// WAT records: every outlink of every page, resolved (RFC 3986 §5.2)
    /// against the page's `<base href>` or URL.
    Wat,
    /// A string column of a Parquet file (the columnar crawl index).
    Parquet,
    /// ARC records (the Internet Archive's format before WARC, versions 1
    /// and 2): the URL of every record but the file's `filedesc://`.
    Arc,
}

impl Format {
    /// Every format, in the order `--format` lists them.
    pub const ALL: [Format; 7] = [
        Format::Lines,
        Format::Cdxj,
        Format::Cdx,
        Format::Warc,
        Format::Wat,
        Format::Parquet,
        Format::Arc,
    ];

    /// The name `--format` takes.
    pub const fn name(self) -> &'static str {
        match self {
            Format::Lines => "lines",
            Format::Cdxj => "cdxj",
            Format::Cdx => "cdx",
            Format::Warc => "warc",
            Format::Wat => "wat",
            Format::Parquet => "parquet",
            Format::Arc => "arc",
        }
    }

    /// The format named `name`.
    pub fn from_name(name: &str) -> Option<Format> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// True for formats whose URLs come one a line from the input itself.
    pub const fn is_line_format(self) -> bool {
        matches!(self, Format::Lines | Format::Cdxj | Format::Cdx)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The WARC record types read by default: the captures.
pub const DEFAULT_WARC_TYPES: &[&str] = &["response"];

/// The Parquet column read by default.
pub const DEFAULT_COLUMN: &str = "url";

/// How inputs are read: the format (detected per input from its content
/// when `None`), the WARC record types and the Parquet column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputFormat {
    /// The format of every input; `None`: each input's is detected from its
    /// first bytes ([`detect::detect`]), plain lines when nothing else
    /// fits, an error when they fit two formats.
    pub format: Option<Format>,
    /// WARC record types whose `WARC-Target-URI` is read (lower case).
    pub warc_types: Vec<String>,
    /// Parquet column holding the URLs.
    pub column: String,
}

impl Default for InputFormat {
    fn default() -> Self {
        Self {
            format: None,
            warc_types: DEFAULT_WARC_TYPES.iter().map(|s| (*s).to_owned()).collect(),
            column: DEFAULT_COLUMN.to_owned(),
        }
    }
}

impl InputFormat {
    /// Plain lines, never detected.
    pub fn lines() -> Self {
        Self {
            format: Some(Format::Lines),
            ..Self::default()
        }
    }
}

/// How the URL of a line is found (line formats, and the lines record
/// formats write).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Extract {
    /// The whole line.
    #[default]
    Line,
    /// One column of the line.
    Field(Field),
    /// The `url` of a CDXJ line's JSON; lines that start with `!` are
    /// header lines (OpenWayback's), skipped like blank lines.
    Cdxj,
    /// Column `column` (0-based) of a space-separated CDX line; lines that
    /// start with ` CDX` are header lines, skipped like blank lines.
    Cdx {
        /// The original-URL column.
        column: usize,
    },
}

impl Extract {
    /// Where byte `index` of the URL that [`extract_url`] found at `start`
    /// of `line` is in the line (for error positions): for a CDXJ URL with
    /// escapes, the escape it comes from.
    pub fn line_index(self, line: &[u8], start: usize, index: usize) -> usize {
        match self {
            Extract::Cdxj => cdxj::line_index(line, start, index),
            _ => start + index,
        }
    }
}

/// What [`extract_url`] found in a line.
#[derive(Debug, PartialEq, Eq)]
pub enum Extracted<'a> {
    /// The URL, which starts at byte `start` of the line as written (for
    /// error positions, with [`Extract::line_index`]); `url` is either part
    /// of the line or the caller's buffer (unquoted or unescaped).
    Url {
        /// Offset of the URL's first byte in the line.
        start: usize,
        /// The URL.
        url: &'a [u8],
    },
    /// A header line, counted as blank.
    Header,
    /// The line holds no usable URL: what is wrong, at which byte.
    Invalid {
        /// Offset of the offending byte in the line.
        index: usize,
        /// What is wrong.
        problem: Problem,
    },
}

/// The URL of `line` (no `\n`, no final `\r`) as `extract` finds it;
/// unquoted or unescaped text goes to `buf`. An empty column is
/// [`Problem::EmptyField`]; a missing one [`Problem::MissingField`].
#[inline]
pub fn extract_url<'a>(line: &'a [u8], extract: Extract, buf: &'a mut Vec<u8>) -> Extracted<'a> {
    let found = match extract {
        Extract::Line => {
            return Extracted::Url {
                start: 0,
                url: line,
            }
        }
        Extract::Field(f) => match super::lines::field_span(line, f, buf) {
            Some(span) => Ok((span.content_start(line), span.text(line, buf))),
            None => Err((line.len(), Problem::MissingField)),
        },
        // OpenWayback's header lines (`!OpenWayback-CDXJ 1.0`, `!meta`).
        Extract::Cdxj if line.first() == Some(&b'!') => return Extracted::Header,
        Extract::Cdxj => cdxj::url(line, buf),
        Extract::Cdx { column } => {
            if cdx::is_header(line) {
                return Extracted::Header;
            }
            cdx::url(line, column)
        }
    };
    match found {
        // An empty column holds no URL (not the empty reference).
        Ok((start, [])) => Extracted::Invalid {
            index: start,
            problem: Problem::EmptyField,
        },
        Ok((start, url)) => Extracted::Url { start, url },
        Err((index, problem)) => Extracted::Invalid { index, problem },
    }
}

/// Where a URL value a format decoded (a Parquet value, a WARC header, a
/// WAT link, a CDXJ string's escapes) holds a CR, LF or TAB: the one rule
/// of every format. Such a value cannot stand in one output line (nor in
/// a column of WAT's `page<TAB>link`), and lenient reading would delete
/// those bytes from a URL, so the record is invalid (`line-break`) rather
/// than edited.
pub(crate) fn breaks_line(value: &[u8]) -> Option<usize> {
    memchr::memchr3(b'\n', b'\r', b'\t', value)
}

/// Appends the text of an invalid record to `out` as one line of a chunk:
/// its line breaks become spaces.
pub(crate) fn push_as_one_line(out: &mut Vec<u8>, text: &[u8]) {
    out.extend(
        text.iter()
            .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }),
    );
}

/// Where a record's lines come from, for [`Problem`] reports: the 1-based
/// record (or row) number and the byte offset of the record in the
/// (decompressed) input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecordPos {
    /// 1-based record number (rows for Parquet).
    pub record: u64,
    /// Byte offset of the record in the input (for Parquet, of the column
    /// chunk of its row group).
    pub byte: u64,
}

/// One URL line of a record format, or an invalid record, as a reader
/// hands it over.
#[derive(Debug)]
pub enum Item<'a> {
    /// A URL: `text` is what `--emit original` prints, and holds no line
    /// break.
    Url {
        /// The line.
        text: &'a [u8],
        /// Where it comes from.
        pos: RecordPos,
    },
    /// An invalid record: `text` is reported (line breaks replaced).
    Fault {
        /// The record's text as reported.
        text: &'a [u8],
        /// Where it comes from.
        pos: RecordPos,
        /// What is wrong.
        problem: Problem,
        /// Offset of the offending byte within `text`.
        index: usize,
    },
}

/// A fault that ends the reading of a file: the record and byte where it
/// happened, and what is wrong.
#[derive(Debug)]
pub struct FileFault {
    /// Where the fault is.
    pub pos: RecordPos,
    /// What is wrong.
    pub message: String,
}

impl FileFault {
    /// A fault at `pos`.
    pub fn new(pos: RecordPos, message: impl Into<String>) -> Self {
        Self {
            pos,
            message: message.into(),
        }
    }
}
