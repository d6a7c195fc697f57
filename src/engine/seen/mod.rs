//! The streaming seen-set: a caller feeds batches of lines (or of
//! fingerprints) and learns, line by line, whether each key is new. "First
//! seen" means feed order, across all batches. Python's `Deduplicator` and
//! the Spark integration are built on it.
//!
//! ```
//! use urikey::engine::{SeenSet, Verdict};
//! use urikey::uri::key::KeyConfig;
//! let mut seen = SeenSet::new(KeyConfig::default().keyer());
//! let first = seen.add(&[Some("http://a/x"), Some("HTTP://A/x"), None])?;
//! assert_eq!(first, [Verdict::New, Verdict::Duplicate, Verdict::Null]);
//! let second = seen.add(&[Some("http://a:80/x"), Some("http://a/ y")])?;
//! assert_eq!(second[0], Verdict::Duplicate);
//! assert!(matches!(second[1], Verdict::Invalid(_)));
//! assert_eq!(seen.len(), 1);
//! # Ok::<(), urikey::engine::OverLimit>(())
//! ```
//!
//! A set may be given a memory limit: a batch that would make it grow past
//! the limit is refused whole ([`OverLimit`]), the set unchanged, so a
//! caller learns it must switch to a disk-backed run (the CLI's `dedup`
//! spills) instead of being killed for lack of memory. A set that answers
//! batch by batch cannot defer its answers to disk the way a whole-file run
//! does.

pub(crate) mod fp_sort;
pub(crate) mod fpset;
pub(crate) mod projection;
pub(crate) mod shard;

use std::fmt;
use std::sync::Arc;

use super::line_keys;
use super::share::{self, share_out};
use crate::uri::key::{KeyError, KeyScratch, Keyer};
use fpset::FingerprintTable;
use shard::{shard_of, Pending, SHARDS};

/// Batches at least this long are keyed, sorted into shards and inserted on
/// several threads; below it the hand-off costs more than it saves (a key
/// takes about 0.1 µs, an insert less).
const PARALLEL_MIN: usize = 4096;

/// Fingerprints [`SeenSet::insert_all`] sorts into shards at a time.
const PIECE: usize = 1 << 20;

/// Parts of a piece per thread, sorted into shards one part at a time: more
/// than one, so a thread that finishes early takes another.
const PARTS_PER_THREAD: usize = 2;

/// What [`SeenSet::add`] says of one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// The first line with this key.
    New,
    /// A line whose key was seen before (in this batch or an earlier one).
    Duplicate,
    /// The line has no key.
    Invalid(KeyError),
    /// There was no line (`None`).
    Null,
}

impl Verdict {
    /// True for [`Verdict::New`].
    pub fn is_new(self) -> bool {
        self == Verdict::New
    }
}

/// A batch refused because the set would pass its memory limit; the set is
/// unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverLimit {
    /// Bytes the set would hold after the batch.
    pub needed: u64,
    /// The set's limit, in bytes.
    pub limit: u64,
}

impl fmt::Display for OverLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the seen-set would need {} bytes for this batch, over its memory limit of {} bytes; \
             the batch was not added",
            self.needed, self.limit
        )
    }
}

impl std::error::Error for OverLimit {}

/// A set of the keys seen so far, fed batch by batch. It keeps 105 bits of
/// the 128-bit fingerprint of each distinct key (see the engine's collision
/// bound), about 17 bytes a key, so memory grows with the number of
/// distinct keys only. `Send + Sync`.
#[derive(Debug)]
pub struct SeenSet {
    keyer: Keyer,
    shards: Vec<FingerprintTable<false>>,
    pool: Option<Arc<rayon::ThreadPool>>,
    limit: Option<u64>,
    /// Distinct keys the caller expects (see
    /// [`with_expected_keys`](Self::with_expected_keys)); 0 when unknown.
    expected: u64,
}

impl SeenSet {
    /// An empty set keyed by `keyer`; large batches are keyed on rayon's
    /// global thread pool.
    pub fn new(keyer: Keyer) -> Self {
        Self {
            keyer,
            shards: (0..SHARDS).map(FingerprintTable::with_phase).collect(),
            pool: None,
            limit: None,
            expected: 0,
        }
    }

    /// Expect about `keys` distinct keys in all (0: unknown, the default):
    /// each table then grows straight to the size that holds its share,
    /// the first time it must grow, instead of by steps of about 1.3,
    /// each of which moves every key it holds. Nothing else changes: past the
    /// expected count the set grows by steps again, and a count that is
    /// too high costs memory only. An expectation whose tables would pass
    /// the memory limit is not used.
    pub fn with_expected_keys(mut self, keys: u64) -> Self {
        self.expected = keys;
        self.apply_expected();
        self
    }

    /// Tells every table its share of the expected keys, if the tables at
    /// that size fit the memory limit and physical memory (else none: an
    /// expectation no memory could hold is a mistake, not a plan).
    fn apply_expected(&mut self) {
        let share = usize::try_from(self.expected / SHARDS as u64).unwrap_or(usize::MAX);
        for t in &mut self.shards {
            t.expect_total(share);
        }
        let more: [usize; SHARDS] =
            std::array::from_fn(|s| share.saturating_sub(self.shards[s].len()));
        let room = self
            .limit
            .unwrap_or(u64::MAX)
            .min(super::memory::physical().unwrap_or(u64::MAX));
        if self.bytes_after(&more) > room {
            for t in &mut self.shards {
                t.expect_total(0);
            }
        }
    }

    /// Refuse batches that would make the set hold more than `limit` bytes
    /// (`None`: no limit, the default). While a table of more than 8 MiB
    /// grows on a pool thread, up to 8 MiB per thread are held besides,
    /// for the length of the rebuild.
    pub fn with_memory_limit(mut self, limit: Option<u64>) -> Self {
        self.limit = limit;
        self.apply_expected();
        self
    }

    /// The memory limit, in bytes.
    pub fn memory_limit(&self) -> Option<u64> {
        self.limit
    }

    /// Key large batches on a pool of `threads` threads (0: rayon's global
    /// pool, one thread per core).
    ///
    /// # Errors
    /// The threads cannot be started.
    pub fn with_threads(mut self, threads: usize) -> Result<Self, rayon::ThreadPoolBuildError> {
        self.pool = if threads == 0 {
            None
        } else {
            Some(Arc::new(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()?,
            ))
        };
        Ok(self)
    }

    /// The keyer.
    pub fn keyer(&self) -> &Keyer {
        &self.keyer
    }

    /// Number of distinct keys seen.
    pub fn len(&self) -> usize {
        self.shards.iter().map(FingerprintTable::len).sum()
    }

    /// True when no key was seen yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of memory held by the set.
    pub fn heap_bytes(&self) -> usize {
        self.shards.iter().map(FingerprintTable::heap_bytes).sum()
    }

    /// Keys every line and adds the keys, in order: the verdict of each
    /// line says whether its key is new.
    ///
    /// # Errors
    /// [`OverLimit`] when the set would pass its memory limit; nothing of
    /// the batch was added.
    pub fn add<L: AsRef<[u8]> + Sync>(
        &mut self,
        lines: &[Option<L>],
    ) -> Result<Vec<Verdict>, OverLimit> {
        let fingerprints = self.fingerprints(lines);
        let keyed: Vec<u128> = fingerprints
            .iter()
            .filter_map(|fp| match fp {
                Some(Ok(fp)) => Some(*fp),
                _ => None,
            })
            .collect();
        self.check_limit(keyed.iter().copied())?;
        let mut new = self.insert_all(&keyed).into_iter();
        Ok(fingerprints
            .into_iter()
            .map(|fp| match fp {
                Some(Ok(_)) if new.next() == Some(true) => Verdict::New,
                Some(Ok(_)) => Verdict::Duplicate,
                Some(Err(e)) => Verdict::Invalid(e),
                None => Verdict::Null,
            })
            .collect())
    }

    /// Adds fingerprints (as [`Keyer::fingerprint`] makes them), in order:
    /// `true` where the fingerprint is new.
    ///
    /// # Errors
    /// [`OverLimit`] as for [`SeenSet::add`].
    pub fn add_fingerprints(&mut self, fingerprints: &[u128]) -> Result<Vec<bool>, OverLimit> {
        self.check_limit(fingerprints.iter().copied())?;
        Ok(self.insert_all(fingerprints))
    }

    /// Inserts `fps` in order: `true` where a fingerprint is new.
    ///
    /// Each shard's fingerprints go through its table's
    /// [`insert_all`](FingerprintTable::insert_all), which loads buckets
    /// ahead of the inserts (a set larger than the cache waits for memory
    /// at almost every insert otherwise). A shard keeps the batch's order,
    /// and a key lives in one shard, so "first seen" is feed order.
    fn insert_all(&mut self, fps: &[u128]) -> Vec<bool> {
        let mut new = vec![false; fps.len()];
        // In pieces whose positions fit the entries' u32, which also bounds
        // the pieces' copy to 24 MiB.
        let one_thread = share::threads(self.pool.as_deref()) == 1;
        for (piece, new) in fps.chunks(PIECE).zip(new.chunks_mut(PIECE)) {
            if piece.len() < PARALLEL_MIN || one_thread {
                let by_shard = sort_into_shards(piece);
                for (table, pending) in self.shards.iter_mut().zip(&by_shard) {
                    table.insert_all(pending, Pending::fingerprint, |e, ins| {
                        if let Some(slot) = new.get_mut(e.at as usize) {
                            *slot = ins.is_new();
                        }
                    });
                }
            } else {
                self.insert_on_threads(piece, new);
            }
        }
        new
    }

    /// [`insert_all`](Self::insert_all) for one piece, in three steps on
    /// all threads at once: parts of the piece are sorted into shards; each
    /// shard inserts its entries of every part, in part order; each part
    /// writes its verdicts. Sorting and writing back on one thread kept two
    /// threads 1.2 times as fast as one (1 M keys in batches of 100,000);
    /// now 1.5–1.7 times, and 1.9–2.2 times at 8 M keys (`benches/seen_set.rs`).
    fn insert_on_threads(&mut self, piece: &[u128], new: &mut [bool]) {
        let pool = self.pool.as_deref();
        let part_len = piece
            .len()
            .div_ceil(PARTS_PER_THREAD * share::threads(pool))
            .max(1);
        let parts: Vec<Vec<Vec<Pending>>> =
            share_out(pool, piece.chunks(part_len).collect(), |_, part| {
                sort_into_shards(part)
            });
        let tables = self.shards.iter_mut().enumerate().collect();
        let verdicts: Vec<Vec<bool>> = share_out(pool, tables, |_, (s, table)| {
            let mut verdicts = Vec::with_capacity(parts.iter().map(|p| p[s].len()).sum());
            for part in &parts {
                table.insert_all(&part[s], Pending::fingerprint, |_, ins| {
                    verdicts.push(ins.is_new());
                });
            }
            verdicts
        });
        // Where each part's verdicts start in each shard's list.
        let mut starts = [0usize; SHARDS];
        let writes: Vec<_> = new
            .chunks_mut(part_len)
            .zip(&parts)
            .map(|(new, part)| {
                let at = starts;
                for (start, pending) in starts.iter_mut().zip(part) {
                    *start += pending.len();
                }
                (new, part, at)
            })
            .collect();
        share_out(pool, writes, |_, (new, part, at)| {
            for ((pending, shard_verdicts), start) in part.iter().zip(&verdicts).zip(at) {
                let shard_verdicts = shard_verdicts.get(start..).unwrap_or_default();
                for (e, &is_new) in pending.iter().zip(shard_verdicts) {
                    if let Some(slot) = new.get_mut(e.at as usize) {
                        *slot = is_new;
                    }
                }
            }
        });
    }

    /// Refuses a batch whose new fingerprints would take the set past its
    /// limit. Counting every fingerprint as new is enough for most batches;
    /// only near the limit are the batch's new distinct fingerprints counted
    /// (a lookup each), so a batch of known keys is never refused.
    fn check_limit(&self, fps: impl Iterator<Item = u128> + Clone) -> Result<(), OverLimit> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        if self.bytes_after(&per_shard(fps.clone())) <= limit {
            return Ok(());
        }
        let mut new: Vec<u128> = fps
            .filter(|&fp| !self.shards[shard_of(fp)].contains(fp))
            .collect();
        if new.is_empty() {
            // Nothing to add: no limit is passed by keeping what is there.
            return Ok(());
        }
        new.sort_unstable();
        new.dedup();
        let needed = self.bytes_after(&per_shard(new.into_iter()));
        if needed <= limit {
            Ok(())
        } else {
            Err(OverLimit { needed, limit })
        }
    }

    /// Bytes the set would hold after `more[s]` new fingerprints in shard `s`
    /// (see [`per_shard`]).
    fn bytes_after(&self, more: &[usize; SHARDS]) -> u64 {
        self.shards
            .iter()
            .zip(more)
            .map(|(shard, &n)| shard.bytes_after(n) as u64)
            .fold(0, u64::saturating_add)
    }

    /// Is the key of `line` in the set? (`Err` when it has none.)
    ///
    /// # Errors
    /// The line's key error.
    pub fn contains(&self, line: &[u8]) -> Result<bool, KeyError> {
        let fp = self.keyer.fingerprint(line, &mut KeyScratch::default())?;
        Ok(self.contains_fingerprint(fp))
    }

    /// Whether the set holds fingerprint `fp` (one that
    /// [`add_fingerprints`](Self::add_fingerprints) was given).
    pub fn contains_fingerprint(&self, fp: u128) -> bool {
        self.shards[shard_of(fp)].contains(fp)
    }

    /// The fingerprint of every line, on this set's threads for large
    /// batches.
    fn fingerprints<L: AsRef<[u8]> + Sync>(
        &self,
        lines: &[Option<L>],
    ) -> Vec<Option<Result<u128, KeyError>>> {
        let run = || line_keys::fingerprints(&self.keyer, lines);
        match &self.pool {
            Some(pool) if lines.len() >= line_keys::PARALLEL_FROM => pool.install(run),
            _ => run(),
        }
    }
}

/// A piece's fingerprints sorted into shards, each with its position in the
/// piece.
fn sort_into_shards(piece: &[u128]) -> Vec<Vec<Pending>> {
    // A shard's share, and some room for the spread around it.
    let share = piece.len() / SHARDS + piece.len() / (4 * SHARDS) + 16;
    let mut by_shard: Vec<Vec<Pending>> = (0..SHARDS).map(|_| Vec::with_capacity(share)).collect();
    for (at, &fp) in piece.iter().enumerate() {
        by_shard[shard_of(fp)].push(Pending::new(fp, at as u32));
    }
    by_shard
}

/// How many of `fps` fall in each shard.
fn per_shard(fps: impl Iterator<Item = u128>) -> [usize; SHARDS] {
    let mut n = [0usize; SHARDS];
    for fp in fps {
        n[shard_of(fp)] += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uri::key::KeyConfig;

    #[test]
    fn seen_set_first_seen_is_feed_order_across_batches() {
        let keyer = KeyConfig::default().keyer();
        let lines: Vec<String> = (0..20_000)
            .map(|i| format!("HTTP://Example.com/{}", i % 7_000))
            .collect();
        let opt: Vec<Option<&str>> = lines.iter().map(|l| Some(l.as_str())).collect();
        let mut one = SeenSet::new(keyer.clone());
        let all = one.add(&opt).unwrap();
        let mut batched = SeenSet::new(keyer.clone()).with_threads(2).unwrap();
        let mut pieces = Vec::new();
        for part in opt.chunks(4_999) {
            pieces.extend(batched.add(part).unwrap());
        }
        assert_eq!(all, pieces);
        assert_eq!(one.len(), 7_000);
        assert_eq!(all.iter().filter(|v| v.is_new()).count(), 7_000);
        assert!(all[..7_000].iter().all(|v| v.is_new()));
        assert!(one.contains(b"http://example.com/5").unwrap());

        let fps: Vec<u128> = lines[..10]
            .iter()
            .map(|l| {
                keyer
                    .fingerprint(l.as_bytes(), &mut KeyScratch::default())
                    .unwrap()
            })
            .collect();
        let mut by_fp = SeenSet::new(keyer);
        assert_eq!(by_fp.add_fingerprints(&fps).unwrap(), vec![true; 10]);
        assert_eq!(by_fp.add_fingerprints(&fps[..2]).unwrap(), vec![false; 2]);
    }

    #[test]
    fn seen_set_expected_keys_change_no_verdict() {
        // 300,000 distinct keys in batches: a set told to expect four
        // times as many answers as one told nothing; its tables take one
        // growth each where the other's take several, and end larger
        // (sized for the expectation). An expectation past the memory
        // limit is not used.
        let keyer = KeyConfig::default().keyer();
        let lines: Vec<String> = (0..450_000)
            .map(|i| format!("http://example.com/{}", (i * 7) % 300_000))
            .collect();
        let opt: Vec<Option<&str>> = lines.iter().map(|l| Some(l.as_str())).collect();
        let mut plain = SeenSet::new(keyer.clone());
        let mut told = SeenSet::new(keyer.clone()).with_expected_keys(1_200_000);
        let mut small_told = SeenSet::new(keyer.clone()).with_expected_keys(1_200_000);
        let mut grown = (0, 0);
        for part in opt.chunks(10_000) {
            let before = (plain.heap_bytes(), told.heap_bytes());
            assert_eq!(plain.add(part).unwrap(), told.add(part).unwrap());
            grown.0 += usize::from(plain.heap_bytes() != before.0);
            grown.1 += usize::from(told.heap_bytes() != before.1);
        }
        assert_eq!((plain.len(), told.len()), (300_000, 300_000));
        assert_eq!(grown.1, 1, "{grown:?}");
        assert!(grown.0 > 2, "{grown:?}");
        // A limit that fits the plain set's final size but not the
        // expected one: the expectation is dropped and nothing is refused.
        let limit = plain.heap_bytes() as u64;
        assert!((told.heap_bytes() as u64) > limit);
        small_told = small_told.with_memory_limit(Some(limit));
        for part in opt.chunks(10_000) {
            small_told.add(part).unwrap();
        }
        assert_eq!(small_told.heap_bytes(), plain.heap_bytes());
    }

    #[test]
    fn seen_set_expected_keys_past_any_memory_are_ignored() {
        // Such counts once made a table's size search loop for ever (its
        // capacity arithmetic wrapped around); with no limit or an
        // unlimited one, the tables would not fit the machine.
        let keyer = KeyConfig::default().keyer();
        for keys in [1 << 40, 1 << 59, u64::MAX] {
            for limit in [None, Some(u64::MAX)] {
                let mut set = SeenSet::new(keyer.clone())
                    .with_memory_limit(limit)
                    .with_expected_keys(keys);
                let v = set.add(&[Some("http://a/"), Some("HTTP://A/")]).unwrap();
                assert!(v[0].is_new() && !v[1].is_new());
                assert!(set.heap_bytes() < 64 << 20, "{keys} {limit:?}");
            }
        }
    }

    #[test]
    fn seen_set_refuses_a_batch_over_its_limit_whole() {
        let keyer = KeyConfig::default().keyer();
        let lines: Vec<String> = (0..200_000)
            .map(|i| format!("http://example.com/{i}"))
            .collect();
        let opt: Vec<Option<&str>> = lines.iter().map(|l| Some(l.as_str())).collect();
        let unlimited = {
            let mut s = SeenSet::new(keyer.clone());
            s.add(&opt[..50_000]).unwrap();
            s.heap_bytes() as u64
        };
        let mut set = SeenSet::new(keyer).with_memory_limit(Some(unlimited));
        assert_eq!(set.memory_limit(), Some(unlimited));
        assert!(set.add(&opt[..50_000]).unwrap().iter().all(|v| v.is_new()));
        let before = (set.len(), set.heap_bytes());
        // Known keys fit whatever the conservative count says.
        assert!(set.add(&opt[..50_000]).unwrap().iter().all(|v| !v.is_new()));
        let err = set.add(&opt).unwrap_err();
        assert_eq!(err.limit, unlimited);
        assert!(err.needed > unlimited);
        assert!(err.to_string().contains("memory limit"));
        assert_eq!((set.len(), set.heap_bytes()), before);
        // The refused batch left nothing behind: its first new key is new.
        assert_eq!(set.contains(lines[150_000].as_bytes()), Ok(false));
        assert!(set.add_fingerprints(&[1u128 << 100; 1]).is_ok());
        // A set already past a limit set below it still takes a batch that
        // adds nothing (empty, or known keys only).
        let mut tiny = SeenSet::new(KeyConfig::default().keyer()).with_memory_limit(Some(1));
        assert!(tiny.add::<&str>(&[]).unwrap().is_empty());
        assert!(tiny.add(&[Some("http://a/")]).is_err());
    }

    /// Fingerprints with repeats within and across batches, checked against
    /// a `HashSet` fed in the same order: small batches (one thread), large
    /// ones (sorted into shards and filled on several threads, also an odd
    /// number of them) and one past [`PIECE`].
    #[test]
    fn seen_set_verdicts_follow_feed_order_in_batches_of_any_size() {
        use std::collections::HashSet;
        let mut state = 1u64;
        let mut fps = Vec::new();
        for i in 0..(PIECE + 80_000) as u64 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Half repeat one of the keys so far, the latest ones most often.
            let key = if state >> 63 == 1 {
                i
            } else {
                (state >> 20) % (i + 1)
            };
            fps.push(crate::uri::key::fingerprint(&key.to_le_bytes()));
        }
        let mut oracle = HashSet::new();
        let want: Vec<bool> = fps.iter().map(|&fp| oracle.insert(fp)).collect();
        for threads in [0, 1, 2, 3] {
            let mut set = SeenSet::new(KeyConfig::default().keyer())
                .with_threads(threads)
                .unwrap();
            let mut got = Vec::new();
            let mut from = 0usize;
            for len in [
                1,
                100,
                PARALLEL_MIN - 1,
                PARALLEL_MIN,
                50_000,
                PIECE + 1,
                usize::MAX,
            ] {
                let to = from.saturating_add(len).min(fps.len());
                got.extend(set.add_fingerprints(&fps[from..to]).unwrap());
                from = to;
            }
            assert_eq!(got, want, "{threads} threads");
            assert_eq!(set.len(), oracle.len());
        }
    }

    /// Lines without a key (invalid, or `None`) between keyed ones keep
    /// every verdict in its place.
    #[test]
    fn seen_set_verdicts_keep_their_lines_places() {
        let keyer = KeyConfig::default().keyer();
        let lines: Vec<Option<String>> = (0..3 * PARALLEL_MIN)
            .map(|i| match i % 11 {
                0 => None,
                7 => Some(format!("http://example.com/ {i}")),
                _ => Some(format!("http://Example.com/{}", i % 1_000)),
            })
            .collect();
        let mut set = SeenSet::new(keyer).with_threads(2).unwrap();
        let verdicts = set.add(&lines).unwrap();
        let mut seen = std::collections::HashSet::new();
        for (line, verdict) in lines.iter().zip(&verdicts) {
            match line {
                None => assert_eq!(*verdict, Verdict::Null),
                Some(l) if l.contains(' ') => assert!(matches!(verdict, Verdict::Invalid(_))),
                Some(l) => {
                    let want = if seen.insert(l.to_ascii_lowercase()) {
                        Verdict::New
                    } else {
                        Verdict::Duplicate
                    };
                    assert_eq!(*verdict, want, "{l}");
                }
            }
        }
        assert_eq!(set.len(), seen.len());
    }

    #[test]
    fn seen_set_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<SeenSet>();
        check::<Keyer>();
    }
}
