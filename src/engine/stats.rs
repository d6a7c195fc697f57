//! Counters of a dedup run.

use std::collections::BTreeMap;
use std::time::Duration;

/// What a run saw. `lines = blank + invalid + unique + duplicates`.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Lines read, blank and invalid ones included.
    pub lines: u64,
    /// Bytes read (after decompression) up to the end of the last line of
    /// each input, BOMs and the cut-off tails of too-long lines included.
    pub bytes: u64,
    /// Empty lines (after removing a `\r`), skipped.
    pub blank: u64,
    /// Lines that could not be turned into a key.
    pub invalid: u64,
    /// Invalid lines by reason name (`invalid-path`, `line-too-long`, ...).
    pub invalid_by_reason: BTreeMap<&'static str, u64>,
    /// Distinct keys.
    pub unique: u64,
    /// Valid lines whose key was seen before.
    pub duplicates: u64,
    /// Wall-clock time of the run.
    pub wall: Duration,
    /// Worker threads used.
    pub threads: usize,
    /// Where the wall time went.
    pub phases: Phases,
}

/// Where a run's wall time went, as the thread that drives the phases saw
/// it. The phases run one after the other, each on all worker threads, so
/// with the waits they cover nearly the whole run; what the caller's wall
/// time has beyond their sum is process start, opening the inputs, writing
/// `--count` output, and the final flush and rename of the output.
///
/// A run bound by its CPU spends its time in `keys` and `inserts`; one bound
/// by its input (a slow disk, a decompressor) in `input_wait`; one bound by
/// its output (a slow disk, or a spilled run resolving its partitions) in
/// `writer_wait`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Phases {
    /// Waiting for the reader thread: reading, decompressing, faulting in
    /// the input.
    pub input_wait: Duration,
    /// Phase 1: lines parsed and normalized into keys and fingerprints (and
    /// `surt` or `hash` keys formatted).
    pub keys: Duration,
    /// Phase 2: the seen-set's inserts (lookups once the run spills), and
    /// with counts, the numbering of new keys.
    pub inserts: Duration,
    /// Waiting for the writer thread: the output written, and once the run
    /// spills, its partitions resolved.
    pub writer_wait: Duration,
}

impl Phases {
    /// The four durations added up.
    pub fn total(&self) -> Duration {
        self.input_wait + self.keys + self.inserts + self.writer_wait
    }
}

impl Stats {
    /// The wall time the phases and waits do not cover (see [`Phases`]).
    pub fn other_time(&self) -> Duration {
        self.wall.saturating_sub(self.phases.total())
    }

    /// The phases and the rest of the wall time in seconds, under the
    /// names the CLI's `--stats-json` and Python's `dedup_file` give them.
    pub fn phase_seconds(&self) -> [(&'static str, f64); 5] {
        let p = &self.phases;
        [
            ("keys_seconds", p.keys.as_secs_f64()),
            ("inserts_seconds", p.inserts.as_secs_f64()),
            ("input_wait_seconds", p.input_wait.as_secs_f64()),
            ("writer_wait_seconds", p.writer_wait.as_secs_f64()),
            ("other_seconds", self.other_time().as_secs_f64()),
        ]
    }

    /// Duplicates divided by valid lines (0 when there are none).
    pub fn duplicate_ratio(&self) -> f64 {
        let valid = self.unique + self.duplicates;
        if valid == 0 {
            0.0
        } else {
            self.duplicates as f64 / valid as f64
        }
    }

    /// Throughput in decimal megabytes per second of wall time.
    pub fn mb_per_s(&self) -> f64 {
        per_second(self.bytes as f64 / 1e6, self.wall)
    }

    /// Lines per second of wall time.
    pub fn lines_per_s(&self) -> f64 {
        per_second(self.lines as f64, self.wall)
    }
}

fn per_second(amount: f64, wall: Duration) -> f64 {
    let secs = wall.as_secs_f64();
    if secs > 0.0 {
        amount / secs
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_ratios() {
        let s = Stats {
            unique: 3,
            duplicates: 1,
            ..Stats::default()
        };
        assert!((s.duplicate_ratio() - 0.25).abs() < 1e-12);
        assert_eq!(Stats::default().duplicate_ratio(), 0.0);
        assert_eq!(Stats::default().mb_per_s(), 0.0);
    }
}
