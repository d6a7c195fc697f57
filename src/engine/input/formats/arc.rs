//! ARC files, the Internet Archive's format before WARC (the ARC file
//! format, versions 1 and 2:
//! <https://archive.org/web/researcher/ArcFileFormat.php>), read one record
//! at a time from a (decompressed) stream, as [`WarcUrls`](super::warc::WarcUrls)
//! reads WARC: the URL of every record.
//!
//! A record is a header line of space-separated fields, then exactly
//! `Archive-length` bytes (the header line's last field), then a newline.
//! Version 1 header lines have five fields (`URL IP-address Archive-date
//! Content-type Archive-length`), version 2 ten (`URL IP-address
//! Archive-date Content-type Result-code Checksum Location Offset Filename
//! Archive-length`). The first record is the file's own description, URL
//! `filedesc://NAME`, whose block names the version; it holds no capture
//! and is skipped. Gzip per record (`.arc.gz`) is decompressed before this
//! reader, as every gzip input is.

use std::io::{self, BufRead, BufReader, Read};

use super::warc::ReadError;
use super::{breaks_line, FileFault, Item, RecordPos};
use crate::engine::Problem;

/// Most bytes of a record's header line.
const MAX_HEADER_BYTES: usize = 64 << 10;

/// The URL of an ARC file's first record.
pub const FILEDESC: &[u8] = b"filedesc://";

impl<R> core::fmt::Debug for ArcUrls<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ArcUrls")
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

/// The URL of every capture of an ARC stream, a record at a time.
pub struct ArcUrls<R> {
    reader: BufReader<R>,
    /// Bytes consumed so far.
    offset: u64,
    records: u64,
    line: Vec<u8>,
}

/// True when a header line has a version 1 or 2 shape: five or ten
/// fields, the last a length (for detection).
pub fn is_header_line(line: &[u8]) -> bool {
    let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    (fields.len() == 5 || fields.len() == 10)
        && fields
            .last()
            .is_some_and(|f| !f.is_empty() && f.iter().all(u8::is_ascii_digit))
}

impl<R: Read> ArcUrls<R> {
    /// A reader of `reader`, whose first byte is at offset 0.
    pub fn new(reader: R) -> Self {
        Self {
            reader: BufReader::with_capacity(1 << 18, reader),
            offset: 0,
            records: 0,
            line: Vec::new(),
        }
    }

    /// Bytes of the input consumed.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads the next record, handing its URL (or its fault) to `each`;
    /// false at the end of the input.
    ///
    /// # Errors
    /// [`ReadError::Io`] when the stream fails; [`ReadError::Fault`] when a
    /// header line is not an ARC header or a block runs past the end.
    pub fn next_record(&mut self, each: &mut dyn FnMut(Item<'_>)) -> Result<bool, ReadError> {
        // Blank lines between records (the newline that ends each block;
        // some writers leave more).
        loop {
            let buf = self.reader.fill_buf()?;
            match buf.first() {
                None => return Ok(false),
                Some(b'\n' | b'\r') => {
                    self.reader.consume(1);
                    self.offset += 1;
                }
                Some(_) => break,
            }
        }
        let start = self.offset;
        self.records += 1;
        let pos = RecordPos {
            record: self.records,
            byte: start,
        };
        self.line.clear();
        let n = (&mut self.reader)
            .take(MAX_HEADER_BYTES as u64)
            .read_until(b'\n', &mut self.line)?;
        self.offset += n as u64;
        let fault = |message: String| ReadError::Fault(FileFault::new(pos, message));
        if !self.line.ends_with(b"\n") {
            return Err(fault("an ARC header line cut short or too long".into()));
        }
        let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !is_header_line(line) {
            return Err(fault(format!(
                "not an ARC header line (five or ten fields, the last a length): {:?}",
                String::from_utf8_lossy(&line[..line.len().min(200)])
            )));
        }
        let length = line
            .rsplit(|&b| b == b' ')
            .next()
            .and_then(|f| std::str::from_utf8(f).ok())
            .and_then(|f| f.parse::<u64>().ok())
            .ok_or_else(|| fault("the archive length does not fit".into()))?;
        let url = line.split(|&b| b == b' ').next().unwrap_or_default();
        if !url.starts_with(FILEDESC) {
            match (url.is_empty(), breaks_line(url)) {
                (true, _) => each(Item::Fault {
                    text: line,
                    pos,
                    problem: Problem::EmptyField,
                    index: 0,
                }),
                (false, Some(i)) => each(Item::Fault {
                    text: line,
                    pos,
                    problem: Problem::LineBreak,
                    index: i,
                }),
                (false, None) => each(Item::Url { text: url, pos }),
            }
        }
        let skipped = io::copy(&mut (&mut self.reader).take(length), &mut io::sink())?;
        self.offset += skipped;
        if skipped < length {
            return Err(fault(format!(
                "the record's archive length ({length} bytes) runs past the end of the input"
            )));
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(file: &[u8]) -> (Vec<(String, u64, u64)>, Option<String>) {
        let mut r = ArcUrls::new(file);
        let mut got = Vec::new();
        loop {
            let more = r.next_record(&mut |item| {
                if let Item::Url { text, pos } = item {
                    got.push((
                        String::from_utf8_lossy(text).into_owned(),
                        pos.record,
                        pos.byte,
                    ));
                }
            });
            match more {
                Ok(true) => {}
                Ok(false) => return (got, None),
                Err(ReadError::Fault(f)) => return (got, Some(f.message)),
                Err(ReadError::Io(e)) => return (got, Some(e.to_string())),
            }
        }
    }

    fn record(header: &str, body: &str) -> String {
        format!("{header} {}\n{body}\n", body.len())
    }

    #[test]
    fn arc_v1_and_v2_records() {
        let v1 = [
            record(
                "filedesc://x.arc 0.0.0.0 19960101000000 text/plain",
                "1 0 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n",
            ),
            record(
                "http://a.example/ 1.2.3.4 19960101000001 text/html",
                "HTTP/1.0 200 OK\n\nhi",
            ),
            record("http://b.example/x 1.2.3.4 19960101000002 text/html", ""),
        ]
        .concat();
        let (got, err) = urls(v1.as_bytes());
        assert_eq!(err, None);
        let second = v1.find("http://a").unwrap() as u64;
        assert_eq!(
            got,
            [
                ("http://a.example/".to_owned(), 2, second),
                (
                    "http://b.example/x".to_owned(),
                    3,
                    v1.find("http://b").unwrap() as u64
                ),
            ]
        );
        let v2 = [
            record(
                "filedesc://y.arc 0.0.0.0 20000101000000 text/plain 200 - - 0 y.arc",
                "2 0 Alexa Internet\n",
            ),
            record(
                "http://c.example/ 1.2.3.4 20000101000001 text/html 200 ABC - 100 y.arc",
                "x",
            ),
        ]
        .concat();
        assert_eq!(urls(v2.as_bytes()).0[0].0, "http://c.example/");
    }

    #[test]
    fn arc_faults_stop_the_reading() {
        let cut = "http://a.example/ 1.2.3.4 19960101000001 text/html 50\nshort";
        let (got, err) = urls(cut.as_bytes());
        assert_eq!(got.len(), 1);
        assert!(err.unwrap().contains("runs past the end"));
        let (_, err) = urls(b"not an arc header\n");
        assert!(err.unwrap().contains("not an ARC header line"));
    }
}
