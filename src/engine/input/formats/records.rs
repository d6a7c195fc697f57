//! Opening an input in its format (given, or detected from its first
//! bytes), the lines record formats write for the engine ([`Lines`]), and
//! reading every URL of some inputs one at a time ([`for_each_record`],
//! for the per-line commands).

use std::io::{self, Cursor, Read};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use super::super::chunk::{Chunk, ChunkData, RecordFault, RecordIndex};
use super::detect::{detect, DETECT_BYTES};
use super::warc::{ReadError, WarcUrls};
use super::wat::WatLinks;
use super::{cdx, Extract, Extracted, Format, InputFormat, Item, RecordPos};
use crate::engine::error::Error;
use crate::engine::input::{self, Compression, Input, MmapChoice, SharedBytes, Source};
use crate::engine::{input::lines, Field, Problem};

impl core::fmt::Debug for Opened {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Opened")
            .field("name", &self.name)
            .field("format", &self.format)
            .finish_non_exhaustive()
    }
}

/// An input opened in its format.
pub struct Opened {
    /// The input's name.
    pub name: String,
    /// Its format.
    pub format: Format,
    /// How the URL of a line is found (line formats).
    pub extract: Extract,
    /// The content.
    pub source: Source,
}

/// Opens `input` and finds its format: `field` means plain lines with a
/// column; else `format.format`, or the format [`detect`] finds in its
/// first bytes. A multi-member gzip input decompresses on `threads`
/// threads (0: one per core).
///
/// # Errors
/// [`Error::Open`]/[`Error::Read`] when the input cannot be read; [`Error::Format`]
/// for a CDX header without an original-URL column; [`Error::Config`] when
/// its first bytes fit more than one format ([`detect`]'s `Unsure`).
pub fn open(
    input: Input,
    format: &InputFormat,
    field: Option<Field>,
    mmap: MmapChoice,
    threads: usize,
    raw_read: &Arc<AtomicU64>,
) -> Result<Opened, Error> {
    let name = input.name();
    let mut source = input::open(input, mmap, threads, raw_read)?;
    if let Some(f) = field {
        return Ok(Opened {
            name,
            format: Format::Lines,
            extract: Extract::Field(f),
            source,
        });
    }
    let need_head = format.format.is_none() || format.format == Some(Format::Cdx);
    let mut head = Vec::new();
    if need_head {
        match &mut source {
            Source::Slice(bytes) => {
                let all = bytes.as_slice();
                head.extend_from_slice(&all[..all.len().min(DETECT_BYTES)]);
            }
            Source::Stream {
                reader,
                compression,
            } => {
                let mut taken = std::mem::replace(reader, Box::new(io::empty()));
                (&mut taken)
                    .take(DETECT_BYTES as u64)
                    .read_to_end(&mut head)
                    .map_err(|source| Error::Read {
                        path: name.clone(),
                        compression: *compression,
                        offset: 0,
                        source,
                    })?;
                *reader = Box::new(Cursor::new(head.clone()).chain(taken));
            }
            Source::Members(reader) => {
                head = reader.head(DETECT_BYTES).map_err(|source| Error::Read {
                    path: name.clone(),
                    compression: Some(Compression::Gzip),
                    offset: 0,
                    source,
                })?;
            }
        }
    }
    let format_found = match format.format {
        Some(f) => f,
        None => detect(&head).map_err(|unsure| Error::Config(unsure.message(&name)))?,
    };
    let extract = match format_found {
        Format::Cdxj => Extract::Cdxj,
        Format::Cdx => {
            let body = head.strip_prefix(lines::BOM).unwrap_or(&head);
            let first = body
                .split(|&b| b == b'\n')
                .map(lines::trim_cr)
                .find(|l| !l.is_empty())
                .unwrap_or_default();
            let column = if cdx::is_header(first) {
                cdx::column_of_header(first).ok_or_else(|| Error::Format {
                    path: name.clone(),
                    format: "cdx",
                    record: 0,
                    byte: 0,
                    message: format!(
                        "the header line {:?} names no original-URL column (`a`)",
                        String::from_utf8_lossy(first)
                    ),
                })?
            } else {
                cdx::DEFAULT_COLUMN
            };
            Extract::Cdx { column }
        }
        _ => Extract::Line,
    };
    Ok(Opened {
        name,
        format: format_found,
        extract,
        source,
    })
}

/// The content of `source` as a stream, and its compression.
pub fn into_reader(source: Source) -> (Box<dyn Read + Send>, Option<Compression>) {
    source.into_reader()
}

/// The content of `source` in memory (a Parquet file needs all of it).
///
/// # Errors
/// The stream's error.
pub fn into_bytes(source: Source) -> io::Result<SharedBytes> {
    match source {
        Source::Slice(bytes) => Ok(bytes),
        stream => {
            let (mut reader, _) = stream.into_reader();
            let mut all = Vec::new();
            reader.read_to_end(&mut all)?;
            Ok(SharedBytes::from_memory(Arc::from(all)))
        }
    }
}

impl core::fmt::Debug for RecordReader {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RecordReader").finish_non_exhaustive()
    }
}

/// A reader of the records of a WARC or WAT input.
pub enum RecordReader {
    /// `WARC-Target-URI` of the chosen record types.
    Warc(WarcUrls<Box<dyn Read + Send>>),
    /// The outlinks of WAT records.
    Wat(WatLinks<Box<dyn Read + Send>>),
}

impl RecordReader {
    /// A reader for `format` (WARC or WAT) over `reader`.
    pub fn new(format: Format, reader: Box<dyn Read + Send>, opts: &InputFormat) -> Self {
        if format == Format::Wat {
            RecordReader::Wat(WatLinks::new(reader))
        } else {
            RecordReader::Warc(WarcUrls::new(reader, &opts.warc_types))
        }
    }

    /// Reads the next record (see [`WarcUrls::next_record`]).
    ///
    /// # Errors
    /// As [`WarcUrls::next_record`].
    pub fn next_record(&mut self, each: &mut dyn FnMut(Item<'_>)) -> Result<bool, ReadError> {
        match self {
            RecordReader::Warc(r) => r.next_record(each),
            RecordReader::Wat(r) => r.next_record(each),
        }
    }

    /// Bytes of the (decompressed) input consumed.
    pub fn offset(&self) -> u64 {
        match self {
            RecordReader::Warc(r) => r.offset(),
            RecordReader::Wat(r) => r.offset(),
        }
    }

    /// The engine's error for a reading failure of input `name`.
    pub fn error(
        &self,
        e: ReadError,
        name: &str,
        format: Format,
        compression: Option<Compression>,
    ) -> Error {
        read_error(e, name, format, compression, self.offset())
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

impl core::fmt::Debug for Lines {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Lines")
            .field("input", &self.input)
            .finish_non_exhaustive()
    }
}

/// The lines a record format writes, gathered into chunks: one line per
/// URL (what `--emit original` prints), and one per invalid record (its
/// text, line breaks replaced by spaces), with where each comes from.
pub struct Lines {
    input: usize,
    extract: Extract,
    buf: Vec<u8>,
    index: RecordIndex,
    /// Offset of the next chunk in the stream of written lines.
    offset: u64,
}

impl Lines {
    /// Lines of input number `input`, whose URL `extract` finds.
    pub fn new(input: usize, extract: Extract) -> Self {
        Self {
            input,
            extract,
            buf: Vec::new(),
            index: RecordIndex::default(),
            offset: 0,
        }
    }

    /// Bytes gathered.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when nothing is gathered.
    pub fn is_empty(&self) -> bool {
        self.index.pos.is_empty()
    }

    /// Adds a line for `item`.
    pub fn push(&mut self, item: Item<'_>) {
        let ordinal = self.index.pos.len() as u32;
        match item {
            Item::Url { text, pos } => {
                self.buf.extend_from_slice(text);
                self.index.pos.push(pos);
            }
            Item::Fault {
                text,
                pos,
                problem,
                index,
            } => {
                super::push_as_one_line(&mut self.buf, text);
                self.index.pos.push(pos);
                self.index.faults.push(RecordFault {
                    ordinal,
                    problem,
                    index: index.min(text.len()) as u32,
                });
            }
        }
        self.buf.push(b'\n');
    }

    /// The lines gathered as a chunk (`None` when there are none), once
    /// `input_end` bytes of the input are read.
    pub fn take(&mut self, input_end: u64) -> Option<Chunk> {
        if self.is_empty() {
            return None;
        }
        // The next chunk starts with the room this one took: grown from
        // empty, its buffers were copied at each doubling.
        let (len, lines) = (self.buf.len(), self.index.pos.len());
        let data = std::mem::replace(&mut self.buf, Vec::with_capacity(len));
        let next = RecordIndex {
            pos: Vec::with_capacity(lines),
            ..RecordIndex::default()
        };
        let mut index = std::mem::replace(&mut self.index, next);
        index.input_end = input_end;
        let chunk = Chunk {
            input: self.input,
            offset: self.offset,
            truncated_tail: false,
            extract: self.extract,
            records: Some(Box::new(index)),
            data: ChunkData::Owned(data),
        };
        self.offset += chunk.bytes().len() as u64;
        Some(chunk)
    }
}

/// The [`Extract`] of the lines a record format writes: the link column
/// of WAT's `page<TAB>link`, the whole line otherwise.
pub fn record_extract(format: Format) -> Extract {
    if format == Format::Wat {
        Extract::Field(Field {
            index: 1,
            delimiter: b'\t',
            csv: false,
        })
    } else {
        Extract::Line
    }
}

impl core::fmt::Debug for Record<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Record")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// One URL of an input, as [`for_each_record`] passes it.
pub struct Record<'a> {
    /// The input's name (`-` for stdin).
    pub source: &'a str,
    /// 1-based line number (record formats: record number; Parquet: row).
    pub number: u64,
    /// Byte offset of the line or record in the (decompressed) input.
    pub offset: u64,
    /// What `--emit original` prints (cut to the line limit).
    pub original: &'a [u8],
    /// The URL, or what is wrong at which byte of `original`. A blank line
    /// or a header line is not passed on.
    pub url: Result<&'a [u8], (usize, Problem)>,
    /// `original` is the input's line at `offset` (so a fault's byte is
    /// `offset` plus its index), not a line a record format wrote.
    pub is_line: bool,
    /// Where the URL starts in `original`, and how it was found there (for
    /// [`byte_of_url`](Self::byte_of_url)).
    pub url_start: usize,
    /// How the URL was found in `original`.
    pub extract: Extract,
}

impl Record<'_> {
    /// The byte of the input a fault at `index` of `original` is reported
    /// at: that byte for lines, the record's offset for records.
    pub fn byte_of(&self, index: usize) -> u64 {
        if self.is_line {
            self.offset + index as u64
        } else {
            self.offset
        }
    }

    /// The byte of the input a fault at `index` of the URL (not of
    /// `original`: a key error) is reported at: for lines, where that
    /// byte of the URL is written (a CDXJ escape's first byte); for
    /// records, the record's offset.
    pub fn byte_of_url(&self, index: usize) -> u64 {
        if self.is_line {
            self.offset
                + self
                    .extract
                    .line_index(self.original, self.url_start, index) as u64
        } else {
            self.offset
        }
    }
}

/// Calls `each` for every URL (or invalid line or record) of `inputs`, in
/// order, each input read in its format (see [`open`]). Lines are held one
/// at a time, records one at a time, Parquet row groups one at a time.
///
/// # Errors
/// [`Error::Open`], [`Error::Read`] or [`Error::Format`] naming the input,
/// or the first error of `each`.
pub fn for_each_record<E: From<Error>>(
    inputs: Vec<Input>,
    format: &InputFormat,
    field: Option<Field>,
    max_line_bytes: usize,
    mut each: impl FnMut(&Record<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let raw_read = Arc::new(AtomicU64::new(0));
    let mut buf = Vec::new();
    for input in inputs {
        let opened = open(input, format, field, MmapChoice::never(), 0, &raw_read)?;
        let name = opened.name;
        let extract = opened.extract;
        match opened.format {
            Format::Lines | Format::Cdxj | Format::Cdx => {
                let (reader, compression) = into_reader(opened.source);
                lines::lines_of(&name, reader, compression, max_line_bytes, |line| {
                    let mut url_start = 0;
                    let url = if line.too_long {
                        Err((max_line_bytes, Problem::LineTooLong))
                    } else {
                        match super::extract_url(line.bytes, extract, &mut buf) {
                            Extracted::Url { start, url } => {
                                url_start = start;
                                Ok(url)
                            }
                            Extracted::Header => return Ok(()),
                            Extracted::Invalid { index, problem } => Err((index, problem)),
                        }
                    };
                    each(&Record {
                        source: &name,
                        number: line.number,
                        offset: line.offset,
                        original: line.bytes,
                        url,
                        is_line: true,
                        url_start,
                        extract,
                    })
                })?;
            }
            Format::Warc | Format::Wat => {
                let fmt = opened.format;
                let (reader, compression) = into_reader(opened.source);
                let mut records = RecordReader::new(fmt, reader, format);
                let link = record_extract(fmt);
                let mut result = Ok(());
                loop {
                    let more = records.next_record(&mut |item| {
                        if result.is_err() {
                            return;
                        }
                        result = each_item(&name, item, link, max_line_bytes, &mut buf, &mut each);
                    });
                    std::mem::replace(&mut result, Ok(()))?;
                    match more {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(e) => return Err(records.error(e, &name, fmt, compression).into()),
                    }
                }
            }
            Format::Parquet => {
                #[cfg(feature = "parquet")]
                {
                    let bytes = into_bytes(opened.source).map_err(|source| Error::Read {
                        path: name.clone(),
                        compression: None,
                        offset: 0,
                        source,
                    })?;
                    let mut result = Ok(());
                    super::parquet::for_each_value(&name, bytes, &format.column, 1, &mut |item| {
                        if result.is_ok() {
                            result = each_item(
                                &name,
                                item,
                                Extract::Line,
                                max_line_bytes,
                                &mut buf,
                                &mut each,
                            );
                        }
                        result.is_ok()
                    })?;
                    result?;
                }
                #[cfg(not(feature = "parquet"))]
                return Err(Error::Config(format!(
                    "{name} is a Parquet file; this build reads no Parquet (feature `parquet`)"
                ))
                .into());
            }
        }
    }
    Ok(())
}

/// Passes one item of a record format to `each`.
fn each_item<E>(
    name: &str,
    item: Item<'_>,
    extract: Extract,
    max_line_bytes: usize,
    buf: &mut Vec<u8>,
    each: &mut impl FnMut(&Record<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let (text, pos, url) = match item {
        Item::Url { text, pos } => {
            let url = if text.len() > max_line_bytes {
                Err((max_line_bytes, Problem::LineTooLong))
            } else {
                match super::extract_url(text, extract, buf) {
                    Extracted::Url { url, .. } => Ok(url),
                    Extracted::Header => return Ok(()),
                    Extracted::Invalid { index, problem } => Err((index, problem)),
                }
            };
            (text, pos, url)
        }
        Item::Fault {
            text,
            pos,
            problem,
            index,
        } => (text, pos, Err((index, problem))),
    };
    let original = &text[..text.len().min(max_line_bytes)];
    let RecordPos { record, byte } = pos;
    each(&Record {
        source: name,
        number: record,
        offset: byte,
        original,
        url,
        is_line: false,
        url_start: 0,
        extract,
    })
}
