//! Counters of a dedup run.

use std::collections::BTreeMap;
use std::time::Duration;

/// What a run saw. `lines = blank + invalid + unique + duplicates`.
#[derive(Clone, Debug, Default, PartialEq)]
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
}

impl Stats {
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
