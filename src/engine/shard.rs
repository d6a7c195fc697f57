//! One shard of the "seen" set: fingerprints only (the default), or full
//! keys (`exact`), with or without dense ids (ids are needed for counts).

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use super::fpset::{FingerprintTable, Insert};

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

/// Full keys with their dense ids, and the bytes the keys take.
#[derive(Debug, Default)]
pub struct ExactKeys {
    map: HashMap<Box<[u8]>, u32, ahash::RandomState>,
    key_bytes: usize,
}

/// Bytes an exact key takes besides its own bytes: its map slot (a boxed
/// slice and an id, 24 bytes, at a load of at least 7/16 after doubling)
/// and the allocator's header and rounding of the box (about 16).
const EXACT_OVERHEAD: usize = 72;

impl ShardSet {
    /// An empty `shard`-th shard (each grows at its own sizes, see
    /// [`FingerprintTable::with_phase`]); `exact` keeps full keys, `ids`
    /// assigns dense ids.
    pub fn new(shard: usize, exact: bool, ids: bool) -> Self {
        match (exact, ids) {
            (true, _) => Self::Exact(ExactKeys::default()),
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
            Self::Exact(keys) => {
                let next = keys.map.len() as u32;
                // Look up by slice first so a seen key allocates nothing.
                if let Some(&id) = keys.map.get(key) {
                    return Insert::Seen(id);
                }
                match keys.map.entry(key.into()) {
                    Entry::Occupied(e) => Insert::Seen(*e.get()),
                    Entry::Vacant(e) => {
                        e.insert(next);
                        keys.key_bytes += key.len();
                        Insert::New(next)
                    }
                }
            }
        }
    }

    /// The id of the key `key` with fingerprint `fp` when the set holds it
    /// (only `Exact` reads `key`).
    #[inline]
    pub fn find(&self, fp: u128, key: &[u8]) -> Option<u32> {
        match self {
            Self::Fingerprints(t) => t.find(fp),
            Self::FingerprintIds(t) => t.find(fp),
            Self::Exact(keys) => keys.map.get(key).copied(),
        }
    }

    /// Tells a fingerprint set how many keys it is expected to end with,
    /// so that it grows to that size in one step (see
    /// [`FingerprintTable::expect`]); an exact set ignores it.
    pub fn expect(&mut self, keys: usize) {
        match self {
            Self::Fingerprints(t) => t.expect(keys),
            Self::FingerprintIds(t) => t.expect(keys),
            Self::Exact(_) => {}
        }
    }

    /// Bytes the set would take after `more` new keys (for an exact set,
    /// an estimate from the mean length of its keys so far).
    pub fn bytes_after(&self, more: usize) -> usize {
        match self {
            Self::Fingerprints(t) => t.bytes_after(more),
            Self::FingerprintIds(t) => t.bytes_after(more),
            Self::Exact(keys) => {
                let n = keys.map.len();
                let now = keys.key_bytes + n * EXACT_OVERHEAD;
                now.saturating_add(
                    more.saturating_mul(now.checked_div(n).unwrap_or(EXACT_OVERHEAD)),
                )
            }
        }
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        match self {
            Self::Fingerprints(t) => t.len(),
            Self::FingerprintIds(t) => t.len(),
            Self::Exact(keys) => keys.map.len(),
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
