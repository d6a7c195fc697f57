//! The per-line commands' input: the engine's line reader over the files
//! named on the command line, and its invalid-line report on stderr.

use std::fs::File;
use std::io;
use std::path::PathBuf;

use anyhow::Context;

use urikey::engine::lines::{self, Line};
use urikey::engine::{Input, InvalidLine, MmapChoice, Problem};
use urikey::uri::key::KeyErrorKind;
use urikey::uri::ParseError;

use super::report::say;

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
    lines::for_each_line(inputs(files), mmap(), lines::MAX_LINE_BYTES, each)
}

/// The command maps input files that are regular files, as grep-like tools
/// do: it is faster, and the README states the one risk (an input that
/// another process truncates during the run ends the run with SIGBUS).
pub fn mmap() -> MmapChoice {
    // SAFETY: the command's documented contract with its user is that
    // inputs do not change while it reads them (README, "Input formats").
    unsafe { MmapChoice::auto() }
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

/// The invalid-line record of `line`, whose problem is at byte `index`.
pub fn invalid_line<'a>(line: &Line<'a>, index: usize, problem: Problem) -> InvalidLine<'a> {
    InvalidLine::new(
        line.source,
        line.number,
        line.offset + index as u64,
        problem,
        line.bytes,
    )
}

/// Writes the standard invalid-line report to stderr:
/// `urikey: <path>:<line>: byte <offset>: <reason>`.
pub fn report_invalid(line: &Line<'_>, index: usize, problem: Problem) {
    say!("{}", invalid_line(line, index, problem));
}

/// Checks that every input file can be opened, before anything is
/// written: a missing second input must not leave the first one's output.
///
/// # Errors
/// `cannot open <path>` with the reason.
pub fn check_inputs(files: &[PathBuf]) -> anyhow::Result<()> {
    for path in files.iter().filter(|p| p.as_os_str() != "-") {
        let opened = File::open(path).and_then(|f| {
            if f.metadata()?.is_dir() {
                Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "it is a directory",
                ))
            } else {
                Ok(())
            }
        });
        opened.with_context(|| format!("cannot open {}", path.display()))?;
    }
    Ok(())
}
