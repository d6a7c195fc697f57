//! [`FingerprintTable`]: insert, look up, grow.

use super::bucket::{place, prefetch_lookup, probe, Bucket, Kept, Probe, BUCKET, GROUP, SLOTS};
use super::memory::{Slots, PAGE_BUCKETS};

/// Numerator / denominator of the maximum load factor.
const MAX_LOAD: (usize, usize) = (875, 1000);

/// Growth factor of tables of a huge page or more (before rounding to whole
/// huge pages).
const GROWTH: f64 = 1.3;

/// The number of phases the growth of tables can be shifted by (one per
/// engine shard).
pub(super) const PHASES: usize = 16;

/// How many items ahead [`FingerprintTable::insert_all`] prefetches buckets:
/// enough to cover a memory miss (fewer cost 5 to 18 % more CPU, more
/// gained nothing).
pub const AHEAD: usize = 16;

/// Smallest number of buckets a table starts with (4 KiB).
pub(super) const MIN_BUCKETS: usize = GROUP;

/// The largest expectation a table takes (see
/// [`FingerprintTable::expect_total`]): 2^40 fingerprints, 16 TiB of buckets,
/// past any memory; a larger one is taken as this.
const MAX_EXPECTED: usize = 1 << 40;
/// What [`FingerprintTable::insert`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insert {
    /// The fingerprint was not in the table; it now is, with this dense id.
    New(u32),
    /// The fingerprint was already in the table, with this id.
    Seen(u32),
}

impl Insert {
    /// True for [`Insert::New`].
    pub fn is_new(self) -> bool {
        matches!(self, Insert::New(_))
    }

    /// The dense id, whether new or seen.
    pub fn id(self) -> u32 {
        match self {
            Insert::New(id) | Insert::Seen(id) => id,
        }
    }
}

/// A set of fingerprints that gives each one a dense id (0, 1, 2, ... in
/// insertion order) when `WITH_IDS` is true. Without ids only the
/// fingerprints are stored and every id reads as 0.
#[derive(Debug)]
pub struct FingerprintTable<const WITH_IDS: bool> {
    pub(super) slots: Slots,
    /// The id of each slot (bucket × 5 + slot), with ids.
    pub(super) ids: Vec<u32>,
    /// Fingerprints stored.
    pub(super) filled: usize,
    /// Shifts this table's sizes (see the module docs), below [`PHASES`].
    phase: usize,
    /// Fingerprints the table is expected to hold in the end (see
    /// [`expect_total`](Self::expect_total)); 0 when unknown.
    expected: usize,
}

impl<const WITH_IDS: bool> Default for FingerprintTable<WITH_IDS> {
    fn default() -> Self {
        Self::with_phase(0)
    }
}

impl<const WITH_IDS: bool> FingerprintTable<WITH_IDS> {
    /// Bytes of ids a bucket takes.
    pub(super) const ID_BYTES: usize = if WITH_IDS { 4 * SLOTS } else { 0 };

    /// An empty table whose sizes are shifted by `phase` (taken modulo
    /// [`PHASES`]): give each of several tables that fill up together
    /// another phase.
    pub fn with_phase(phase: usize) -> Self {
        Self {
            slots: Slots::zeroed(MIN_BUCKETS),
            ids: if WITH_IDS {
                vec![0; MIN_BUCKETS * SLOTS]
            } else {
                Vec::new()
            },
            filled: 0,
            phase: phase % PHASES,
            expected: 0,
        }
    }

    /// Tells the table how many fingerprints it is expected to hold in the
    /// end (0: unknown, the default). Its next growth then goes straight
    /// to the first of its sizes that holds that many, instead of taking
    /// every step of about 1.3 on the way, each of which moves every entry.
    /// The table does not grow before it is full. The expectation changes
    /// nothing else: past too low a one the table grows step by step, and
    /// too high a one only costs memory.
    pub fn expect_total(&mut self, fingerprints: usize) {
        self.expected = fingerprints.min(MAX_EXPECTED);
    }

    /// Number of distinct fingerprints stored.
    pub fn len(&self) -> usize {
        self.filled
    }

    /// Bytes of memory held by the table.
    pub fn heap_bytes(&self) -> usize {
        self.slots.len() * BUCKET + self.ids.capacity() * size_of::<u32>()
    }

    /// True when `fp` is in the table.
    pub fn contains(&self, fp: u128) -> bool {
        self.find(fp).is_some()
    }

    /// The id of `fp` when it is in the table (0 for every fingerprint of a
    /// table without ids).
    pub fn find(&self, fp: u128) -> Option<u32> {
        match probe(self.slots.bytes(), self.slots.len(), Kept::of(fp)) {
            Probe::Found { b, j } => Some(self.id_at(b, j)),
            Probe::Absent => None,
        }
    }

    /// [`find`](Self::find) for the fingerprint `fp_of` gives for each of
    /// `items`, in order, passed to `each` with the item; the two buckets of
    /// each are prefetched [`AHEAD`] items early, as in
    /// [`insert_all`](Self::insert_all). Stops at the first error of `each`.
    ///
    /// # Errors
    /// The first error `each` returns.
    #[inline]
    pub fn find_all<T, E>(
        &self,
        items: &[T],
        fp_of: impl Fn(&T) -> u128,
        mut each: impl FnMut(&T, Option<u32>) -> Result<(), E>,
    ) -> Result<(), E> {
        let bytes = self.slots.bytes();
        let len = self.slots.len();
        for (k, item) in items.iter().enumerate() {
            if let Some(ahead) = items.get(k + AHEAD) {
                prefetch_lookup::<WITH_IDS>(bytes, &self.ids, len, Kept::of(fp_of(ahead)));
            }
            each(item, self.find(fp_of(item)))?;
        }
        Ok(())
    }

    /// Bytes the table's buckets (and ids) would take after `more` new
    /// fingerprints (it may grow several times): what the engine checks
    /// against its memory limit before a batch. Growth needs no second
    /// copy of the entries.
    pub fn bytes_after(&self, more: usize) -> usize {
        let want = self.filled.saturating_add(more);
        let mut len = self.slots.len();
        while want > max_filled(len) {
            let grown = self.grown_len(len);
            if grown <= len {
                // Past any size a table can have.
                return usize::MAX;
            }
            len = grown;
        }
        len.saturating_mul(BUCKET + Self::ID_BYTES)
    }

    /// The length a table of `len` buckets grows to: the next of its sizes,
    /// or a later one that holds the expected fingerprints.
    fn grown_len(&self, len: usize) -> usize {
        let mut grown = next_len(len, self.phase);
        while max_filled(grown) < self.expected {
            let next = next_len(grown, self.phase);
            if next <= grown {
                break;
            }
            grown = next;
        }
        grown
    }

    /// Prefetches the buckets (and ids) a lookup of `fp` reads.
    #[inline]
    pub fn prefetch(&self, fp: u128) {
        let len = self.slots.len();
        prefetch_lookup::<WITH_IDS>(self.slots.bytes(), &self.ids, len, Kept::of(fp));
    }

    /// The next id, taken by a key that is not stored in the table (one
    /// whose fingerprint the table holds for another key): it counts as a
    /// fingerprint stored, so ids stay dense.
    pub fn take_id(&mut self) -> u32 {
        let id = self.next_id();
        self.filled += 1;
        id
    }

    /// Inserts `fp`, telling whether it was new. The id of a new fingerprint
    /// is the number of fingerprints inserted before it.
    #[inline]
    pub fn insert(&mut self, fp: u128) -> Insert {
        let k = Kept::of(fp);
        let len = self.slots.len();
        match probe(self.slots.bytes(), len, k) {
            Probe::Found { b, j } => Insert::Seen(self.id_at(b, j)),
            Probe::Absent => {
                if self.filled + 1 > max_filled(len) {
                    self.grow();
                    return self.insert(fp);
                }
                let id = self.next_id();
                if let Some((b, j)) = place(self.slots.bytes_mut(), len, k, true) {
                    self.set_id(b, j, id);
                }
                self.filled += 1;
                Insert::New(id)
            }
        }
    }

    /// Inserts the fingerprint `fp_of` gives for each of `items`, in order,
    /// and passes the item and what [`insert`](Self::insert) would have
    /// returned to `each`. Same results as one `insert` per item, but the two
    /// buckets of each are prefetched [`AHEAD`] items early, and the buckets are
    /// looked up once per run between growths instead of once per item.
    #[inline]
    pub fn insert_all<T>(
        &mut self,
        items: &[T],
        fp_of: impl Fn(&T) -> u128,
        mut each: impl FnMut(&T, Insert),
    ) {
        let mut k = 0usize;
        while k < items.len() {
            let len = self.slots.len();
            let limit = max_filled(len);
            let mut filled = self.filled;
            let mut must_grow = false;
            let bytes = self.slots.bytes_mut();
            let ids = &mut self.ids;
            while let Some(item) = items.get(k) {
                if let Some(ahead) = items.get(k + AHEAD) {
                    prefetch_lookup::<WITH_IDS>(bytes, ids, len, Kept::of(fp_of(ahead)));
                }
                let kept = Kept::of(fp_of(item));
                let ins = match probe(bytes, len, kept) {
                    Probe::Found { b, j } => Insert::Seen(if WITH_IDS {
                        ids.get(b * SLOTS + j).copied().unwrap_or(0)
                    } else {
                        0
                    }),
                    Probe::Absent if filled + 1 > limit => {
                        must_grow = true;
                        break;
                    }
                    Probe::Absent => {
                        // As `next_id`: the number of fingerprints so far.
                        let id = if WITH_IDS { filled as u32 } else { 0 };
                        if let Some((b, j)) = place(bytes, len, kept, true) {
                            if let Some(slot) = ids.get_mut(b * SLOTS + j) {
                                *slot = id;
                            }
                        }
                        filled += 1;
                        Insert::New(id)
                    }
                };
                each(item, ins);
                k += 1;
            }
            self.filled = filled;
            if must_grow {
                self.grow();
            }
        }
    }

    fn next_id(&self) -> u32 {
        if WITH_IDS {
            // Ids are u32: 4 billion distinct keys per table (the engine
            // spreads keys over many tables) before they would wrap.
            self.filled as u32
        } else {
            0
        }
    }

    fn id_at(&self, b: usize, j: usize) -> u32 {
        if WITH_IDS {
            self.ids.get(b * SLOTS + j).copied().unwrap_or(0)
        } else {
            0
        }
    }

    pub(super) fn set_id(&mut self, b: usize, j: usize, id: u32) {
        if let Some(slot) = self.ids.get_mut(b * SLOTS + j) {
            *slot = id;
        }
    }

    /// Grows to the next length (see [`grown_len`](Self::grown_len)): in
    /// place when the map has room, else into a new map (or vector) with
    /// every entry inserted again.
    #[cold]
    #[inline(never)]
    pub(super) fn grow(&mut self) {
        let old_len = self.slots.len();
        let new_len = self.grown_len(old_len);
        if self.slots.extend_in_place(new_len) {
            self.rebuild_in_place(old_len);
            return;
        }
        let old = std::mem::replace(&mut self.slots, Slots::zeroed(new_len));
        let old_ids = std::mem::replace(
            &mut self.ids,
            if WITH_IDS {
                vec![0; new_len * SLOTS]
            } else {
                Vec::new()
            },
        );
        let old = old.bytes();
        for b in 0..old_len {
            for (j, k) in Bucket::at(old, b).entries().enumerate() {
                let bytes = self.slots.bytes_mut();
                if let Some((nb, nj)) = place(bytes, new_len, k, true) {
                    let id = old_ids.get(b * SLOTS + j).copied().unwrap_or(0);
                    self.set_id(nb, nj, id);
                }
            }
        }
    }
}

pub(super) fn max_filled(len: usize) -> usize {
    len.saturating_mul(SLOTS * MAX_LOAD.0) / MAX_LOAD.1
}

/// The home bucket of a fingerprint whose low 64 bits are `lo` in a table
/// of `len` buckets: `lo` read as a fraction of `len` (the engine's shard
/// choice uses the top bits, so the two are independent).
#[inline]
/// TLB misses), and at least one page more.
pub(super) fn next_len(len: usize, phase: usize) -> usize {
    if len < PAGE_BUCKETS {
        return (len * 4).min(PAGE_BUCKETS);
    }
    let pages = len / PAGE_BUCKETS;
    let shift = phase as f64 / PHASES as f64;
    // 2^64 buckets are past any possible table: the loop ends.
    for i in 0..200 {
        let size = GROWTH.powf(f64::from(i) + shift).ceil();
        if size > pages as f64 {
            return (size as usize).saturating_mul(PAGE_BUCKETS);
        }
    }
    len.saturating_add(PAGE_BUCKETS)
}
