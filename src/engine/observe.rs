//! How a run reports to its caller while it goes: invalid lines, progress,
//! and whether to stop. The engine draws nothing itself; the command line
//! turns these calls into a progress bar, a Python binding into signal
//! checks.

use core::fmt;
use std::time::Duration;

use super::InvalidLine;

/// Where a run is, reported once per batch of chunks (never per line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Progress {
    /// Raw input bytes read so far (compressed bytes for compressed inputs).
    pub bytes_read: u64,
    /// The on-disk size of all inputs, when every one of them is known.
    pub total_bytes: Option<u64>,
    /// Lines processed so far.
    pub lines: u64,
    /// Time since the run started.
    pub elapsed: Duration,
}

/// A remark about an input as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning<'a> {
    /// Most of the input's first lines hold NUL bytes: it is binary data,
    /// perhaps compressed in a format the engine does not read.
    Binary {
        /// The input's name (`-` for stdin).
        source: &'a str,
    },
}

impl fmt::Display for Warning<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::Binary { source } => write!(
                f,
                "{source}: looks like binary data (NUL bytes in most lines), not a list of \
                 URLs; gzip, zstd, xz and bzip2 are read, other compressed formats are not"
            ),
        }
    }
}

/// Receives what a run reports. Every method has a default that does
/// nothing, so an observer implements only what it needs.
pub trait Observer {
    /// An invalid line, in input order.
    fn invalid(&mut self, line: &InvalidLine<'_>) {
        let _ = line;
    }

    /// Something about an input the caller should hear, at most once per
    /// input (the run goes on).
    fn warning(&mut self, warning: &Warning<'_>) {
        let _ = warning;
    }

    /// Progress after each batch.
    fn progress(&mut self, progress: &Progress) {
        let _ = progress;
    }

    /// Asked after each batch: `true` ends the run with
    /// [`Error::Interrupted`](super::Error::Interrupted); the output is then
    /// incomplete.
    fn should_stop(&mut self) -> bool {
        false
    }
}

/// An observer that ignores everything.
impl Observer for () {}

/// A closure observes the invalid lines only.
impl<F: FnMut(&InvalidLine<'_>)> Observer for F {
    fn invalid(&mut self, line: &InvalidLine<'_>) {
        self(line);
    }
}
