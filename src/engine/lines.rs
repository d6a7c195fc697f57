//! The line rules every command shares, in one place: a UTF-8 byte-order
//! mark at the start of an input is skipped, a `\r` before the `\n` is
//! dropped, a missing final newline is fine, a line longer than the limit
//! is invalid (only its first bytes are kept), and `--field` takes one
//! column of a line. `dedup` applies them chunk by chunk ([`super::run`]);
//! the per-line commands read with [`for_each_line`]. Invalid lines are
//! reported in one format ([`InvalidLine`](super::InvalidLine)'s `Display`).

use std::io::{self, BufRead, BufReader, Cursor, Read};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use super::error::Error;
use super::input::{self, Input, Source};
use super::Field;

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

/// One input line, as [`for_each_line`] passes it.
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
    max_line_bytes: usize,
    mut each: impl FnMut(&Line<'_>) -> Result<(), E>,
) -> Result<(), E> {
    let raw_read = Arc::new(AtomicU64::new(0));
    let mut buf = Vec::new();
    for input in inputs {
        let name = input.name();
        let (reader, compression): (Box<dyn Read>, _) = match input::open(input, &raw_read)? {
            Source::Slice(bytes) => (Box::new(Cursor::new(bytes)), None),
            Source::Stream {
                reader,
                compression,
            } => (Box::new(reader), compression),
        };
        let mut reader = BufReader::with_capacity(1 << 16, reader);
        let mut offset = 0u64;
        let mut number = 0u64;
        loop {
            buf.clear();
            // Room for the longest line plus a BOM and `\r\n`.
            let (n, cut) =
                read_line_bounded(&mut reader, &mut buf, max_line_bytes + 5).map_err(|source| {
                    Error::Read {
                        path: name.clone(),
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
                source: &name,
                number,
                offset: start,
                bytes,
                too_long,
            })?;
            offset += n as u64;
        }
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
        };
        assert_eq!(find_field(b"a\tbb\tc", f(0)), Some((0, 1)));
        assert_eq!(find_field(b"a\tbb\tc", f(1)), Some((2, 4)));
        assert_eq!(find_field(b"a\tbb\tc", f(2)), Some((5, 6)));
        assert_eq!(find_field(b"a\tbb\tc", f(3)), None);
        assert_eq!(find_field(b"a\t", f(1)), Some((2, 2)));
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
