//! The per-line commands' input: the engine's line reader over the files
//! named on the command line, and its invalid-line report on stderr.

use std::path::PathBuf;

use urikey::engine::lines::{self, Line};
use urikey::engine::{Input, InvalidLine, Problem};
use urikey::uri::key::KeyErrorKind;
use urikey::uri::ParseError;

/// The inputs the user named: stdin for none or `-`.
pub fn inputs(files: &[PathBuf]) -> Vec<Input> {
    if files.is_empty() {
        return vec![Input::Stdin];
    }
    files
        .iter()
        .map(|p| {
            if p.as_os_str() == "-" {
                Input::Stdin
            } else {
                Input::Path(p.clone())
            }
        })
        .collect()
}

/// Calls `each` for every line of `files` (see
/// [`urikey::engine::lines::for_each_line`]), with the default line limit.
///
/// # Errors
/// An error naming the path when an input cannot be opened or read, or the
/// first error returned by `each`.
pub fn for_each_line(
    files: &[PathBuf],
    each: impl FnMut(&Line<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    lines::for_each_line(inputs(files), lines::MAX_LINE_BYTES, each)
}

/// The problem of a line, when it has one before any parsing: too long.
pub fn too_long(line: &Line<'_>) -> Option<(usize, Problem)> {
    line.too_long
        .then_some((lines::MAX_LINE_BYTES, Problem::LineTooLong))
}

/// The problem of a parse error.
pub fn parse_problem(e: ParseError) -> (usize, Problem) {
    (e.index(), Problem::Key(KeyErrorKind::Parse(e.kind())))
}

/// Writes the standard invalid-line report to stderr:
/// `urikey: <path>:<line>: byte <offset>: <reason>`.
pub fn report_invalid(line: &Line<'_>, index: usize, problem: Problem) {
    let inv = InvalidLine {
        source: line.source,
        line: line.number,
        byte: line.offset + index as u64,
        problem,
        text: line.bytes,
    };
    eprintln!("urikey: {inv}");
}
