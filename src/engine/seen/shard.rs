//! One shard of the "seen" set: fingerprints only (the default), or full
//! keys (`exact`), with or without dense ids (ids are needed for counts).

use std::collections::HashMap;

use super::fpset::{FingerprintTable, Insert, AHEAD};
use crate::engine::memory::grown_capacity;
use crate::engine::prefetch::{prefetch, prefetch_item};

/// How many shards the seen set is split into (a power of two). Shards are
/// chosen by the top bits of a fingerprint; the count does not depend on the
/// number of threads, and the output does not depend on it either.
///
/// 16 rather than 64: phase 1 appends every fingerprint to one of `SHARDS`
/// buckets (fewer write streams), and larger tables are rounded to whole
/// 2 MiB huge pages with a smaller relative loss (on the 1 GiB crawl, 64
/// shards of 105k keys each needed 4 MiB tables at 40 % load; 16 shards
/// of 422k keys fit 12 MiB tables at 54 %). Phase 2 still has ample
/// parallel work for a handful of threads.
pub const SHARDS: usize = 16;

/// Bits of the fingerprint that choose the shard.
pub const SHARD_BITS: u32 = SHARDS.trailing_zeros();

/// The shard of a fingerprint.
#[inline]
pub fn shard_of(fp: u128) -> usize {
    (fp >> (128 - SHARD_BITS)) as usize
}

/// A fingerprint waiting for its shard's inserts, and where it came from:
/// a chunk's line record in the engine, a position in the batch in the
/// seen-set. 24 bytes: a `u128` field would align the pair to 32.
#[derive(Clone, Copy, Debug)]
pub struct Pending {
    fp: [u64; 2],
    /// The line record or position.
    pub at: u32,
}

impl Pending {
    #[inline]
    pub fn new(fp: u128, at: u32) -> Self {
        Self {
            fp: [fp as u64, (fp >> 64) as u64],
            at,
        }
    }

    #[inline]
    pub fn fingerprint(&self) -> u128 {
        (u128::from(self.fp[1]) << 64) | u128::from(self.fp[0])
    }
}

/// A set of keys (by fingerprint or by full key).
#[derive(Debug)]
pub enum ShardSet {
    /// 128-bit fingerprints only.
    Fingerprints(FingerprintTable<false>),
    /// 128-bit fingerprints with dense ids.
    FingerprintIds(FingerprintTable<true>),
    /// Full keys, each with its dense id.
    Exact(ExactKeys),
}

/// Full keys with their dense ids: each key's bytes in blocks of memory,
/// found by its fingerprint, and compared byte for byte before a key
/// counts as seen. A key whose fingerprint the table holds for another key
/// (a fingerprint collision, which the table's 105 bits make about
/// n²/2¹⁰⁶ likely) is kept in a map of its own.
///
/// Blocks instead of a map of boxed keys, whose inserts and frees cost
/// twice the whole run; blocks that are never moved, instead of one growing
/// buffer whose reallocations copy every key again.
#[derive(Debug)]
pub struct ExactKeys {
    /// Each key's fingerprint, with the key's id.
    table: FingerprintTable<true>,
    /// The keys, back to back in blocks of [`KEY_BLOCK`] bytes or of one
    /// longer key; a block is never reallocated.
    blocks: Vec<Vec<u8>>,
    /// Where each key lies in `blocks`, by id.
    spans: Vec<KeySpan>,
    /// Bytes of keys in `blocks`, and bytes the blocks hold.
    stored: usize,
    held: usize,
    /// The keys whose fingerprint the table holds for another key.
    others: HashMap<Box<[u8]>, u32, ahash::RandomState>,
}

/// Where a key of [`ExactKeys`] lies: a block, and a range in it.
#[derive(Clone, Copy, Debug)]
struct KeySpan {
    block: u32,
    start: u32,
    len: u32,
}

/// Bytes of a key block.
const KEY_BLOCK: usize = 1 << 20;

/// Bytes a key of [`ExactKeys::others`] takes besides its own bytes: its
/// map slot (a boxed slice and an id, 24 bytes, at a load of at least 7/16
/// after doubling) and the allocator's header and rounding of the box
/// (about 16).
const OTHER_OVERHEAD: usize = 72;

/// The length assumed for keys before any is known.
const KEY_BYTES_GUESS: usize = 80;

/// How many entries ahead of its insert [`ExactKeys::insert_all`] looks an
/// entry up in the table to prefetch where its key lies, and how many
/// ahead it reads that place to prefetch the key.
const SPAN_AHEAD: usize = AHEAD / 2;
const KEY_AHEAD: usize = AHEAD / 4;

impl ExactKeys {
    fn with_phase(phase: usize) -> Self {
        Self {
            table: FingerprintTable::with_phase(phase),
            blocks: Vec::new(),
            spans: Vec::new(),
            stored: 0,
            held: 0,
            others: HashMap::default(),
        }
    }

    /// The key with id `id`.
    fn key(&self, id: u32) -> &[u8] {
        let Some(span) = self.spans.get(id as usize) else {
            return &[];
        };
        let start = span.start as usize;
        self.blocks
            .get(span.block as usize)
            .and_then(|b| b.get(start..start + span.len as usize))
            .unwrap_or_default()
    }

    /// Asks for the first bytes of key `id`.
    fn prefetch_key(&self, id: u32) {
        if let Some(span) = self.spans.get(id as usize) {
            if let Some(block) = self.blocks.get(span.block as usize) {
                prefetch(block, span.start as usize);
            }
        }
    }

    /// Stores `key` as the key of the next id.
    fn push_key(&mut self, key: &[u8]) {
        let fits = self
            .blocks
            .last()
            .is_some_and(|b| b.capacity() - b.len() >= key.len());
        if !fits {
            let block = Vec::with_capacity(key.len().max(KEY_BLOCK));
            self.held += block.capacity();
            self.blocks.push(block);
        }
        self.stored += key.len();
        let block = self.blocks.len() - 1;
        if let Some(b) = self.blocks.last_mut() {
            let start = b.len();
            b.extend_from_slice(key);
            // A block holds less than 4 GiB: keys are cut with their lines
            // well below that.
            self.spans.push(KeySpan {
                block: block as u32,
                start: start as u32,
                len: key.len() as u32,
            });
        }
    }

    fn insert(&mut self, fp: u128, key: &[u8]) -> Insert {
        match self.table.insert(fp) {
            Insert::New(id) => {
                self.push_key(key);
                Insert::New(id)
            }
            Insert::Seen(id) if self.key(id) == key => Insert::Seen(id),
            Insert::Seen(_) => match self.others.get(key) {
                Some(&id) => Insert::Seen(id),
                None => {
                    let id = self.table.take_id();
                    self.push_key(key);
                    self.others.insert(key.into(), id);
                    Insert::New(id)
                }
            },
        }
    }

    /// [`insert`](Self::insert) of each of `items` in order (its
    /// fingerprint and key from `fp_of` and `key_of`), passing the item and
    /// the result to `each`. The same results, with what each insert reads
    /// asked for early (see [`prefetch_ahead`](Self::prefetch_ahead)).
    pub fn insert_all<'k, T>(
        &mut self,
        items: &'k [T],
        fp_of: impl Fn(&T) -> u128,
        key_of: impl Fn(&T) -> &'k [u8],
        prefetch_key_of: impl Fn(&T),
        mut each: impl FnMut(&T, Insert),
    ) {
        for (k, item) in items.iter().enumerate() {
            self.prefetch_ahead(items, k, &fp_of, &key_of, &prefetch_key_of);
            let ins = self.insert(fp_of(item), key_of(item));
            each(item, ins);
        }
    }

    /// [`find`](Self::find) of each of `items` in order, as
    /// [`insert_all`](Self::insert_all) inserts them; stops at the first
    /// error of `each`.
    ///
    /// # Errors
    /// The first error `each` returns.
    pub fn find_all<'k, T, E>(
        &self,
        items: &'k [T],
        fp_of: impl Fn(&T) -> u128,
        key_of: impl Fn(&T) -> &'k [u8],
        prefetch_key_of: impl Fn(&T),
        mut each: impl FnMut(&T, Option<u32>) -> Result<(), E>,
    ) -> Result<(), E> {
        for (k, item) in items.iter().enumerate() {
            self.prefetch_ahead(items, k, &fp_of, &key_of, &prefetch_key_of);
            each(item, self.find(fp_of(item), key_of(item)))?;
        }
        Ok(())
    }

    /// Before the lookup of `items[k]`, asks for what later lookups read:
    /// the table's buckets [`AHEAD`] items ahead (and what `prefetch_key_of`
    /// asks for, the item's own key's place), where the key that has the
    /// fingerprint lies and the item's key [`SPAN_AHEAD`] ahead, and that
    /// stored key's bytes [`KEY_AHEAD`] ahead. A repeat's comparison
    /// otherwise waited for two misses in a row (the 1 GiB crawl dump's
    /// inserts: 1.74 s without, 1.37 s with).
    #[inline]
    fn prefetch_ahead<'k, T>(
        &self,
        items: &'k [T],
        k: usize,
        fp_of: &impl Fn(&T) -> u128,
        key_of: &impl Fn(&T) -> &'k [u8],
        prefetch_key_of: &impl Fn(&T),
    ) {
        if let Some(ahead) = items.get(k + AHEAD) {
            self.table.prefetch(fp_of(ahead));
            prefetch_key_of(ahead);
        }
        if let Some(ahead) = items.get(k + SPAN_AHEAD) {
            if let Some(id) = self.table.find(fp_of(ahead)) {
                prefetch_item(&self.spans, id as usize);
            }
            let key = key_of(ahead);
            prefetch(key, 0);
            prefetch(key, 64);
        }
        if let Some(ahead) = items.get(k + KEY_AHEAD) {
            if let Some(id) = self.table.find(fp_of(ahead)) {
                self.prefetch_key(id);
            }
        }
    }

    fn find(&self, fp: u128, key: &[u8]) -> Option<u32> {
        match self.table.find(fp) {
            Some(id) if self.key(id) == key => Some(id),
            Some(_) => self.others.get(key).copied(),
            None => None,
        }
    }

    fn bytes_after(&self, more: usize) -> usize {
        let (n, stored, held) = (self.table.len(), self.stored, self.held);
        let mean = stored.checked_div(n).unwrap_or(KEY_BYTES_GUESS);
        // New keys fill the last block's room first, then whole blocks.
        let room = self.blocks.last().map_or(0, |b| b.capacity() - b.len());
        let new_blocks = more
            .saturating_mul(mean)
            .saturating_sub(room)
            .div_ceil(KEY_BLOCK)
            .saturating_mul(KEY_BLOCK);
        let others: usize = self.others.keys().map(|k| k.len() + OTHER_OVERHEAD).sum();
        self.table
            .bytes_after(more)
            .saturating_add(held.saturating_add(new_blocks))
            .saturating_add(
                grown_capacity(self.spans.capacity(), n.saturating_add(more))
                    .saturating_mul(size_of::<KeySpan>()),
            )
            .saturating_add(others)
    }
}

impl ShardSet {
    /// An empty `shard`-th shard (each grows at its own sizes, see
    /// [`FingerprintTable::with_phase`]); `exact` keeps full keys, `ids`
    /// assigns dense ids.
    pub fn new(shard: usize, exact: bool, ids: bool) -> Self {
        match (exact, ids) {
            (true, _) => Self::Exact(ExactKeys::with_phase(shard)),
            (false, false) => Self::Fingerprints(FingerprintTable::with_phase(shard)),
            (false, true) => Self::FingerprintIds(FingerprintTable::with_phase(shard)),
        }
    }

    /// Inserts the key `key` with fingerprint `fp` (only `Exact` reads `key`).
    #[inline]
    pub fn insert(&mut self, fp: u128, key: &[u8]) -> Insert {
        match self {
            Self::Fingerprints(t) => t.insert(fp),
            Self::FingerprintIds(t) => t.insert(fp),
            Self::Exact(keys) => keys.insert(fp, key),
        }
    }

    /// Tells a fingerprint set how many keys it is expected to end with,
    /// so that it grows to that size in one step (see
    /// [`FingerprintTable::expect_total`]).
    pub fn expect_total(&mut self, keys: usize) {
        match self {
            Self::Fingerprints(t) => t.expect_total(keys),
            Self::FingerprintIds(t) => t.expect_total(keys),
            Self::Exact(exact) => exact.table.expect_total(keys),
        }
    }

    /// Bytes the set would take after `more` new keys (for an exact set,
    /// an estimate from the mean length of its keys so far).
    pub fn bytes_after(&self, more: usize) -> usize {
        match self {
            Self::Fingerprints(t) => t.bytes_after(more),
            Self::FingerprintIds(t) => t.bytes_after(more),
            Self::Exact(keys) => keys.bytes_after(more),
        }
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        match self {
            Self::Fingerprints(t) => t.len(),
            Self::FingerprintIds(t) => t.len(),
            Self::Exact(keys) => keys.table.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_of_uses_top_bits() {
        assert_eq!(shard_of(0), 0);
        assert_eq!(shard_of(u128::MAX), SHARDS - 1);
        assert_eq!(shard_of(1u128 << 127), SHARDS / 2);
        assert_eq!(shard_of(u128::MAX >> SHARD_BITS), 0);
    }

    proptest::proptest! {
        /// Six keys over three fingerprints (a random function of the key,
        /// so that keys share them): every key gets the next dense id when
        /// first seen and the same id afterwards, with and without the
        /// prefetching loop, and is found again.
        #[test]
        fn shard_exact_ids_are_first_seen_order_whatever_the_fingerprints(
            fps in proptest::array::uniform6(0u128..3),
            keys in proptest::collection::vec(0u8..6, 0..200),
            ahead in proptest::bool::ANY,
        ) {
            let mut set = ExactKeys::with_phase(0);
            const KEYS: [&[u8]; 6] = [b"k0", b"k1", b"k2", b"k3", b"k4", b"k5"];
            let items: Vec<(u128, &[u8])> =
                keys.iter().map(|&k| (fps[usize::from(k)], KEYS[usize::from(k)])).collect();
            let mut got = Vec::new();
            if ahead {
                set.insert_all(&items, |i| i.0, |i| i.1, |_| {}, |_, ins| got.push(ins));
            } else {
                for &(fp, key) in &items {
                    got.push(set.insert(fp, key));
                }
            }
            let mut ids: HashMap<u8, u32> = HashMap::new();
            for (&k, ins) in keys.iter().zip(&got) {
                let next = ids.len() as u32;
                let expected = match ids.get(&k) {
                    Some(&id) => Insert::Seen(id),
                    None => {
                        ids.insert(k, next);
                        Insert::New(next)
                    }
                };
                proptest::prop_assert_eq!(*ins, expected);
            }
            proptest::prop_assert_eq!(set.table.len(), ids.len());
            for (&k, &id) in &ids {
                let key = KEYS[usize::from(k)];
                proptest::prop_assert_eq!(set.key(id), key);
                proptest::prop_assert_eq!(set.find(fps[usize::from(k)], key), Some(id));
            }
        }
    }

    #[test]
    fn shard_exact_keeps_keys_apart_even_with_equal_fingerprints() {
        let mut s = ShardSet::new(0, true, true);
        assert_eq!(s.insert(7, b"a"), Insert::New(0));
        assert_eq!(s.insert(7, b"b"), Insert::New(1));
        assert_eq!(s.insert(7, b"a"), Insert::Seen(0));
        assert_eq!(s.len(), 2);
        let mut f = ShardSet::new(0, false, false);
        assert!(f.insert(7, b"a").is_new());
        assert!(!f.insert(7, b"b").is_new());
        assert_eq!(f.len(), 1);
    }
}
