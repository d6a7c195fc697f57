//! What an opened input is read with: the line formats are cut into chunks
//! of lines by the pipeline, each record format is a [`RecordSource`],
//! and a Parquet file is read a row group at a time. Both the pipeline and
//! [`for_each_record`](super::for_each_record) take what
//! [`open`](super::open) gives, so a new record format is a new
//! [`RecordSource`] and a line in `open`.

use std::io::Read;

use super::warc::{ReadError, WarcUrls};
use super::wat::WatLinks;
use super::{Extract, Format, Item};
use crate::engine::error::Error;
#[cfg(feature = "parquet")]
use crate::engine::input::SharedBytes;
use crate::engine::input::{Compression, Source};
use crate::engine::Field;

/// A reader of a record format: the URLs of one record at a time, each
/// as the line `--emit original` prints, or the record's fault.
pub trait RecordSource: Send {
    /// The format read.
    fn format(&self) -> Format;

    /// Reads the next record, handing each of its URLs (or its fault) to
    /// `each`; false at the end of the input.
    ///
    /// # Errors
    /// The input cannot be read, or cannot be read in this format from
    /// here on ([`ReadError`]).
    fn next_record(&mut self, each: &mut dyn FnMut(Item<'_>)) -> Result<bool, ReadError>;

    /// Bytes of the (decompressed) input consumed.
    fn offset(&self) -> u64;

    /// How the URL is found in the lines it writes (the whole line unless
    /// it writes columns).
    fn extract(&self) -> Extract {
        Extract::Line
    }
}

impl<R: Read + Send> RecordSource for super::arc::ArcUrls<R> {
    fn format(&self) -> Format {
        Format::Arc
    }

    fn next_record(&mut self, each: &mut dyn FnMut(Item<'_>)) -> Result<bool, ReadError> {
        super::arc::ArcUrls::next_record(self, each)
    }

    fn offset(&self) -> u64 {
        super::arc::ArcUrls::offset(self)
    }
}

impl<R: Read + Send> RecordSource for WarcUrls<R> {
    fn format(&self) -> Format {
        Format::Warc
    }

    fn next_record(&mut self, each: &mut dyn FnMut(Item<'_>)) -> Result<bool, ReadError> {
        WarcUrls::next_record(self, each)
    }

    fn offset(&self) -> u64 {
        WarcUrls::offset(self)
    }
}

impl<R: Read + Send> RecordSource for WatLinks<R> {
    fn format(&self) -> Format {
        Format::Wat
    }

    fn next_record(&mut self, each: &mut dyn FnMut(Item<'_>)) -> Result<bool, ReadError> {
        WatLinks::next_record(self, each)
    }

    fn offset(&self) -> u64 {
        WatLinks::offset(self)
    }

    /// WAT writes `page<TAB>link`: the link is the URL.
    fn extract(&self) -> Extract {
        Extract::Field(Field {
            index: 1,
            delimiter: b'\t',
            csv: false,
        })
    }
}

impl core::fmt::Debug for Reader {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Reader::Lines { .. } => "Reader::Lines",
            Reader::Records { .. } => "Reader::Records",
            #[cfg(feature = "parquet")]
            Reader::Parquet(_) => "Reader::Parquet",
        })
    }
}

/// How an opened input is read.
pub enum Reader {
    /// A line format: the source is cut into lines, and `extract` finds
    /// each line's URL.
    Lines {
        /// The content.
        source: Source,
        /// How the URL of a line is found.
        extract: Extract,
    },
    /// A record format, read one record at a time.
    Records {
        /// The reader.
        records: Box<dyn RecordSource>,
        /// The input's compression (for error messages).
        compression: Option<Compression>,
    },
    /// A Parquet file, read a row group at a time.
    #[cfg(feature = "parquet")]
    Parquet(ParquetFile),
}

/// A Parquet input, all of it in memory, and the column that holds its
/// URLs.
#[cfg(feature = "parquet")]
#[derive(Debug)]
pub struct ParquetFile {
    pub(super) bytes: SharedBytes,
    pub(super) column: String,
}

#[cfg(feature = "parquet")]
impl ParquetFile {
    /// The column's values a row group at a time, as lines, row groups on
    /// `threads` threads (see [`super::parquet::for_each_group`]).
    ///
    /// # Errors
    /// As [`super::parquet::for_each_group`].
    pub fn for_each_group(
        self,
        name: &str,
        threads: usize,
        each: &mut dyn FnMut(super::parquet::RowLines) -> bool,
    ) -> Result<(), Error> {
        super::parquet::for_each_group(name, self.bytes, &self.column, threads, each)
    }

    /// The column's values one at a time (see
    /// [`super::parquet::for_each_value`]).
    ///
    /// # Errors
    /// As [`super::parquet::for_each_value`].
    pub fn for_each_value(
        self,
        name: &str,
        threads: usize,
        each: &mut dyn FnMut(Item<'_>) -> bool,
    ) -> Result<(), Error> {
        super::parquet::for_each_value(name, self.bytes, &self.column, threads, each)
    }
}

/// The engine's error for a reading failure.
pub fn read_error(
    e: ReadError,
    name: &str,
    format: Format,
    compression: Option<Compression>,
    offset: u64,
) -> Error {
    match e {
        ReadError::Io(source) => Error::Read {
            path: name.to_owned(),
            compression,
            offset,
            source,
        },
        ReadError::Fault(f) => Error::Format {
            path: name.to_owned(),
            format: format.name(),
            record: f.pos.record,
            byte: f.pos.byte,
            message: f.message,
        },
    }
}
