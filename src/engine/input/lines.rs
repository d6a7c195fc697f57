//! The line rules every command shares, in one place: a UTF-8 byte-order
//! mark at the start of an input is skipped, a `\r` before the `\n` is
//! dropped, a missing final newline is fine, a line longer than the limit
//! is invalid (only its first bytes are kept), and `--field` takes one
//! column of a line. `dedup` applies them chunk by chunk ([`crate::engine::run()`]);
//! the per-line commands read with [`for_each_line`]. Invalid lines are
//! reported in one format ([`InvalidLine`](crate::engine::InvalidLine)'s `Display`).

use std::io::{self, BufRead, BufReader, Read};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use crate::engine::error::Error;
use crate::engine::input::{self, Compression, Input, MmapChoice};
use crate::engine::Field;

/// Default longest line, in bytes (without `\n` and `\r`).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The UTF-8 byte-order mark, skipped at the start of an input.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `raw` (a line without its `\n`) without a final `\r`.
#[inline]
pub fn trim_cr(raw: &[u8]) -> &[u8] {
    raw.strip_suffix(b"\r").unwrap_or(raw)
}

/// The column `f` of `line`, as a range, or `None` when the line has fewer
/// columns.
#[inline]
pub fn find_field(line: &[u8], f: Field) -> Option<(usize, usize)> {
    let mut start = 0usize;
    let mut delims = memchr::memchr_iter(f.delimiter, line);
    for _ in 0..f.index {
        start = delims.next()? + 1;
    }
    let end = delims.next().unwrap_or(line.len());
    Some((start, end))
}

/// Does `start` (the first chunk of an input) look like binary data? At
/// least half of the lines in its first 64 KiB (at least 4 lines, or all
/// of a shorter input) hold a NUL byte, which no text line does.
pub fn looks_binary(start: &[u8]) -> bool {
    let head = &start[..start.len().min(64 << 10)];
    if memchr::memchr(0, head).is_none() {
        return false; // the common case: one scan, no NUL
    }
    let (mut lines, mut with_nul) = (0u32, 0u32);
    for line in head.split(|&b| b == b'\n') {
        lines += 1;
        with_nul += u32::from(memchr::memchr(0, line).is_some());
    }
    with_nul * 2 >= lines
}

/// Where column `f` of a line is: `line[start..end]` as written, and
/// the URL it holds, `line[start..end]` itself or (for a quoted CSV field)
/// the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldSpan {
    /// The column as written: its first byte.
    pub start: usize,
    /// The column as written: one past its last byte.
    pub end: usize,
    /// The text is the unquoted content in the buffer (a CSV field), not
    /// `line[start..end]`.
    pub unquoted: bool,
}

impl FieldSpan {
    /// The URL the column holds.
    pub fn text<'a>(&self, line: &'a [u8], buf: &'a [u8]) -> &'a [u8] {
        if self.unquoted {
            buf
        } else {
            line.get(self.start..self.end).unwrap_or_default()
        }
    }

    /// Offset in the line of the column's first content byte (after an
    /// opening quote), for error positions.
    pub fn content_start(&self, line: &[u8]) -> usize {
        self.start + usize::from(self.unquoted && line.get(self.start) == Some(&b'"'))
    }
}

/// Column `f` of `line`, or `None` when the line has fewer columns. With
/// [`Field::csv`] the line is read with RFC 4180 quoting (by `csv-core`)
/// and the unquoted content goes to `buf`.
#[inline]
pub fn field_span(line: &[u8], f: Field, buf: &mut Vec<u8>) -> Option<FieldSpan> {
    if !f.csv {
        let (start, end) = find_field(line, f)?;
        return Some(FieldSpan {
            start,
            end,
            unquoted: false,
        });
    }
    csv_field(line, f, buf)
}

/// [`field_span`] for a CSV line.
fn csv_field(line: &[u8], f: Field, buf: &mut Vec<u8>) -> Option<FieldSpan> {
    use csv_core::ReadFieldResult;
    // The line has no `\n`: with it as the only terminator, a `\r` inside
    // the line is data, as everywhere else in the line rules.
    let mut reader = csv_core::ReaderBuilder::new()
        .delimiter(f.delimiter)
        .terminator(csv_core::Terminator::Any(b'\n'))
        .build();
    // Unquoting never makes a field longer than the line.
    buf.clear();
    buf.resize(line.len() + 1, 0);
    let mut pos = 0;
    let mut column = 0;
    loop {
        let start = pos;
        let mut len = 0;
        let record_end = loop {
            let (result, read, written) = reader.read_field(&line[pos..], &mut buf[len..]);
            pos += read;
            len += written;
            match result {
                // The line is all there: the next call (with nothing left)
                // ends the field.
                ReadFieldResult::InputEmpty => {}
                ReadFieldResult::Field { record_end } => break record_end,
                ReadFieldResult::OutputFull | ReadFieldResult::End => return None,
            }
        };
        if column == f.index {
            buf.truncate(len);
            // A field that is not the last ends before its delimiter.
            let end = if record_end { pos } else { pos - 1 };
            return Some(FieldSpan {
                start,
                end,
                unquoted: true,
            });
        }
        if record_end {
            return None;
        }
        column += 1;
    }
}

/// Writes `line` with column `span` replaced by `key` (for `--emit
/// canonical --field`). In CSV mode the key is quoted when the column was
/// or when the key holds the delimiter or a quote (RFC 4180 §2).
pub fn replace_field(line: &[u8], span: FieldSpan, f: Field, key: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(line.get(..span.start).unwrap_or_default());
    let quote = f.csv
        && (line.get(span.start) == Some(&b'"')
            || key.iter().any(|&b| b == f.delimiter || b == b'"'));
    if quote {
        out.push(b'"');
        for &b in key {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(key);
    }
    out.extend_from_slice(line.get(span.end..).unwrap_or_default());
}

/// One input line, as [`for_each_line`] passes it.
#[derive(Debug)]
pub struct Line<'a> {
    /// The input's name (`-` for stdin).
    pub source: &'a str,
    /// 1-based line number within its input.
    pub number: u64,
    /// Byte offset of the line's first byte within its (decompressed) input.
    pub offset: u64,
    /// The line without `\n`/`\r`; its first `max_line_bytes` when longer.
    pub bytes: &'a [u8],
    /// The line is longer than the limit: it is invalid.
    pub too_long: bool,
}

/// Calls `each` for every line of `inputs`, in order, holding one line in
/// memory at a time (at most `max_line_bytes` of it, so an input without
/// newlines cannot exhaust memory). gzip and zstd inputs are decompressed.
///
/// # Errors
/// [`Error::Open`]/[`Error::Read`] naming the input, or the first error of
/// `each`.
pub fn for_each_line<E: From<Error>>(
    inputs: Vec<Input>,
    mmap: MmapChoice,
    max_line_bytes: usize,
    mut each: impl FnMut(&Line<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let raw_read = Arc::new(AtomicU64::new(0));
    for input in inputs {
        let name = input.name();
        let (reader, compression) = input::open(input, mmap, 0, &raw_read)?.into_reader();
        lines_of(&name, reader, compression, max_line_bytes, &mut each)?;
    }
    Ok(())
}

/// [`for_each_line`] for one input, `reader`, named `name`.
///
/// # Errors
/// [`Error::Read`] naming the input, or the first error of `each`.
pub fn lines_of<E: From<Error>>(
    name: &str,
    reader: impl Read,
    compression: Option<Compression>,
    max_line_bytes: usize,
    mut each: impl FnMut(&Line<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let mut buf = Vec::new();
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    let mut offset = 0u64;
    let mut number = 0u64;
    loop {
        buf.clear();
        // Room for the longest line plus a BOM and `\r\n`.
        let (n, cut) =
            read_line_bounded(&mut reader, &mut buf, max_line_bytes + 5).map_err(|source| {
                Error::Read {
                    path: name.to_owned(),
                    compression,
                    offset,
                    source,
                }
            })?;
        if n == 0 {
            break;
        }
        number += 1;
        let mut bytes = &buf[..];
        let bom = offset == 0 && bytes.starts_with(BOM);
        if bom {
            bytes = &bytes[BOM.len()..];
        }
        let start = offset + if bom { BOM.len() as u64 } else { 0 };
        if !cut {
            bytes = trim_cr(bytes.strip_suffix(b"\n").unwrap_or(bytes));
        }
        let too_long = cut || bytes.len() > max_line_bytes;
        if too_long {
            bytes = &bytes[..bytes.len().min(max_line_bytes)];
        }
        each(&Line {
            source: name,
            number,
            offset: start,
            bytes,
            too_long,
        })?;
        offset += n as u64;
    }
    Ok(())
}

/// Reads one line, through its `\n`, keeping at most `cap` of its bytes in
/// `buf` and skipping the rest. Returns the bytes consumed (0 at the end of
/// the input) and whether the line was cut.
fn read_line_bounded(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<(usize, bool)> {
    let mut consumed = 0;
    let mut cut = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok((consumed, cut));
        }
        let (take, ends) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let room = cap.saturating_sub(buf.len());
        buf.extend_from_slice(&available[..take.min(room)]);
        cut |= take > room;
        reader.consume(take);
        consumed += take;
        if ends {
            return Ok((consumed, cut));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_find_field_columns() {
        let f = |index| Field {
            index,
            delimiter: b'\t',
            csv: false,
        };
        assert_eq!(find_field(b"a\tbb\tc", f(0)), Some((0, 1)));
        assert_eq!(find_field(b"a\tbb\tc", f(1)), Some((2, 4)));
        assert_eq!(find_field(b"a\tbb\tc", f(2)), Some((5, 6)));
        assert_eq!(find_field(b"a\tbb\tc", f(3)), None);
        assert_eq!(find_field(b"a\t", f(1)), Some((2, 2)));
    }

    #[test]
    fn lines_csv_fields_are_unquoted() {
        let f = |index| Field {
            index,
            delimiter: b',',
            csv: true,
        };
        let line = br#"1,"http://a/?x=1,2","q""r",,last"#;
        let mut buf = Vec::new();
        let mut get = |i| {
            field_span(line, f(i), &mut buf).map(|s| {
                (
                    String::from_utf8_lossy(&line[s.start..s.end]).into_owned(),
                    String::from_utf8_lossy(s.text(line, &buf)).into_owned(),
                    s.content_start(line),
                )
            })
        };
        assert_eq!(get(0), Some(("1".into(), "1".into(), 0)));
        assert_eq!(
            get(1),
            Some((r#""http://a/?x=1,2""#.into(), "http://a/?x=1,2".into(), 3))
        );
        assert_eq!(get(2), Some((r#""q""r""#.into(), r#"q"r"#.into(), 21)));
        assert_eq!(get(3), Some(("".into(), "".into(), 27)));
        assert_eq!(get(4), Some(("last".into(), "last".into(), 28)));
        assert_eq!(get(5), None);
        // A CR inside the line is data, not the end of the record.
        let cr = b"a\rb,c";
        let span = field_span(cr, f(1), &mut buf).unwrap();
        assert_eq!(
            (span.start, span.end, span.text(cr, &buf)),
            (4, 5, &b"c"[..])
        );
        let mut out = Vec::new();
        let span = field_span(line, f(1), &mut buf).unwrap();
        replace_field(line, span, f(1), b"http://a/?x=1,2", &mut out);
        assert_eq!(out, line);
        out.clear();
        let span = field_span(line, f(0), &mut buf).unwrap();
        replace_field(line, span, f(0), b"a,b", &mut out);
        assert_eq!(out, br#""a,b","http://a/?x=1,2","q""r",,last"#);
    }

    #[test]
    fn lines_binary_data_is_recognised() {
        assert!(!looks_binary(b"http://a/\nhttp://b/\n"));
        assert!(!looks_binary(b""));
        assert!(looks_binary(b"\x00\x01\x02"));
        assert!(looks_binary(b"a\x00\nb\x00\nc\nd\x00"));
        assert!(!looks_binary(b"a\x00\nb\nc\nd\n"));
    }

    #[test]
    fn lines_bom_cr_and_long_lines() {
        let data: Arc<[u8]> = Arc::from(&b"\xEF\xBB\xBFa\r\nbbbbbb\nc"[..]);
        let mut seen = Vec::new();
        for_each_line::<Error>(
            vec![Input::Bytes {
                name: "mem".into(),
                bytes: data,
            }],
            MmapChoice::never(),
            4,
            |l| {
                seen.push((l.number, l.offset, l.bytes.to_vec(), l.too_long));
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(
            seen,
            [
                (1, 3, b"a".to_vec(), false),
                (2, 6, b"bbbb".to_vec(), true),
                (3, 13, b"c".to_vec(), false)
            ]
        );
    }
}
