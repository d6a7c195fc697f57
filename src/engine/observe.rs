//! How a run reports to its caller while it goes: invalid lines, progress,
//! and whether to stop. The engine draws nothing itself; the command line
//! turns these calls into a progress bar, a Python binding into signal
//! checks.

use std::time::Duration;

use super::InvalidLine;

/// Where a run is, reported once per batch of chunks (never per line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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

/// Receives what a run reports. Every method has a default that does
/// nothing, so an observer implements only what it needs.
pub trait Observer {
    /// An invalid line, in input order.
    fn invalid(&mut self, line: &InvalidLine<'_>) {
        let _ = line;
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
