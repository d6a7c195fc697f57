//! Opening an input in its format, given or detected from its first bytes.

use std::io::{self, Cursor, Read};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use super::detect::{detect, DETECT_BYTES};
#[cfg(feature = "parquet")]
use super::reader::ParquetFile;
use super::reader::{Reader, RecordSource};
use super::warc::WarcUrls;
use super::wat::WatLinks;
use super::{cdx, Extract, Format, InputFormat};
use crate::engine::error::Error;
#[cfg(feature = "parquet")]
use crate::engine::input::SharedBytes;
use crate::engine::input::{self, lines, Compression, Input, MmapChoice, Source};
use crate::engine::Field;

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
    /// Its reader.
    pub reader: Reader,
}

/// Opens `input` and finds its format: `field` means plain lines with a
/// column; else `format.format`, or the format [`detect`] finds in its
/// first bytes. A multi-member gzip input decompresses on `threads`
/// threads (0: one per core). The one way in for the pipeline and for
/// [`for_each_record`](super::for_each_record).
///
/// # Errors
/// [`Error::Open`]/[`Error::Read`] when the input cannot be read; [`Error::Format`]
/// for a CDX header without an original-URL column; [`Error::Unsupported`]
/// for a Parquet input in a build without Parquet.
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
            reader: Reader::Lines {
                source,
                extract: Extract::Field(f),
            },
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
        Format::Lines => Extract::Line,
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
        Format::Warc | Format::Wat | Format::Arc => {
            let (stream, compression) = source.into_reader();
            let records: Box<dyn RecordSource> = match format_found {
                Format::Wat => Box::new(WatLinks::new(stream)),
                Format::Arc => Box::new(super::arc::ArcUrls::new(stream)),
                _ => Box::new(WarcUrls::new(stream, &format.warc_types)),
            };
            return Ok(Opened {
                name,
                format: format_found,
                reader: Reader::Records {
                    records,
                    compression,
                },
            });
        }
        Format::Parquet => {
            let reader = parquet_reader(&name, source, &format.column)?;
            return Ok(Opened {
                name,
                format: format_found,
                reader,
            });
        }
    };
    Ok(Opened {
        name,
        format: format_found,
        reader: Reader::Lines { source, extract },
    })
}

/// A Parquet input: all of it in memory (a Parquet file is read from its
/// footer), then row groups.
#[cfg(feature = "parquet")]
fn parquet_reader(name: &str, source: Source, column: &str) -> Result<Reader, Error> {
    let bytes = into_bytes(source).map_err(|source| Error::Read {
        path: name.to_owned(),
        compression: None,
        offset: 0,
        source,
    })?;
    Ok(Reader::Parquet(ParquetFile {
        bytes,
        column: column.to_owned(),
    }))
}

#[cfg(not(feature = "parquet"))]
fn parquet_reader(name: &str, _source: Source, _column: &str) -> Result<Reader, Error> {
    Err(Error::Unsupported(format!(
        "{name} is a Parquet file; this build reads no Parquet (feature `parquet`)"
    )))
}

/// The content of `source` in memory (a Parquet file needs all of it).
///
/// # Errors
/// The stream's error.
#[cfg(feature = "parquet")]
fn into_bytes(source: Source) -> io::Result<SharedBytes> {
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
