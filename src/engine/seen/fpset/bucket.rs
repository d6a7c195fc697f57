//! The bucket layout and the probe: where a fingerprint lives in a table's
//! bytes. Every read of a bucket goes through [`Bucket`], every write
//! through [`put`], [`mark_overflow`] or [`clear`], so the header and slot
//! arithmetic is written here only.

use crate::engine::prefetch;

/// Bytes of a bucket: one cache line.
pub(super) const BUCKET: usize = 64;

/// Slots in a bucket.
pub(super) const SLOTS: usize = 5;

/// Bytes of a slot (fingerprint bits 0..96).
const SLOT: usize = 12;

/// Bytes of the header that starts each bucket.
const HEADER: usize = 4;

/// Header bits: the number of taken slots.
const COUNT_MASK: u32 = 0b111;

/// Header bit: an insert passed this bucket because it was full.
const OVERFLOW: u32 = 1 << 3;

/// Header bits of slot `j`'s fingerprint bits 96..101 start at
/// `EXTRA_SHIFT + EXTRA_BITS * j`.
const EXTRA_SHIFT: u32 = 4;

/// Fingerprint bits a header keeps for each slot.
const EXTRA_BITS: u32 = 5;

/// Fingerprint bits a table keeps: 96 in the slot, 5 in the header.
#[cfg(test)]
pub(super) const KEPT_BITS: u32 = 96 + EXTRA_BITS;

/// A fingerprint's second bucket is in the same group of this many buckets
/// (4 KiB) as its home, so that both stay close when a table grows in
/// place; table lengths are multiples of it.
pub(super) const GROUP: usize = 64;

/// The part of a fingerprint a table keeps: bits 0..64, 64..96 and
/// 96..101.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Kept {
    pub(super) lo: u64,
    pub(super) mid: u32,
    pub(super) extra: u32,
}

impl Kept {
    #[inline]
    pub(super) fn of(fp: u128) -> Self {
        Self {
            lo: fp as u64,
            mid: (fp >> 64) as u32,
            extra: ((fp >> 96) as u32) & ((1 << EXTRA_BITS) - 1),
        }
    }
}

/// A read-only view of one bucket: a 4-byte header (taken slots, the
/// overflow bit, five slots' fingerprint bits 96..101), then five 12-byte
/// slots of fingerprint bits 0..96.
#[derive(Clone, Copy)]
pub(super) struct Bucket<'a>(&'a [u8; BUCKET]);

impl<'a> Bucket<'a> {
    /// Bucket `b` of `bytes`. Callers only ask for buckets inside the
    /// table; past its end this is an empty bucket (and a debug assertion).
    #[inline(always)]
    pub(super) fn at(bytes: &'a [u8], b: usize) -> Self {
        let whole = bytes
            .get(b.wrapping_mul(BUCKET)..b.wrapping_mul(BUCKET).wrapping_add(BUCKET))
            .and_then(|s| s.try_into().ok());
        debug_assert!(whole.is_some(), "bucket {b} is outside the table");
        Self(whole.unwrap_or(&[0; BUCKET]))
    }

    /// The bucket's 64 bytes, to copy it aside.
    pub(super) fn bytes(self) -> [u8; BUCKET] {
        *self.0
    }

    #[inline(always)]
    fn header(self) -> u32 {
        u32::from_le_bytes([self.0[0], self.0[1], self.0[2], self.0[3]])
    }

    /// Slots taken (`0..=SLOTS`).
    #[inline(always)]
    pub(super) fn taken(self) -> usize {
        ((self.header() & COUNT_MASK) as usize).min(SLOTS)
    }

    /// True when an insert went past this bucket because it was full, so a
    /// lookup must go on to the next one.
    #[inline(always)]
    pub(super) fn overflowed(self) -> bool {
        self.header() & OVERFLOW != 0
    }

    /// The slot that holds `k`, if any.
    ///
    /// The low 64 bits of all five slots are compared without a branch per
    /// slot, and only a slot whose low bits match is checked in full: where a
    /// match lies is random, so a loop that stopped at it would mispredict
    /// about once per lookup.
    #[inline]
    pub(super) fn find(self, k: Kept) -> Option<usize> {
        let mut hits = 0u32;
        for j in 0..SLOTS {
            hits |= u32::from(self.lo(j) == k.lo) << j;
        }
        hits &= (1 << self.taken()) - 1;
        // Almost always no candidate or one.
        while hits != 0 {
            let j = hits.trailing_zeros() as usize;
            if self.kept(j) == k {
                return Some(j);
            }
            hits &= hits - 1;
        }
        None
    }

    /// Bits 0..64 of the fingerprint in slot `j`.
    #[inline(always)]
    fn lo(self, j: usize) -> u64 {
        self.0
            .get(HEADER + j * SLOT..)
            .and_then(<[u8]>::first_chunk::<8>)
            .map_or(0, |b| u64::from_le_bytes(*b))
    }

    /// The fingerprint bits kept in slot `j`.
    #[inline]
    pub(super) fn kept(self, j: usize) -> Kept {
        let o = HEADER + j * SLOT;
        let mid = self.0.get(o + 8..o + 12).and_then(|m| m.try_into().ok());
        Kept {
            lo: self.lo(j),
            mid: u32::from_le_bytes(mid.unwrap_or([0; 4])),
            extra: (self.header() >> (EXTRA_SHIFT + EXTRA_BITS * j as u32))
                & ((1 << EXTRA_BITS) - 1),
        }
    }

    /// The kept fingerprints of the taken slots, in slot order.
    pub(super) fn entries(self) -> impl Iterator<Item = Kept> + 'a {
        (0..self.taken()).map(move |j| self.kept(j))
    }
}

/// Writes the header of bucket `b`.
#[inline]
fn set_header(bytes: &mut [u8], b: usize, h: u32) {
    let at = bytes.get_mut(b.wrapping_mul(BUCKET)..b.wrapping_mul(BUCKET).wrapping_add(HEADER));
    debug_assert!(at.is_some(), "bucket {b} is outside the table");
    if let Some(d) = at {
        d.copy_from_slice(&h.to_le_bytes());
    }
}

/// Empties bucket `b` (its slots are then free to be written again).
pub(super) fn clear(bytes: &mut [u8], b: usize) {
    set_header(bytes, b, 0);
}

/// Sets the overflow bit of bucket `b`.
fn mark_overflow(bytes: &mut [u8], b: usize) {
    let h = Bucket::at(bytes, b).header();
    set_header(bytes, b, h | OVERFLOW);
}

/// Puts `k` into the next free slot of bucket `b`, which has one; returns
/// the slot.
#[inline(always)]
fn put(bytes: &mut [u8], b: usize, k: Kept) -> usize {
    let h = Bucket::at(bytes, b).header();
    let taken = (h & COUNT_MASK) as usize;
    debug_assert!(taken < SLOTS, "bucket {b} is full");
    let o = b * BUCKET + HEADER + taken * SLOT;
    let at = bytes.get_mut(o..o + SLOT);
    debug_assert!(at.is_some(), "bucket {b} is outside the table");
    if let Some(d) = at {
        d[..8].copy_from_slice(&k.lo.to_le_bytes());
        d[8..].copy_from_slice(&k.mid.to_le_bytes());
    }
    let extra = k.extra << (EXTRA_SHIFT + EXTRA_BITS * taken as u32);
    set_header(bytes, b, (h + 1) | extra);
    taken
}

/// Asks the CPU to start loading the two buckets a lookup of `k` reads in
/// `bytes` (`len` buckets), its home and its second bucket, and with ids
/// (`WITH_IDS`) their ids in `ids`. A plain load cannot stand in for this:
/// its value must be kept somewhere, and the instruction that keeps it
/// waits for the miss. A key found has its id read next, and with counts
/// its count after that, so the ids are prefetched too.
#[inline]
pub(super) fn prefetch_lookup<const WITH_IDS: bool>(
    bytes: &[u8],
    ids: &[u32],
    len: usize,
    k: Kept,
) {
    let h = home(k.lo, len);
    let s = second(h, k);
    prefetch_line(bytes, h);
    prefetch_line(bytes, s);
    if WITH_IDS {
        prefetch::prefetch_item(ids, h * SLOTS);
        prefetch::prefetch_item(ids, s * SLOTS);
    }
}

/// Asks the CPU to start loading bucket `b` of `bytes` into cache.
#[inline]
pub(super) fn prefetch_line(bytes: &[u8], b: usize) {
    prefetch::prefetch(bytes, b.wrapping_mul(BUCKET));
}

/// Where a lookup found a fingerprint, or where it stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Probe {
    /// In slot `j` of bucket `b`.
    Found { b: usize, j: usize },
    /// Not in the table.
    Absent,
}

/// Where `k` is in `bytes` (`len` buckets): its home, its second bucket,
/// or the buckets after the home up to the first one no insert went past.
#[inline(always)]
pub(super) fn probe(bytes: &[u8], len: usize, k: Kept) -> Probe {
    let h = home(k.lo, len);
    let home_bucket = Bucket::at(bytes, h);
    if let Some(j) = home_bucket.find(k) {
        return Probe::Found { b: h, j };
    }
    let s = second(h, k);
    if let Some(j) = Bucket::at(bytes, s).find(k) {
        return Probe::Found { b: s, j };
    }
    let mut b = h;
    let mut passed = home_bucket.overflowed();
    // Bounded by the bucket count, so that even a corrupt table ends.
    for _ in 0..len {
        if !passed {
            break;
        }
        b = next_bucket(b, len);
        let bk = Bucket::at(bytes, b);
        if let Some(j) = bk.find(k) {
            return Probe::Found { b, j };
        }
        passed = bk.overflowed();
    }
    Probe::Absent
}

/// The second bucket a fingerprint may take: another bucket of its home's
/// group of [`GROUP`] buckets, chosen by fingerprint bits 64..96 (which the
/// home does not depend on).
#[inline(always)]
pub(super) fn second(home: usize, k: Kept) -> usize {
    let r = 1 + ((u64::from(k.mid) * (GROUP as u64 - 1)) >> 32) as usize;
    home ^ r
}

/// Puts `k` (not in the table) into the emptier of its home and second
/// bucket, the home when they are even. When both are full, puts it into
/// the first bucket after the home that has a free slot, and marks every
/// full bucket it passes (the home first) as overflowed. Returns the
/// bucket and slot, or `None` when `wrap` is false and no bucket up to the
/// end has room (or, with `wrap`, none at all, which a table under its
/// maximum load never is).
#[inline]
pub(super) fn place(bytes: &mut [u8], len: usize, k: Kept, wrap: bool) -> Option<(usize, usize)> {
    let h = home(k.lo, len);
    place_from(bytes, len, h, second(h, k), k, wrap)
}

/// [`place`] for the home `h` and second bucket `s` of `k` (indexes into
/// `bytes`, which may be part of a table).
#[inline(always)]
pub(super) fn place_from(
    bytes: &mut [u8],
    len: usize,
    h: usize,
    s: usize,
    k: Kept,
    wrap: bool,
) -> Option<(usize, usize)> {
    let (taken_home, taken_second) = (Bucket::at(bytes, h).taken(), Bucket::at(bytes, s).taken());
    if taken_home.min(taken_second) < SLOTS {
        let b = if taken_home <= taken_second { h } else { s };
        return Some((b, put(bytes, b, k)));
    }
    let mut b = h;
    for _ in 0..len {
        if Bucket::at(bytes, b).taken() < SLOTS {
            return Some((b, put(bytes, b, k)));
        }
        mark_overflow(bytes, b);
        if b + 1 == len && !wrap {
            return None;
        }
        b = next_bucket(b, len);
    }
    None
}

/// The home bucket of a fingerprint whose low 64 bits are `lo` in a table
/// of `len` buckets: `lo` read as a fraction of `len` (the engine's shard
/// choice uses the top bits, so the two are independent).
#[inline]
pub(super) fn home(lo: u64, len: usize) -> usize {
    ((u128::from(lo) * len as u128) >> 64) as usize
}

/// The bucket after `b`, wrapping around.
#[inline]
fn next_bucket(b: usize, len: usize) -> usize {
    if b + 1 == len {
        0
    } else {
        b + 1
    }
}
