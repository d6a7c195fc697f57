//! WARC records (ISO 28500; WARC 1.1:
//! <https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/>),
//! read one at a time from a (decompressed) stream: the version line, the
//! named fields up to an empty line, then a block of exactly
//! `Content-Length` bytes, skipped or read, and the two CRLFs that end the
//! record.
//!
//! A small reader of our own rather than the `warc` crate (0.4): we need
//! each record's byte offset for reports, bodies skipped without being
//! buffered (responses run to megabytes; only the header is needed), and
//! the input as a stream our own member-parallel gzip decoder feeds, while
//! that crate buffers bodies or hands out a streaming body without
//! offsets, decompresses with libflate on one core, and pulls in chrono,
//! nom, uuid and url. The format needs no more than the few rules here.

use std::io::{self, BufRead, BufReader, Read};

use super::{FileFault, Item, RecordPos};
use crate::engine::Problem;

/// Most bytes of a record's header (version line and fields).
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// Why reading stopped.
#[derive(Debug)]
pub enum ReadError {
    /// The stream failed (I/O, or a decompression error).
    Io(io::Error),
    /// The content is not readable as WARC from here on.
    Fault(FileFault),
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        ReadError::Io(e)
    }
}

/// A record's header: the fields this crate reads.
#[derive(Clone, Debug, Default)]
pub struct Head {
    /// Record number (1-based) and the offset of its version line.
    pub pos: RecordPos,
    /// `WARC-Type`, lower-cased.
    pub warc_type: String,
    /// `WARC-Target-URI`, without the `<` `>` some writers put around it.
    pub target: Option<Vec<u8>>,
    /// `Content-Type`, lower-cased, without parameters.
    pub content_type: String,
    /// `WARC-Record-ID`.
    pub record_id: Vec<u8>,
    /// `Content-Length`: bytes of the block.
    pub content_length: u64,
}

impl<R> core::fmt::Debug for WarcReader<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("WarcReader").finish_non_exhaustive()
    }
}

/// Reads WARC records from a stream.
pub struct WarcReader<R> {
    reader: BufReader<R>,
    /// Bytes consumed so far.
    offset: u64,
    records: u64,
    line: Vec<u8>,
}

impl<R: Read> WarcReader<R> {
    /// A reader of `reader`, whose first byte is at offset 0.
    pub fn new(reader: R) -> Self {
        Self {
            reader: BufReader::with_capacity(1 << 18, reader),
            offset: 0,
            records: 0,
            line: Vec::new(),
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads one line (through `\n`) into `self.line`, at most `cap`
    /// bytes of it; returns the bytes consumed (0 at the end).
    fn read_line(&mut self, cap: usize) -> io::Result<usize> {
        self.line.clear();
        let n = (&mut self.reader)
            .take(cap as u64)
            .read_until(b'\n', &mut self.line)?;
        self.offset += n as u64;
        Ok(n)
    }

    /// The next record's header, or `None` at the end of the input. The
    /// caller then calls [`skip_body`](Self::skip_body) or
    /// [`read_body`](Self::read_body).
    ///
    /// # Errors
    /// [`ReadError::Io`] when the stream fails; [`ReadError::Fault`] when
    /// the next bytes are not a record, or its header is cut short, too
    /// long or has no valid `Content-Length`.
    pub fn next_head(&mut self) -> Result<Option<Head>, ReadError> {
        // Blank lines: the CRLF CRLF ending the previous record, and any
        // extra ones.
        let start = loop {
            let at = self.offset;
            if self.read_line(MAX_HEADER_BYTES)? == 0 {
                return Ok(None);
            }
            if !matches!(&self.line[..], b"\r\n" | b"\n") {
                break at;
            }
        };
        self.records += 1;
        let pos = RecordPos {
            record: self.records,
            byte: start,
        };
        let fault = |m: String| ReadError::Fault(FileFault::new(pos, m));
        if !self.line.starts_with(b"WARC/") {
            let shown = String::from_utf8_lossy(&self.line[..self.line.len().min(40)]);
            return Err(fault(format!(
                "expected a WARC record (a `WARC/1.x` line), found {:?}",
                shown.trim_end()
            )));
        }
        let mut head = Head {
            pos,
            ..Head::default()
        };
        let mut length = None;
        let mut header_bytes = self.line.len();
        loop {
            let n = self.read_line(MAX_HEADER_BYTES)?;
            header_bytes += n;
            if n == 0 {
                return Err(fault("the input ends inside the record's header".into()));
            }
            if header_bytes > MAX_HEADER_BYTES || !self.line.ends_with(b"\n") {
                return Err(fault(format!(
                    "the record's header is longer than {MAX_HEADER_BYTES} bytes"
                )));
            }
            let line = super::super::lines::trim_cr(&self.line[..self.line.len() - 1]);
            if line.is_empty() {
                break;
            }
            let Some(colon) = memchr::memchr(b':', line) else {
                // A continuation line (leading space) or a stray line:
                // nothing this reader needs.
                continue;
            };
            let (name, value) = (&line[..colon], line[colon + 1..].trim_ascii());
            if name.eq_ignore_ascii_case(b"WARC-Type") {
                head.warc_type = String::from_utf8_lossy(value).to_ascii_lowercase();
            } else if name.eq_ignore_ascii_case(b"WARC-Target-URI") {
                let v = value
                    .strip_prefix(b"<")
                    .and_then(|v| v.strip_suffix(b">"))
                    .unwrap_or(value);
                head.target = Some(v.to_vec());
            } else if name.eq_ignore_ascii_case(b"Content-Type") {
                let v = value.split(|&b| b == b';').next().unwrap_or_default();
                head.content_type = String::from_utf8_lossy(v.trim_ascii()).to_ascii_lowercase();
            } else if name.eq_ignore_ascii_case(b"WARC-Record-ID") {
                head.record_id = value.to_vec();
            } else if name.eq_ignore_ascii_case(b"Content-Length") {
                length = std::str::from_utf8(value)
                    .ok()
                    .and_then(|s| s.parse::<u64>().ok());
                if length.is_none() {
                    return Err(fault(format!(
                        "Content-Length {:?} is not a number",
                        String::from_utf8_lossy(value)
                    )));
                }
            }
        }
        head.content_length =
            length.ok_or_else(|| fault("the record has no Content-Length".into()))?;
        Ok(Some(head))
    }

    /// Skips the block of the record `head` (just read).
    ///
    /// # Errors
    /// As [`read_body`](Self::read_body).
    pub fn skip_body(&mut self, head: &Head) -> Result<(), ReadError> {
        let n = io::copy(
            &mut (&mut self.reader).take(head.content_length),
            &mut io::sink(),
        )?;
        self.offset += n;
        self.check_length(head, n)
    }

    /// Reads the block of the record `head` (just read) into `body`
    /// (replacing its content).
    ///
    /// # Errors
    /// [`ReadError::Fault`] when the input ends before `Content-Length`
    /// bytes; [`ReadError::Io`] when the stream fails.
    pub fn read_body(&mut self, head: &Head, body: &mut Vec<u8>) -> Result<(), ReadError> {
        body.clear();
        let n = (&mut self.reader)
            .take(head.content_length)
            .read_to_end(body)? as u64;
        self.offset += n;
        self.check_length(head, n)
    }

    fn check_length(&self, head: &Head, n: u64) -> Result<(), ReadError> {
        if n < head.content_length {
            return Err(ReadError::Fault(FileFault::new(
                head.pos,
                format!(
                    "Content-Length {} runs past the end of the input ({n} bytes of the block are there)",
                    head.content_length
                ),
            )));
        }
        Ok(())
    }
}

impl<R> core::fmt::Debug for WarcUrls<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("WarcUrls")
            .field("types", &self.types)
            .finish_non_exhaustive()
    }
}

/// The URLs of a WARC input: `WARC-Target-URI` of every record whose type
/// is one of `types`.
pub struct WarcUrls<R> {
    reader: WarcReader<R>,
    types: Vec<String>,
}

impl<R: Read> WarcUrls<R> {
    /// The records of `reader` of the given types (lower case).
    pub fn new(reader: R, types: &[String]) -> Self {
        Self {
            reader: WarcReader::new(reader),
            types: types.to_vec(),
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.reader.offset()
    }

    /// Reads the next record, passing its URL (or its fault) to `each`;
    /// false at the end of the input.
    ///
    /// # Errors
    /// As [`WarcReader::next_head`] and [`WarcReader::skip_body`].
    pub fn next_record(&mut self, each: &mut dyn FnMut(Item<'_>)) -> Result<bool, ReadError> {
        let Some(head) = self.reader.next_head()? else {
            return Ok(false);
        };
        self.reader.skip_body(&head)?;
        if !self.types.contains(&head.warc_type) {
            return Ok(true);
        }
        match &head.target {
            None => each(Item::Fault {
                text: &head.record_id,
                pos: head.pos,
                problem: Problem::MissingField,
                index: 0,
            }),
            Some(t) if t.is_empty() => each(Item::Fault {
                text: &head.record_id,
                pos: head.pos,
                problem: Problem::EmptyField,
                index: 0,
            }),
            Some(t) => match super::breaks_line(t) {
                Some(index) => each(Item::Fault {
                    text: t,
                    pos: head.pos,
                    problem: Problem::LineBreak,
                    index,
                }),
                None => each(Item::Url {
                    text: t,
                    pos: head.pos,
                }),
            },
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn record(kind: &str, target: Option<&str>, body: &[u8]) -> Vec<u8> {
        let mut r = format!("WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Record-ID: <urn:uuid:1>\r\n");
        if let Some(t) = target {
            r.push_str(&format!("WARC-Target-URI: {t}\r\n"));
        }
        r.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let mut r = r.into_bytes();
        r.extend_from_slice(body);
        r.extend_from_slice(b"\r\n\r\n");
        r
    }

    fn urls(data: &[u8], types: &[&str]) -> Result<Vec<(String, u64, u64)>, ReadError> {
        let types: Vec<String> = types.iter().map(|s| (*s).to_owned()).collect();
        let mut r = WarcUrls::new(data, &types);
        let mut out = Vec::new();
        while r.next_record(&mut |item| match item {
            Item::Url { text, pos } => out.push((
                String::from_utf8_lossy(text).into_owned(),
                pos.record,
                pos.byte,
            )),
            Item::Fault { problem, pos, .. } => {
                out.push((format!("!{}", problem.name()), pos.record, pos.byte));
            }
        })? {}
        Ok(out)
    }

    #[test]
    fn warc_target_uris_by_type() {
        let mut data = record("warcinfo", None, b"software: x\r\n");
        let second = data.len() as u64;
        data.extend(record(
            "request",
            Some("http://a/"),
            b"GET / HTTP/1.1\r\n\r\n",
        ));
        let third = data.len() as u64;
        data.extend(record(
            "response",
            Some("<http://a/>"),
            b"HTTP/1.1 200 OK\r\n\r\nhi",
        ));
        data.extend(record("response", None, b""));
        let got = urls(&data, &["response"]).unwrap();
        assert_eq!(got[0], ("http://a/".to_owned(), 3, third));
        assert_eq!(got[1].0, "!missing-field");
        let got = urls(&data, &["request", "response"]).unwrap();
        assert_eq!(got[0], ("http://a/".to_owned(), 2, second));
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn warc_faults_stop_the_file() {
        let mut data = record("response", Some("http://a/"), b"0123456789");
        let whole = data.len();
        data.truncate(whole - 8);
        match urls(&data, &["response"]) {
            Err(ReadError::Fault(f)) => {
                assert_eq!((f.pos.record, f.pos.byte), (1, 0));
                assert!(
                    f.message.contains("Content-Length 10 runs past the end"),
                    "{}",
                    f.message
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            urls(b"hello\n", &["response"]),
            Err(ReadError::Fault(_))
        ));
        let no_length = b"WARC/1.0\r\nWARC-Type: response\r\n\r\n";
        assert!(matches!(
            urls(no_length, &["response"]),
            Err(ReadError::Fault(_))
        ));
        assert_eq!(urls(b"", &["response"]).unwrap(), vec![]);
    }
}
