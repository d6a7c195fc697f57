//! Phase 2, in parallel over shards: each shard inserts its buckets in
//! chunk order and flags the lines that were new, so "first seen" never
//! depends on threads, chunk size or batch boundaries.

use std::sync::atomic::Ordering;

use super::super::error::Error;
use super::super::memory::grown_capacity;
use super::super::prefetch::prefetch_item;
use super::super::prior::PriorKeys;
use super::super::spill::Partitions;
use super::{ChunkState, NEW};
use crate::engine::seen::fp_sort::sort_by_fp;
use crate::engine::seen::fpset::Insert;
use crate::engine::seen::shard::Pending;
use crate::engine::seen::shard::ShardSet;

/// How many lookups after its key was found a count is incremented.
const COUNT_DELAY: usize = 16;

/// Count increments made [`COUNT_DELAY`] lookups late. A count is found by
/// its key's id, which a lookup gives only at its end, and the counts of a
/// large run are far apart in memory, so an increment made at once waits
/// for its count to come from memory. Its cache line is prefetched when the
/// id is known instead, and the increment made once the line has had time
/// to arrive (1 GiB crawl dump, `--count`: inserts phase 1.47 -> 1.25 s).
/// Increments commute, so the counts are the same once [`finish`] ran.
///
/// [`finish`]: LateCounts::finish
#[derive(Default)]
struct LateCounts {
    /// The ids of the increments not made yet, in a ring.
    ids: [u32; COUNT_DELAY],
    /// Increments asked for so far.
    asked: usize,
}

impl LateCounts {
    /// Increments the count of `id`, [`COUNT_DELAY`] calls from now.
    #[inline]
    fn add(&mut self, counts: &mut [u64], id: u32) {
        prefetch_item(counts, id as usize);
        let at = self.asked % COUNT_DELAY;
        if self.asked >= COUNT_DELAY {
            bump(counts, self.ids[at]);
        }
        self.ids[at] = id;
        self.asked += 1;
    }

    /// Makes the increments not made yet.
    fn finish(&mut self, counts: &mut [u64]) {
        for &id in self.ids.iter().take(self.asked.min(COUNT_DELAY)) {
            bump(counts, id);
        }
        self.asked = 0;
    }
}

/// Adds one to the count of `id` (an id without a count is not counted:
/// it cannot occur, every key gets its count when it is new).
#[inline]
fn bump(counts: &mut [u64], id: u32) {
    if let Some(c) = counts.get_mut(id as usize) {
        *c += 1;
    }
}

/// One shard: its set, and with counts, the count of each key by id.
pub struct ShardState {
    set: ShardSet,
    counting: bool,
    counts: Vec<u64>,
    /// With a prior set: the keys first seen in the batch, and buffers for
    /// asking the prior set about them.
    firsts: Vec<First>,
    /// Room for sorting `firsts`.
    spare: Vec<First>,
    fps: Vec<u128>,
    found: Vec<bool>,
    fresh: Vec<u128>,
}

/// A key first seen in a batch: its fingerprint, its line (chunk of the
/// batch, line record) and its id.
#[derive(Clone, Copy, Debug)]
struct First {
    fp: u128,
    work: u32,
    at: u32,
    id: u32,
}

/// The mark of a count whose key the prior set held: its first-seen line
/// is not printed (see [`counted`](crate::engine::output::counted)).
pub const KNOWN: u64 = 1 << 63;

impl ShardState {
    /// An empty shard, the `shard`-th.
    pub fn new(shard: usize, exact: bool, counting: bool) -> Self {
        Self {
            set: ShardSet::new(shard, exact, counting),
            counting,
            counts: Vec::new(),
            firsts: Vec::new(),
            spare: Vec::new(),
            fps: Vec::new(),
            found: Vec::new(),
            fresh: Vec::new(),
        }
    }

    /// Distinct keys in this shard.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Phase 2 for shard `s`: inserts its entries of every chunk, in order.
    /// Returns how many were new (to the run, and to `prior` when there is
    /// one: see [`settle_prior`](Self::settle_prior)).
    ///
    /// # Errors
    /// The prior set's.
    pub fn insert_batch(
        &mut self,
        s: usize,
        works: &[ChunkState],
        prior: Option<&dyn PriorKeys>,
    ) -> Result<u64, Error> {
        let counting = self.counting;
        let counts = &mut self.counts;
        let mut late = LateCounts::default();
        let mut new = 0u64;
        let firsts = &mut self.firsts;
        firsts.clear();
        // The chunk being inserted.
        let current = std::cell::Cell::new(0u32);
        // What follows an insert: the count, the line's flag.
        let mut record = |w: &ChunkState, e: &Pending, ins: Insert| {
            if prior.is_some() && ins.is_new() {
                firsts.push(First {
                    fp: e.fingerprint(),
                    work: current.get(),
                    at: e.at,
                    id: ins.id(),
                });
            }
            let id = ins.id();
            if counting {
                if ins.is_new() {
                    let id = id as usize;
                    if counts.len() <= id {
                        counts.resize(id + 1, 0);
                    }
                    counts[id] = 1;
                } else {
                    late.add(counts, id);
                }
            }
            let flag = if ins.is_new() {
                NEW | (id & !NEW)
            } else {
                id & !NEW
            };
            new += u64::from(ins.is_new());
            if let Some(f) = w.flags.get(e.at as usize) {
                f.store(flag, Ordering::Relaxed);
            }
        };
        // One loop per kind of set: no dispatch per entry.
        match &mut self.set {
            ShardSet::Fingerprints(t) => {
                for (k, w) in works.iter().enumerate() {
                    current.set(k as u32);
                    t.insert_all(&w.buckets[s], Pending::fingerprint, |e, ins| {
                        record(w, e, ins);
                    });
                }
            }
            ShardSet::FingerprintIds(t) => {
                for (k, w) in works.iter().enumerate() {
                    current.set(k as u32);
                    t.insert_all(&w.buckets[s], Pending::fingerprint, |e, ins| {
                        record(w, e, ins);
                    });
                }
            }
            ShardSet::Exact(keys) => {
                for (k, w) in works.iter().enumerate() {
                    current.set(k as u32);
                    let key_of = |e: &Pending| w.entry_key(e);
                    let prefetch_rec = |e: &Pending| w.prefetch_entry(e);
                    keys.insert_all(
                        &w.buckets[s],
                        Pending::fingerprint,
                        key_of,
                        prefetch_rec,
                        |e, ins| record(w, e, ins),
                    );
                }
            }
        }
        late.finish(counts);
        match prior {
            Some(prior) => Ok(new - self.settle_prior(works, prior)?),
            None => Ok(new),
        }
    }

    /// After the inserts of a batch, asks `prior` about the keys the run
    /// saw first in it ([`firsts`](Self::firsts), sorted by fingerprint
    /// first). A key `prior` holds is a duplicate: its line loses its
    /// [`NEW`] flag, or with counts keeps it (the first-seen lines and the
    /// ids must stay in step) and its count gets [`KNOWN`]. The others are
    /// handed to `prior` as new. Returns how many `prior` held.
    fn settle_prior(&mut self, works: &[ChunkState], prior: &dyn PriorKeys) -> Result<u64, Error> {
        let firsts = &mut self.firsts;
        if firsts.is_empty() {
            return Ok(0);
        }
        sort_by_fp(firsts, &mut self.spare, |f| f.fp);
        self.fps.clear();
        self.fps.extend(firsts.iter().map(|f| f.fp));
        self.found.clear();
        self.found.resize(firsts.len(), false);
        prior.contains_sorted(&self.fps, &mut self.found)?;
        let mut known = 0u64;
        let mut fresh = std::mem::take(&mut self.fresh);
        fresh.clear();
        for (f, &found) in firsts.iter().zip(&self.found) {
            if !found {
                fresh.push(f.fp);
                continue;
            }
            known += 1;
            if self.counting {
                if let Some(c) = self.counts.get_mut(f.id as usize) {
                    *c |= KNOWN;
                }
            } else if let Some(flag) = works
                .get(f.work as usize)
                .and_then(|w| w.flags.get(f.at as usize))
            {
                flag.store(f.id & !NEW, Ordering::Relaxed);
            }
        }
        let added = prior.add_new(&fresh);
        self.fresh = fresh;
        added?;
        Ok(known)
    }

    /// Tells the set how many distinct keys it is expected to end with
    /// (see [`ShardSet::expect_total`]).
    pub fn expect_total(&mut self, keys: usize) {
        self.set.expect_total(keys);
    }

    /// Bytes this shard would take after `more` new keys: its set, and
    /// with counts, its counts (the vector doubles).
    pub fn bytes_after(&self, more: usize) -> usize {
        let need = self.set.len().saturating_add(more);
        let counts = if self.counting {
            grown_capacity(self.counts.capacity(), need).saturating_mul(8)
        } else {
            0
        };
        self.set.bytes_after(more).saturating_add(counts)
    }

    /// Phase 2 once the run spills, for shard `s`: a line whose key the
    /// (frozen) set holds is a duplicate, counted; every other line is
    /// undecided: flagged [`NEW`] and its record appended to `parts`.
    /// Returns the number of duplicates and of undecided lines.
    ///
    /// # Errors
    /// [`Error::Spill`] when a partition file cannot be written.
    pub fn lookup_batch(
        &mut self,
        s: usize,
        works: &[ChunkState],
        exact: bool,
        parts: &mut Partitions,
    ) -> Result<(u64, u64), Error> {
        let (mut seen, mut undecided) = (0u64, 0u64);
        let counts = &mut self.counts;
        let mut late = LateCounts::default();
        // What follows a lookup: the count or the record, the line's flag.
        let mut record = |w: &ChunkState, e: &Pending, found: Option<u32>| -> Result<(), Error> {
            let flag = match found {
                Some(id) => {
                    late.add(counts, id);
                    seen += 1;
                    0
                }
                None => {
                    let key = match w.recs.get(e.at as usize) {
                        Some(rec) if exact => Some(w.key(rec)),
                        _ => None,
                    };
                    parts.push(e.fingerprint(), w.seq_base + u64::from(e.at), key)?;
                    undecided += 1;
                    NEW
                }
            };
            if let Some(f) = w.flags.get(e.at as usize) {
                f.store(flag, Ordering::Relaxed);
            }
            Ok(())
        };
        for w in works {
            let Some(bucket) = w.buckets.get(s) else {
                continue;
            };
            // One loop per kind of set, the fingerprint tables' with their
            // buckets prefetched: a frozen set is as large as the budget,
            // and its lookups one at a time would cost 40% more.
            match &self.set {
                ShardSet::Fingerprints(t) => {
                    t.find_all(bucket, Pending::fingerprint, |e, found| record(w, e, found))?;
                }
                ShardSet::FingerprintIds(t) => {
                    t.find_all(bucket, Pending::fingerprint, |e, found| record(w, e, found))?;
                }
                ShardSet::Exact(keys) => {
                    let key_of = |e: &Pending| w.entry_key(e);
                    let prefetch_rec = |e: &Pending| w.prefetch_entry(e);
                    keys.find_all(
                        bucket,
                        Pending::fingerprint,
                        key_of,
                        prefetch_rec,
                        |e, found| record(w, e, found),
                    )?;
                }
            }
        }
        late.finish(counts);
        Ok((seen, undecided))
    }

    /// Frees the set and the counts (after the counts were written).
    pub fn clear(&mut self) {
        *self = Self::new(0, false, false);
    }

    /// Takes the count of each key, by id: ids are dense and given in the
    /// order the keys were first seen.
    pub fn take_counts(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.counts)
    }
}
