//! Every URL of some inputs, one at a time, for the per-line commands
//! (`urikey normalize`): the same readers the pipeline uses, without its
//! chunks and threads.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use super::open::{open, Opened};
use super::reader::{read_error, Reader};
use super::{Extract, Extracted, InputFormat, Item, RecordPos};
use crate::engine::error::Error;
use crate::engine::input::{lines, Input, MmapChoice};
use crate::engine::{Field, Problem};

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
    /// Where the URL starts in `original` (for
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
/// order, each input read in its format (see [`open`](super::open)). Lines are held one
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
        let Opened { name, reader, .. } =
            open(input, format, field, MmapChoice::never(), 0, &raw_read)?;
        match reader {
            Reader::Lines { source, extract } => {
                let (reader, compression) = source.into_reader();
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
            Reader::Records {
                mut records,
                compression,
            } => {
                let link = records.extract();
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
                        Err(e) => {
                            let offset = records.offset();
                            return Err(read_error(
                                e,
                                &name,
                                records.format(),
                                compression,
                                offset,
                            )
                            .into());
                        }
                    }
                }
            }
            #[cfg(feature = "parquet")]
            Reader::Parquet(file) => {
                let mut result = Ok(());
                file.for_each_value(&name, 1, &mut |item| {
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
