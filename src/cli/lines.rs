//! Line-by-line input for the per-line commands (`parse`, `resolve`,
//! `normalize`): files in order, or stdin for `-` or no file.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// One input line, without its `\n` (and without a `\r` before it).
pub struct Line<'a> {
    /// 1-based line number, counted across all inputs.
    pub number: u64,
    /// Byte offset of the line's first byte within its own input.
    pub offset: u64,
    /// The input this line came from (`-` for stdin).
    pub source: &'a Path,
    /// The line's bytes.
    pub bytes: &'a [u8],
}

/// Calls `each` for every line of `files` (stdin when empty or `-`). A UTF-8
/// BOM at the start of an input is skipped; a missing final newline is fine.
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
            let n = reader
                .read_until(b'\n', &mut buf)
                .with_context(|| format!("cannot read {}", path.display()))?;
            if n == 0 {
                break;
            }
            number += 1;
            let mut bytes = &buf[..];
            if offset == 0 && bytes.starts_with(b"\xEF\xBB\xBF") {
                bytes = &bytes[3..];
            }
            let start = offset + (n - bytes.len()) as u64;
            bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
            bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
            each(&Line {
                number,
                offset: start,
                source: path,
                bytes,
            })?;
            offset += n as u64;
        }
    }
    Ok(())
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
