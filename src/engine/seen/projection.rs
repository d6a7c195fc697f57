//! How many distinct keys a run will end with, projected from the input
//! read so far, so that the seen-set's tables can grow to their final size
//! in one step (see [`FingerprintTable::expect_total`](super::fpset::FingerprintTable::expect_total)).
//!
//! A table that grows by steps of 1.3 moves each of its entries about four
//! times on the way (1 / ln 1.3), and runs near its maximum load most of
//! the time, where more lookups go on past their two buckets. Sized from
//! this projection, each table of an 8 GiB crawl dump grows twice past
//! 1 MiB (at 72 K keys to a size for 557 K, at 573 K to one for 3.34 M,
//! its final count), so about one entry in five moves, once; and the tables
//! fill up slowly. See the CHANGELOG for the figures.
//!
//! The count of distinct keys is fitted as `c · bytesᵇ` through two points:
//! now, and the last batch at or before half of the bytes read now, with
//! `b` between 0 and 1; the projection is that curve at the input's size.
//! New keys that come at an even rate (the crawl dumps of `gen-crawl`) give
//! `b` = 1; new keys that thin out as the input goes on, as in most real
//! dumps, give a smaller `b`. A dump whose later part repeats its earlier
//! part fits no curve until it gets there: up to then the projection is
//! too high. So none is made before [`FIRST_SHARE`] of the input, and none
//! is more than [`MAX_FACTOR`] times the keys so far. A projection that is
//! too high costs memory (a table ends less full), never a result: the
//! tables hold the same keys whatever their size.

use std::collections::VecDeque;

/// No projection before the input read is this share of its size
/// (1 / 64): the first few batches say little about the rest.
const FIRST_SHARE: u64 = 64;

/// A projection is at most this many times the keys so far, which bounds
/// the memory a wrong one can cost: at worst a table holds an eighth of
/// what it was sized for.
const MAX_FACTOR: u64 = 8;

/// Projects the final number of distinct keys of a run whose input size is
/// known.
#[derive(Debug)]
pub struct Projection {
    /// Bytes of input in all (compressed bytes for compressed inputs);
    /// `None` when unknown (stdin, pipes).
    total: Option<u64>,
    /// (bytes read, distinct keys) after each batch, back to the last one
    /// at or before half of the bytes read now.
    marks: VecDeque<(u64, u64)>,
}

impl Projection {
    /// A projection for an input of `total` bytes (`None`: unknown, and no
    /// projection is ever made).
    pub fn new(total: Option<u64>) -> Self {
        Self {
            total: total.filter(|&t| t > 0),
            marks: VecDeque::from([(0, 0)]),
        }
    }

    /// Records that `read` bytes of the input gave `keys` distinct keys, and
    /// returns how many the whole input is projected to give (never fewer
    /// than `keys`); `None` when the input size is unknown or too little
    /// of it was read.
    pub fn update(&mut self, read: u64, keys: u64) -> Option<u64> {
        let total = self.total?;
        if self.marks.back().is_some_and(|&(r, _)| read > r) {
            self.marks.push_back((read, keys));
        }
        let half = read / 2;
        while self.marks.get(1).is_some_and(|&(r, _)| r <= half) {
            self.marks.pop_front();
        }
        if read >= total || read < total / FIRST_SHARE {
            return None;
        }
        let &(from_read, from_keys) = self.marks.front()?;
        if from_read == 0 {
            // Only the start to fit from: too early.
            return None;
        }
        if from_keys == 0 || keys <= from_keys {
            // No curve through a count of 0, or no new key over the last
            // half: no more than now.
            return Some(keys);
        }
        // keys ≈ c · read^b through both marks, b between 0 and 1.
        let b = ((keys as f64 / from_keys as f64).ln() / (read as f64 / from_read as f64).ln())
            .clamp(0.0, 1.0);
        let projected = keys as f64 * (total as f64 / read as f64).powf(b);
        // As an integer (saturating), never fewer than the keys so far.
        Some((projected.round() as u64).clamp(keys, keys.saturating_mul(MAX_FACTOR)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_unknown_size_or_too_early_gives_none() {
        let mut p = Projection::new(None);
        assert_eq!(p.update(500, 100), None);
        let mut p = Projection::new(Some(3200));
        assert_eq!(p.update(40, 10), None, "before 1/64 of the input");
        assert_eq!(p.update(3200, 500), None, "the input is read");
    }

    #[test]
    fn projection_of_an_even_rate_is_the_end_count() {
        let mut p = Projection::new(Some(1000));
        let mut last = None;
        for read in (100..=900).step_by(100) {
            last = p.update(read, read / 2);
        }
        // 450 keys after 900 bytes, at 1 key per 2 bytes: 500 in the end.
        assert_eq!(last, Some(500));
    }

    #[test]
    fn projection_follows_a_power_law_fitted_over_the_last_half() {
        // Keys = 10 · √bytes, as new keys thin out in a real dump.
        let mut p = Projection::new(Some(25_600));
        p.update(400, 200);
        assert_eq!(p.update(1600, 400), Some(1600), "10 · √25600");
    }

    #[test]
    fn projection_without_new_keys_over_the_last_half_is_the_count() {
        let mut p = Projection::new(Some(6400));
        p.update(400, 200);
        assert_eq!(p.update(800, 200), Some(200));
    }

    #[test]
    fn projection_is_bounded_by_a_factor_of_the_keys_so_far() {
        let mut p = Projection::new(Some(1 << 40));
        // Every byte a new key, 1/16 of the input read.
        let read = (1u64 << 40) / 16;
        p.update(read / 2, read / 2);
        assert_eq!(p.update(read, read), Some(read * MAX_FACTOR));
    }
}
