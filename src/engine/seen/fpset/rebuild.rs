//! Growing a table in place: every entry moves to its bucket for the new
//! length inside the same memory, with no second copy, split between two
//! workers for large tables.

use super::bucket::{
    self, home, place, place_from, prefetch_line, second, Bucket, Kept, BUCKET, GROUP, SLOTS,
};
use super::memory::HUGE_PAGE;
use super::table::FingerprintTable;

/// How many source buckets ahead a rebuild in place prefetches the groups
/// their entries land in. An entry may sit up to 63 buckets from its home
/// (in its second bucket), so its new buckets may lie that far (times the
/// growth) below those of its neighbours. Without this prefetch, rebuilds
/// take about twice as long.
const REBUILD_AHEAD: usize = 80;

impl<const WITH_IDS: bool> FingerprintTable<WITH_IDS> {
    /// After [`Slots::extend_in_place`](super::memory::Slots::extend_in_place): moves every entry (and id) to its
    /// place for the new length, in place, with no second copy.
    ///
    /// Homes keep the order of the fingerprints' low bits, and a second
    /// bucket is in its home's group, so an entry's two new buckets are at
    /// or after its old bucket, except near the start of the table (about
    /// the first 400 buckets) and for entries displaced far. The buckets
    /// are read from the last to the first; each one is emptied and its
    /// entries placed as an insert would, in buckets that were all read (or
    /// are new) already. The few entries with a new bucket before their old
    /// one, or whose place would wrap around the end, wait in a small list
    /// and are inserted at the end.
    ///
    /// On a rayon pool's thread a large table is rebuilt in two parts at
    /// once (see [`split_point`]): in phase 2 the other workers have often
    /// finished their shards and wait while one shard grows.
    pub(super) fn rebuild_in_place(&mut self, old_len: usize) {
        let len = self.slots.len();
        if WITH_IDS {
            self.ids.resize(len * SLOTS, 0);
        }
        let on_pool = rayon::current_thread_index().is_some();
        let split = on_pool
            .then(|| split_point(old_len, len, Self::ID_BYTES))
            .flatten();
        let bytes = self.slots.bytes_mut();
        let ids = self.ids.as_mut_slice();
        let mut waiting = Vec::new();
        match split {
            None => {
                let whole = Part {
                    bytes,
                    ids,
                    base: 0,
                };
                whole.rebuild(len, old_len, 0..old_len, &SetAside::default(), &mut waiting);
            }
            Some((m, d)) => {
                // The lower part's entries land up to bucket `d`, past its
                // own sources: buckets `m..d` are set aside first, and the
                // upper part moves their entries after its own.
                let aside = SetAside::take(bytes, ids, m, d);
                let (low_bytes, high_bytes) = bytes.split_at_mut(d * BUCKET);
                let (low_ids, high_ids) = ids.split_at_mut((d * SLOTS).min(ids.len()));
                let low = Part {
                    bytes: low_bytes,
                    ids: low_ids,
                    base: 0,
                };
                let high = Part {
                    bytes: high_bytes,
                    ids: high_ids,
                    base: d,
                };
                let mut waiting_high = Vec::new();
                rayon::join(
                    || low.rebuild(len, old_len, 0..m, &SetAside::default(), &mut waiting),
                    || high.rebuild(len, old_len, d..old_len, &aside, &mut waiting_high),
                );
                waiting.append(&mut waiting_high);
            }
        }
        for (k, id) in waiting {
            let bytes = self.slots.bytes_mut();
            if let Some((nb, nj)) = place(bytes, len, k, true) {
                self.set_id(nb, nj, id);
            }
        }
    }
}

/// Buckets `base..` of a table being rebuilt in place, and their ids (none
/// without ids).
struct Part<'a> {
    bytes: &'a mut [u8],
    ids: &'a mut [u32],
    base: usize,
}

impl Part<'_> {
    /// Moves the entries of `sources` (this part's own buckets, read from
    /// the last to the first and emptied), then those set aside, to their
    /// places in this part of a table of `len` buckets. An entry whose new
    /// home is outside this part or before its old bucket, or whose place
    /// would run past the part's end, goes to `waiting`.
    fn rebuild(
        mut self,
        len: usize,
        old_len: usize,
        sources: std::ops::Range<usize>,
        aside: &SetAside,
        waiting: &mut Vec<(Kept, u32)>,
    ) {
        // The lowest group of buckets prefetched so far.
        let mut fetched = usize::MAX;
        for b in sources.rev() {
            // The entries of a bucket land near `b · len / old_len`, each in
            // one of two buckets of a group: a random order within the
            // group, which the hardware prefetchers do not follow. So each
            // group is prefetched whole, a few source buckets before its
            // entries arrive.
            let ahead = b.saturating_sub(REBUILD_AHEAD);
            let group = (ahead as u128 * len as u128 / old_len.max(1) as u128) as usize / GROUP;
            if group < fetched {
                for g in group..fetched.min(group + 3) {
                    for i in 0..GROUP {
                        prefetch_line(self.bytes, (g * GROUP + i).wrapping_sub(self.base));
                    }
                }
                fetched = group;
            }
            let local = b - self.base;
            // Copied out first: the bucket's entries may land in it again.
            let copy = Bucket::at(self.bytes, local).bytes();
            let ids = bucket_ids(self.ids, local);
            bucket::clear(self.bytes, local);
            self.move_bucket(len, b, Bucket::at(&copy, 0), &ids, waiting);
        }
        for (i, b) in (aside.first..).take(aside.buckets()).enumerate() {
            let ids = bucket_ids(&aside.ids, i);
            self.move_bucket(len, b, Bucket::at(&aside.bytes, i), &ids, waiting);
        }
    }

    /// Moves the entries of `bk`, the old bucket `from`, whose ids are `ids`
    /// (see [`move_entry`](Self::move_entry)).
    fn move_bucket(
        &mut self,
        len: usize,
        from: usize,
        bk: Bucket<'_>,
        ids: &[u32; SLOTS],
        waiting: &mut Vec<(Kept, u32)>,
    ) {
        for (k, &id) in bk.entries().zip(ids) {
            self.move_entry(len, from, k, id, waiting);
        }
    }

    /// Places `k` (with `id`), read from bucket `from`, from its new home
    /// on, when that home is in this part and not before `from`.
    #[inline]
    fn move_entry(
        &mut self,
        len: usize,
        from: usize,
        k: Kept,
        id: u32,
        waiting: &mut Vec<(Kept, u32)>,
    ) {
        let part_len = self.bytes.len() / BUCKET;
        let h = home(k.lo, len);
        let s = second(h, k);
        let lowest = from.max(self.base);
        let end = self.base + part_len;
        let local = (h.min(s) >= lowest && h.max(s) < end)
            .then(|| place_from(self.bytes, part_len, h - self.base, s - self.base, k, false))
            .flatten();
        match local {
            Some((nb, nj)) => {
                if let Some(slot) = self.ids.get_mut(nb * SLOTS + nj) {
                    *slot = id;
                }
            }
            None => waiting.push((k, id)),
        }
    }
}

/// The ids of bucket `b` in `ids` (zeros where there are none).
fn bucket_ids(ids: &[u32], b: usize) -> [u32; SLOTS] {
    let mut out = [0; SLOTS];
    if let Some(these) = ids.get(b * SLOTS..b * SLOTS + SLOTS) {
        out.copy_from_slice(these);
    }
    out
}

/// Buckets `first..first + buckets()` of a table, copied out before a
/// split rebuild (their headers in the table emptied), with their ids.
#[derive(Default)]
struct SetAside {
    first: usize,
    bytes: Vec<u8>,
    ids: Vec<u32>,
}

impl SetAside {
    fn take(bytes: &mut [u8], ids: &[u32], first: usize, end: usize) -> Self {
        let aside = Self {
            first,
            bytes: bytes
                .get(first * BUCKET..end * BUCKET)
                .unwrap_or_default()
                .to_vec(),
            ids: ids
                .get(first * SLOTS..end * SLOTS)
                .unwrap_or_default()
                .to_vec(),
        };
        for b in first..end {
            bucket::clear(bytes, b);
        }
        aside
    }

    fn buckets(&self) -> usize {
        self.bytes.len() / BUCKET
    }
}

/// Old tables of at least this many bytes are rebuilt in two parts on a
/// pool (four huge pages: a join costs microseconds, a rebuild of this
/// size about a millisecond). One page in tests, so that they split small
/// tables.
pub(super) const SPLIT_REBUILD_BYTES: usize = if cfg!(test) { HUGE_PAGE } else { 4 * HUGE_PAGE };

/// Most bytes a growing table sets aside for a split rebuild: the engine
/// counts this much per worker in its memory budget.
pub const REBUILD_ASIDE_BYTES: usize = 8 << 20;

/// Where a rebuild in place from `old_len` to `len` buckets splits, or
/// `None` for a table too small to split. The lower part moves the entries
/// of buckets `0..m`, the upper one those of `m..old_len`. The new homes
/// of the lower part's entries are below `d` (homes keep the order of the
/// low bits), so the lower part writes only below `d` and the upper one
/// only from `d` on; buckets `m..d` are set aside before the parts start.
/// `m` is half the table, or less where `m..d` (with `id_bytes` of ids a
/// bucket) would take more than [`REBUILD_ASIDE_BYTES`].
pub(super) fn split_point(old_len: usize, len: usize, id_bytes: usize) -> Option<(usize, usize)> {
    if old_len * BUCKET < SPLIT_REBUILD_BYTES || len <= old_len {
        return None;
    }
    let aside_buckets = REBUILD_ASIDE_BYTES / (BUCKET + id_bytes);
    // m · (len − old_len) / old_len buckets lie between m and d.
    let most = aside_buckets as u128 * old_len as u128 / (len - old_len) as u128;
    let m = (old_len / 2).min(usize::try_from(most).unwrap_or(usize::MAX));
    let d = usize::try_from((m as u128 * len as u128).div_ceil(old_len as u128)).ok()?;
    (m > 0 && d <= old_len).then_some((m, d))
}
