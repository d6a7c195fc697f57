//! Line-by-line input for the per-line commands (`parse`, `resolve`,
//! `normalize`): files in order, or stdin for `-` or no file.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// Longest line the per-line commands read, the default of `dedup
/// --max-line-bytes`: a longer line is reported as invalid and only its
/// first bytes are kept in memory, so a file without newlines cannot
/// exhaust it.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The reason given for a line longer than [`MAX_LINE_BYTES`].
pub const TOO_LONG: &str = "line too long";

/// One input line, without its `\n` (and without a `\r` before it).
pub struct Line<'a> {
    /// 1-based line number, counted across all inputs.
    pub number: u64,
    /// Byte offset of the line's first byte within its own input.
    pub offset: u64,
    /// The input this line came from (`-` for stdin).
    pub source: &'a Path,
    /// The line's bytes (its first [`MAX_LINE_BYTES`] when it is longer).
    pub bytes: &'a [u8],
    /// The line is longer than [`MAX_LINE_BYTES`]: it is invalid.
    pub too_long: bool,
}

/// Calls `each` for every line of `files` (stdin when empty or `-`). A UTF-8
/// BOM at the start of an input is skipped; a missing final newline is fine.
/// A line longer than [`MAX_LINE_BYTES`] is passed cut to that length, with
/// [`Line::too_long`] set.
///
/// # Errors
/// An error naming the path when an input cannot be opened or read, or the
/// first error returned by `each`.
pub fn for_each_line(
    files: &[PathBuf],
    mut each: impl FnMut(&Line<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let stdin_path = PathBuf::from("-");
    let inputs: Vec<&PathBuf> = if files.is_empty() {
        vec![&stdin_path]
    } else {
        files.iter().collect()
    };
    let mut number = 0u64;
    let mut buf = Vec::new();
    for path in inputs {
        let reader: Box<dyn Read> = if path.as_os_str() == "-" {
            Box::new(io::stdin().lock())
        } else {
            Box::new(File::open(path).with_context(|| format!("cannot open {}", path.display()))?)
        };
        let mut reader = BufReader::with_capacity(1 << 16, reader);
        let mut offset = 0u64;
        loop {
            buf.clear();
            // Room for the longest line plus a BOM and `\r\n`.
            let (n, cut) = read_line_bounded(&mut reader, &mut buf, MAX_LINE_BYTES + 5)
                .with_context(|| format!("cannot read {}", path.display()))?;
            if n == 0 {
                break;
            }
            number += 1;
            let mut bytes = &buf[..];
            let bom = offset == 0 && bytes.starts_with(b"\xEF\xBB\xBF");
            if bom {
                bytes = &bytes[3..];
            }
            let start = offset + if bom { 3 } else { 0 };
            if !cut {
                bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
                bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
            }
            let too_long = cut || bytes.len() > MAX_LINE_BYTES;
            if too_long {
                bytes = &bytes[..bytes.len().min(MAX_LINE_BYTES)];
            }
            each(&Line {
                number,
                offset: start,
                source: path,
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

/// Writes the standard invalid-line report to stderr:
/// `urikey: <path>:<line>: byte <offset>: <reason>`.
pub fn report_invalid(line: &Line<'_>, index: usize, reason: &dyn std::fmt::Display) {
    eprintln!(
        "urikey: {}:{}: byte {}: {}",
        line.source.display(),
        line.number,
        line.offset + index as u64,
        reason
    );
}
