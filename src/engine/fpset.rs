//! An open-addressing table of fingerprints, 12.8 bytes a slot.
//!
//! # Layout
//!
//! The table is an array of buckets, one 64-byte cache line each: a 4-byte
//! header, then five 12-byte slots. A slot holds bits 0..96 of a
//! fingerprint; the header holds the number of taken slots (3 bits), an
//! overflow bit, and bits 96..101 of each slot's fingerprint (5 bits a
//! slot). So a table tells fingerprints apart by their low 101 bits. Its
//! callers put into one table only fingerprints whose top bits agree (the
//! engine's shard: 4 bits; a spilled partition: 12), so the position of a
//! table implies those: two keys are merged only if 105 of their 128
//! fingerprint bits agree. The engine's collision bound follows from that
//! (see the crate's engine docs): about `n² / 2¹⁰⁶` for `n` distinct keys.
//!
//! # Probing
//!
//! A fingerprint has two buckets. Its home is its low 64 bits read as a
//! fraction of the bucket count (XXH3 bits are uniform already, and the
//! order of the buckets follows the order of those bits, which the
//! in-place growth below relies on). Its second bucket is another one of
//! the home's group of 64 buckets (4 KiB, one small page), chosen by bits
//! 64..96. An insert takes the emptier of the two. Only when both are full
//! does it take the first bucket after the home that has a free slot, and
//! set the overflow bit of every full bucket it passed (the home first). A
//! lookup reads the home and the second bucket, both prefetched, and goes
//! on past the home only while the overflow bit is set.
//!
//! With one bucket a key (linear probing alone), a lookup of an absent key
//! read 2.5 buckets on average at 80 % load and 6 at 87.5 % (simulated), and
//! a new fingerprint cost 75 to 81 ns against 29 for a repeat in a table of
//! 836 MB. With the second bucket in the same group, an absent key reads 2
//! buckets and 0.1 more at 80 % load, 1.2 more at 87.5 %; new fingerprints
//! took 52 to 57 ns, repeats 31 to 33, and the 8 GiB run's inserts 5.6 s
//! instead of 6.7 (medians of 6 runs each). A second bucket anywhere in the
//! table would balance a little better, but a rebuild in place (see
//! `FingerprintTable::rebuild_in_place`) needs entries to move only a short
//! way.
//!
//! # Growth and memory
//!
//! A table grows before more than 87.5 % of its slots are taken. Below one
//! 2 MiB huge page it grows fourfold; from there on by about 1.3 in whole
//! huge pages. Each table's sizes are shifted by its `phase` (the engine
//! gives each of its 16 shards another one), so the shards, which fill up
//! at the same pace, do not all grow at the same moment: from 8 M keys on,
//! 16 such tables take 16.7 bytes per fingerprint on average over sizes
//! and 18.7 at most (a single table: 14.6 to 19). Steps of 1.3 rather
//! than 1.4 or 1.5 cost more rebuilds, but a rebuild is one sequential
//! pass, split between two workers where it can be. With steps of 1.45
//! an 8 GiB run's seen-set phase took 0.6 s less (of 6), but at the worst
//! sizes the tables alone would take 19.6 bytes a key, past the 20 of
//! the engine's target once its fixed working set is added. Tables from
//! one huge page on grow in place inside a reserved range of address
//! space, without a second copy of their entries (see
//! `FingerprintTable::grow`).
//!
//! A table that is told how many fingerprints to expect
//! ([`FingerprintTable::expect`]; the engine projects it from the input's
//! size) skips the sizes between: its next growth goes to the first size
//! that holds them all.
//!
//! Buckets are prefetched a few inserts ahead
//! ([`FingerprintTable::insert_all`]): without it a 1 GiB engine-only run
//! took 40 % more CPU.

/// Numerator / denominator of the maximum load factor.
const MAX_LOAD: (usize, usize) = (875, 1000);

/// Growth factor of tables of a huge page or more (before rounding to whole
/// huge pages).
const GROWTH: f64 = 1.3;

/// The number of phases the growth of tables can be shifted by (one per
/// engine shard).
pub const PHASES: usize = 16;

/// How many items ahead [`FingerprintTable::insert_all`] prefetches buckets.
/// In a phase-2-only run (13.8 M fingerprints into 16 tables) 16 took
/// 0.55 CPU seconds against 0.58 for 8 and 0.65 for 4; 24 and 32 measured
/// the same as 16.
pub const AHEAD: usize = 16;

/// Bytes of a bucket: one cache line.
const BUCKET: usize = 64;

/// Slots in a bucket.
const SLOTS: usize = 5;

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
pub const KEPT_BITS: u32 = 96 + EXTRA_BITS;

/// A fingerprint's second bucket is in the same group of this many buckets
/// (4 KiB) as its home, so that both stay close when a table grows in
/// place; table lengths are multiples of it.
const GROUP: usize = 64;

/// Smallest number of buckets a table starts with (4 KiB).
const MIN_BUCKETS: usize = GROUP;

/// The largest expectation a table takes (see
/// [`FingerprintTable::expect`]): 2^40 fingerprints, 16 TiB of buckets,
/// past any memory; a larger one is taken as this.
const MAX_EXPECTED: usize = 1 << 40;

/// Tables at least this large live in their own anonymous memory map,
/// faulted in at once (see [`Slots::zeroed`]).
const HUGE_TABLE_BYTES: usize = 64 << 10;

/// Size and alignment of a transparent huge page (x86_64, aarch64 with 4 KiB
/// pages). Tables from [`HUGE_FROM`] on span whole huge pages where they
/// can: far fewer TLB misses on their random accesses.
const HUGE_PAGE: usize = 2 << 20;

/// Tables stay in small pages up to this size; the part of a table past
/// it goes into huge pages. The TLB misses of random accesses cost little
/// while the page tables of all 16 shards' tables (16 KiB per 8 MiB) stay
/// in the CPU's caches, and a huge page costs more to fault in where the
/// system is a virtual machine whose host takes back free memory (free
/// page reporting works in 2 MiB blocks, which are what a huge page is
/// made of): on the VM measured, fresh huge pages faulted in at 0.5 GB/s,
/// small pages at 2.8 GB/s. With this size, the 1 GiB crawl dump (tables
/// of 6 MiB) ran 2 to 5 % faster (B/A 0.950 to 0.983 in three sets of
/// balanced runs), the 8 GiB one (tables that grow to about 55 MiB) no
/// slower (0.987; 1.009 with 16 MiB), the real-derived one the same
/// (0.995).
const HUGE_FROM: usize = 8 << 20;

/// Buckets in a huge page.
const PAGE_BUCKETS: usize = HUGE_PAGE / BUCKET;

/// A table of a huge page or more reserves this many times its size of
/// address space, and at least [`RESERVE_BYTES`], and grows inside it (see
/// `FingerprintTable::grow`).
const RESERVE_FACTOR: usize = 8;

/// The least address space a table of a huge page or more reserves: room
/// for about 70 M fingerprints, so that the engine's 16 shards grow in
/// place up to a billion keys. With 8 times the first huge page only, each
/// shard outgrew its range at 16 MiB and moved to a new map, re-inserting
/// its entries and faulting in fresh pages for them: in an 8 GiB run that
/// took about 0.85 CPU seconds (by perf samples: the copy 0.4, the page
/// faults 0.45), against 0.25 for rebuilding in place. Address space that
/// is never touched costs no memory (the map is made without a swap
/// reservation), but it counts against `ulimit -v` and under strict
/// overcommit: there a table reserves 8 times its size only (see
/// [`address_space_is_free`](super::memory::address_space_is_free)), else an
/// 8 GiB run under `ulimit -v 11500000` ran out of address space.
const RESERVE_BYTES: usize = 1 << 30;

/// Zero-initialised storage for `len` buckets.
#[derive(Debug)]
struct Slots {
    mem: SlotMemory,
    len: usize,
}

#[derive(Debug)]
enum SlotMemory {
    Heap(Vec<u8>),
    /// The buckets start `offset` bytes into the map (huge-page aligned);
    /// the rest of the map is room to grow. `huge`: huge pages were advised
    /// (see [`HUGE_FROM`]).
    Map {
        map: memmap2::MmapMut,
        offset: usize,
        bytes: usize,
        huge: bool,
    },
}

impl Slots {
    fn zeroed(len: usize) -> Self {
        let bytes = len * BUCKET;
        if bytes >= HUGE_TABLE_BYTES {
            // A table of at least one huge page gets a huge page of slack so
            // that it can start on a huge-page boundary: an unaligned 3 MiB
            // table got at most one huge page, and with lengths that are not
            // powers of two half of all table memory went without (perf: the
            // 1 GiB engine-only run took 25 % more CPU). The slack is never
            // touched, so it costs address space, not memory.
            let slack = if bytes >= HUGE_PAGE { HUGE_PAGE } else { 0 };
            // Room to grow in place: address space only (never touched
            // until used), generous only where that is free. Falls back to
            // less room, then to the exact size, if the system refuses
            // that much address space.
            let reserve = |room: usize| {
                memmap2::MmapOptions::new()
                    .len(room + slack)
                    .no_reserve_swap()
                    .map_anon()
            };
            let eight = bytes.saturating_mul(RESERVE_FACTOR);
            let map = if slack > 0 && super::memory::address_space_is_free() {
                reserve(eight.max(RESERVE_BYTES)).or_else(|_| reserve(eight))
            } else if slack > 0 {
                reserve(eight)
            } else {
                reserve(bytes)
            }
            .or_else(|_| memmap2::MmapMut::map_anon(bytes + slack));
            if let Ok(map) = map {
                let offset = if slack > 0 {
                    (HUGE_PAGE - map.as_ptr() as usize % HUGE_PAGE) % HUGE_PAGE
                } else {
                    0
                };
                let huge = slack > 0 && bytes >= HUGE_FROM;
                #[cfg(target_os = "linux")]
                {
                    if huge {
                        advise_huge(&map, offset);
                    }
                    // Fault the table in writable now, in one call. Left to
                    // itself, the first probe of a bucket *reads* it, which
                    // maps the shared zero page; the first store then takes
                    // a second, copy-on-write fault whose page-table flush
                    // interrupts every other core running this process. With
                    // two workers that cost more than the inserts themselves
                    // (system time of a 2-thread run 0.71 s -> 0.10 s).
                    populate(&map, offset, bytes);
                }
                return Self {
                    mem: SlotMemory::Map {
                        map,
                        offset,
                        bytes,
                        huge,
                    },
                    len,
                };
            }
        }
        Self {
            mem: SlotMemory::Heap(vec![0; bytes]),
            len,
        }
    }

    fn bytes(&self) -> &[u8] {
        match &self.mem {
            SlotMemory::Heap(v) => v,
            SlotMemory::Map {
                map, offset, bytes, ..
            } => map.get(*offset..offset + bytes).unwrap_or_default(),
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        match &mut self.mem {
            SlotMemory::Heap(v) => v,
            SlotMemory::Map {
                map, offset, bytes, ..
            } => map.get_mut(*offset..*offset + *bytes).unwrap_or_default(),
        }
    }

    /// Number of buckets.
    fn len(&self) -> usize {
        self.len
    }

    /// Grows to `len` buckets inside the map's spare room, the old buckets
    /// kept as they are and the new ones zero. False (nothing changed) when
    /// there is no such room.
    fn extend_in_place(&mut self, len: usize) -> bool {
        let SlotMemory::Map {
            map,
            offset,
            bytes,
            huge,
        } = &mut self.mem
        else {
            return false;
        };
        let new_bytes = len * BUCKET;
        if new_bytes < *bytes || *offset + new_bytes > map.len() {
            return false;
        }
        #[cfg(target_os = "linux")]
        {
            let aligned = (map.as_ptr() as usize + *offset).is_multiple_of(HUGE_PAGE);
            if !*huge && aligned && new_bytes >= HUGE_FROM {
                // The part faulted in so far stays in small pages.
                advise_huge(map, *offset + bytes.next_multiple_of(HUGE_PAGE));
                *huge = true;
            }
            // As in `zeroed`: fault the new part in writable at once.
            populate(map, *offset + *bytes, new_bytes - *bytes);
        }
        *bytes = new_bytes;
        self.len = len;
        true
    }
}

/// Advises huge pages for `map` from `start` (at a huge page boundary) to
/// its last whole huge page. Only a hint, and only whole pages: a huge
/// page over a partial tail would add memory. Tables of a huge page or
/// more are whole huge pages (see `next_len`).
#[cfg(target_os = "linux")]
fn advise_huge(map: &memmap2::MmapMut, start: usize) {
    let whole = map.len().saturating_sub(start) / HUGE_PAGE * HUGE_PAGE;
    if whole > 0 {
        let _ = map.advise_range(memmap2::Advice::HugePage, start, whole);
    }
}

/// Faults in `len` bytes of `map` from `start`, writable (see
/// [`Slots::zeroed`]). On a rayon pool's thread, a range of more than
/// [`POPULATE_PIECE`] is split between the pool's threads: while one shard's
/// table grows, the other workers have often finished their shards and
/// wait, and a fresh huge page took 3.3 ms to fault in on the VM measured
/// (the host backs it on first touch).
#[cfg(target_os = "linux")]
fn populate(map: &memmap2::MmapMut, start: usize, len: usize) {
    if len > POPULATE_PIECE && rayon::current_thread_index().is_some() {
        let half = (len / 2).next_multiple_of(HUGE_PAGE).min(len);
        rayon::join(
            || populate(map, start, half),
            || populate(map, start + half, len - half),
        );
    } else {
        let _ = map.advise_range(memmap2::Advice::PopulateWrite, start, len);
    }
}

/// The smallest range [`populate`] splits (four huge pages).
#[cfg(target_os = "linux")]
const POPULATE_PIECE: usize = 4 * HUGE_PAGE;

/// Asks the CPU to start loading the two buckets a lookup of `k` reads in
/// `bytes` (`len` buckets), its home and its second bucket, and with ids
/// (`WITH_IDS`) their ids in `ids`. A plain load cannot stand in for this:
/// its value must be kept somewhere, and the instruction that keeps it
/// waits for the miss (perf showed 70 % of `insert_batch` stalled on such a
/// load). A key found has its id read next, and with counts its count
/// after that: without the ids, each duplicate of a `--count` run waited
/// for both from memory.
#[inline]
fn prefetch_lookup<const WITH_IDS: bool>(bytes: &[u8], ids: &[u32], len: usize, k: Kept) {
    let h = home(k.lo, len);
    let s = second(h, k);
    prefetch_line(bytes, h);
    prefetch_line(bytes, s);
    if WITH_IDS {
        super::prefetch::prefetch_item(ids, h * SLOTS);
        super::prefetch::prefetch_item(ids, s * SLOTS);
    }
}

/// Asks the CPU to start loading bucket `b` of `bytes` into cache.
#[inline]
fn prefetch_line(bytes: &[u8], b: usize) {
    super::prefetch::prefetch(bytes, b.wrapping_mul(BUCKET));
}

/// How many source buckets ahead a rebuild in place prefetches the groups
/// their entries land in. An entry may sit up to 63 buckets from its home
/// (in its second bucket), so its new buckets may lie that far (times the
/// growth) below those of its neighbours. Without this prefetch, the
/// rebuilds of one table growing to 50 M keys took twice as long (by perf
/// samples); with it, 1.2 times as long as with one bucket a key.
const REBUILD_AHEAD: usize = 80;

/// The part of a fingerprint a table keeps: bits 0..64, 64..96 and
/// 96..101.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Kept {
    lo: u64,
    mid: u32,
    extra: u32,
}

impl Kept {
    #[inline]
    fn of(fp: u128) -> Self {
        Self {
            lo: fp as u64,
            mid: (fp >> 64) as u32,
            extra: ((fp >> 96) as u32) & ((1 << EXTRA_BITS) - 1),
        }
    }
}

/// Where a lookup found a fingerprint, or where it stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probe {
    /// In slot `j` of bucket `b`.
    Found { b: usize, j: usize },
    /// Not in the table.
    Absent,
}

/// Bucket `b` of `bytes` (an empty bucket past the end, which no caller
/// asks for).
#[inline]
fn bucket(bytes: &[u8], b: usize) -> &[u8; BUCKET] {
    bytes
        .get(b * BUCKET..b * BUCKET + BUCKET)
        .and_then(|s| s.try_into().ok())
        .unwrap_or(&[0; BUCKET])
}

#[inline]
fn header(bucket: &[u8; BUCKET]) -> u32 {
    u32::from_le_bytes([bucket[0], bucket[1], bucket[2], bucket[3]])
}

fn set_header(bytes: &mut [u8], b: usize, h: u32) {
    if let Some(d) = bytes.get_mut(b * BUCKET..b * BUCKET + HEADER) {
        d.copy_from_slice(&h.to_le_bytes());
    }
}

/// The slot of bucket `bucket` that holds `k`, if any.
///
/// The low 64 bits of all five slots are compared without a branch per
/// slot, and only a slot whose low bits match is checked in full: where a
/// match lies is random, so a loop that stopped at it mispredicted about
/// once per lookup.
#[inline]
fn slot_of(bucket: &[u8; BUCKET], k: Kept) -> Option<usize> {
    let h = header(bucket);
    let taken = (h & COUNT_MASK).min(SLOTS as u32);
    let mut hits = 0u32;
    for j in 0..SLOTS {
        hits |= u32::from(lo_at(bucket, j) == k.lo) << j;
    }
    hits &= (1 << taken) - 1;
    // Almost always no candidate or one.
    while hits != 0 {
        let j = hits.trailing_zeros() as usize;
        if kept_at(bucket, h, j) == k {
            return Some(j);
        }
        hits &= hits - 1;
    }
    None
}

/// Bits 0..64 of the fingerprint in slot `j` of `bucket`.
#[inline(always)]
fn lo_at(bucket: &[u8; BUCKET], j: usize) -> u64 {
    let o = HEADER + j * SLOT;
    bucket
        .get(o..)
        .and_then(<[u8]>::first_chunk::<8>)
        .map_or(0, |b| u64::from_le_bytes(*b))
}

/// The fingerprint bits kept in slot `j` of `bucket`, whose header is `h`.
#[inline]
fn kept_at(bucket: &[u8; BUCKET], h: u32, j: usize) -> Kept {
    let o = HEADER + j * SLOT;
    Kept {
        lo: u64::from_le_bytes(bucket[o..o + 8].try_into().unwrap_or([0; 8])),
        mid: u32::from_le_bytes(bucket[o + 8..o + 12].try_into().unwrap_or([0; 4])),
        extra: (h >> (EXTRA_SHIFT + EXTRA_BITS * j as u32)) & ((1 << EXTRA_BITS) - 1),
    }
}

/// Where `k` is in `bytes` (`len` buckets): its home, its second bucket,
/// or the buckets after the home up to the first one no insert went past.
#[inline(always)]
fn probe(bytes: &[u8], len: usize, k: Kept) -> Probe {
    let h = home(k.lo, len);
    let home_bucket = bucket(bytes, h);
    if let Some(j) = slot_of(home_bucket, k) {
        return Probe::Found { b: h, j };
    }
    let s = second(h, k);
    if let Some(j) = slot_of(bucket(bytes, s), k) {
        return Probe::Found { b: s, j };
    }
    let mut b = h;
    let mut passed = header(home_bucket) & OVERFLOW != 0;
    // Bounded by the bucket count, so that even a corrupt table ends.
    for _ in 0..len {
        if !passed {
            break;
        }
        b = next_bucket(b, len);
        let bk = bucket(bytes, b);
        if let Some(j) = slot_of(bk, k) {
            return Probe::Found { b, j };
        }
        passed = header(bk) & OVERFLOW != 0;
    }
    Probe::Absent
}

/// The second bucket a fingerprint may take: another bucket of its home's
/// group of [`GROUP`] buckets, chosen by fingerprint bits 64..96 (which the
/// home does not depend on).
#[inline(always)]
fn second(home: usize, k: Kept) -> usize {
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
fn place(bytes: &mut [u8], len: usize, k: Kept, wrap: bool) -> Option<(usize, usize)> {
    let h = home(k.lo, len);
    place_from(bytes, len, h, second(h, k), k, wrap)
}

/// [`place`] for the home `h` and second bucket `s` of `k` (indexes into
/// `bytes`, which may be part of a table).
#[inline(always)]
fn place_from(
    bytes: &mut [u8],
    len: usize,
    h: usize,
    s: usize,
    k: Kept,
    wrap: bool,
) -> Option<(usize, usize)> {
    let (at_home, at_second) = (header(bucket(bytes, h)), header(bucket(bytes, s)));
    let (taken_home, taken_second) = (at_home & COUNT_MASK, at_second & COUNT_MASK);
    if taken_home.min(taken_second) < SLOTS as u32 {
        let (b, hd) = if taken_home <= taken_second {
            (h, at_home)
        } else {
            (s, at_second)
        };
        return Some((b, put(bytes, b, hd, k)));
    }
    let mut b = h;
    for _ in 0..len {
        let hd = header(bucket(bytes, b));
        if ((hd & COUNT_MASK) as usize) < SLOTS {
            return Some((b, put(bytes, b, hd, k)));
        }
        set_header(bytes, b, hd | OVERFLOW);
        if b + 1 == len && !wrap {
            return None;
        }
        b = next_bucket(b, len);
    }
    None
}

/// Puts `k` into the next free slot of bucket `b`, whose header is `h` and
/// which has one; returns the slot.
#[inline(always)]
fn put(bytes: &mut [u8], b: usize, h: u32, k: Kept) -> usize {
    let taken = (h & COUNT_MASK) as usize;
    let o = b * BUCKET + HEADER + taken * SLOT;
    if let Some(d) = bytes.get_mut(o..o + SLOT) {
        d[..8].copy_from_slice(&k.lo.to_le_bytes());
        d[8..].copy_from_slice(&k.mid.to_le_bytes());
    }
    let extra = k.extra << (EXTRA_SHIFT + EXTRA_BITS * taken as u32);
    set_header(bytes, b, (h + 1) | extra);
    taken
}

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
    slots: Slots,
    /// The id of each slot (bucket × 5 + slot), with ids.
    ids: Vec<u32>,
    /// Fingerprints stored.
    filled: usize,
    /// Shifts this table's sizes (see the module docs), below [`PHASES`].
    phase: usize,
    /// Fingerprints the table is expected to hold in the end (see
    /// [`expect`](Self::expect)); 0 when unknown.
    expected: usize,
}

impl<const WITH_IDS: bool> Default for FingerprintTable<WITH_IDS> {
    fn default() -> Self {
        Self::with_phase(0)
    }
}

impl<const WITH_IDS: bool> FingerprintTable<WITH_IDS> {
    /// Bytes of ids a bucket takes.
    const ID_BYTES: usize = if WITH_IDS { 4 * SLOTS } else { 0 };

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
    pub fn expect(&mut self, fingerprints: usize) {
        self.expected = fingerprints.min(MAX_EXPECTED);
    }

    /// Number of distinct fingerprints stored.
    pub fn len(&self) -> usize {
        self.filled
    }

    /// True when nothing was inserted yet.
    pub fn is_empty(&self) -> bool {
        self.filled == 0
    }

    /// Bytes of memory held by the table.
    pub fn heap_bytes(&self) -> usize {
        self.slots.len() * BUCKET + self.ids.capacity() * std::mem::size_of::<u32>()
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

    fn set_id(&mut self, b: usize, j: usize, id: u32) {
        if let Some(slot) = self.ids.get_mut(b * SLOTS + j) {
            *slot = id;
        }
    }

    /// Grows to the next length (see [`grown_len`](Self::grown_len)): in
    /// place when the map has room, else into a new map (or vector) with
    /// every entry inserted again.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
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
            let bk = bucket(old, b);
            let h = header(bk);
            for j in 0..(h & COUNT_MASK) as usize {
                let k = kept_at(bk, h, j);
                let bytes = self.slots.bytes_mut();
                if let Some((nb, nj)) = place(bytes, new_len, k, true) {
                    let id = old_ids.get(b * SLOTS + j).copied().unwrap_or(0);
                    self.set_id(nb, nj, id);
                }
            }
        }
    }

    /// After [`Slots::extend_in_place`]: moves every entry (and id) to its
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
    fn rebuild_in_place(&mut self, old_len: usize) {
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
            let bk = *bucket(self.bytes, local);
            let ids = bucket_ids(self.ids, local);
            set_header(self.bytes, local, 0);
            self.move_bucket(len, b, &bk, &ids, waiting);
        }
        for (i, b) in (aside.first..).take(aside.buckets()).enumerate() {
            let ids = bucket_ids(&aside.ids, i);
            self.move_bucket(len, b, bucket(&aside.bytes, i), &ids, waiting);
        }
    }

    /// Moves the entries of `bk`, the old bucket `from`, whose ids are `ids`
    /// (see [`move_entry`](Self::move_entry)).
    fn move_bucket(
        &mut self,
        len: usize,
        from: usize,
        bk: &[u8; BUCKET],
        ids: &[u32; SLOTS],
        waiting: &mut Vec<(Kept, u32)>,
    ) {
        let h = header(bk);
        for (j, &id) in ids.iter().enumerate().take((h & COUNT_MASK) as usize) {
            self.move_entry(len, from, kept_at(bk, h, j), id, waiting);
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
            set_header(bytes, b, 0);
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
const SPLIT_REBUILD_BYTES: usize = if cfg!(test) { HUGE_PAGE } else { 4 * HUGE_PAGE };

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
fn split_point(old_len: usize, len: usize, id_bytes: usize) -> Option<(usize, usize)> {
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

/// Most fingerprints a table of `len` buckets holds before it grows.
fn max_filled(len: usize) -> usize {
    len.saturating_mul(SLOTS * MAX_LOAD.0) / MAX_LOAD.1
}

/// The home bucket of a fingerprint whose low 64 bits are `lo` in a table
/// of `len` buckets: `lo` read as a fraction of `len` (the engine's shard
/// choice uses the top bits, so the two are independent).
#[inline]
fn home(lo: u64, len: usize) -> usize {
    ((u128::from(lo) * len as u128) >> 64) as usize
}

/// The length a table of `len` buckets grows to: four times as long up to
/// one huge page (64 -> 256 -> ... -> 32768 buckets), then the next of the
/// sizes `GROWTH^(i + phase / PHASES)` huge pages, rounded up to whole
/// pages (a tail in small pages made inserts and rebuilds 1.8 times slower:
/// TLB misses), and at least one page more.
fn next_len(len: usize, phase: usize) -> usize {
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

/// The bucket after `b`, wrapping around.
#[inline]
fn next_bucket(b: usize, len: usize) -> usize {
    if b + 1 == len {
        0
    } else {
        b + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uri::key::fingerprint;
    use std::collections::HashMap;

    /// The next of a xorshift sequence: uniform enough for test fingerprints.
    fn xorshift(mut x: u64) -> u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }

    /// `n` xorshift fingerprints from `seed`; the low bits of every
    /// `every`-th are `crowd(i, x)` instead (a crowd of shared homes), and
    /// every `repeat`-th is followed by a repeat of an earlier one.
    fn crowded_fps(
        n: u64,
        seed: u64,
        every: u64,
        repeat: u64,
        crowd: impl Fn(u64, u64) -> u64,
    ) -> Vec<u128> {
        let mut fps = Vec::new();
        let mut x = seed;
        for i in 0..n {
            x = xorshift(x);
            let lo = if i % every == 0 { crowd(i, x) } else { x };
            fps.push((u128::from(x.rotate_left(17)) << 64) | u128::from(lo));
            if i % repeat == 0 {
                fps.push(fps[(x % fps.len() as u64) as usize]);
            }
        }
        fps
    }

    /// Inserts `fps` one by one and checks every answer against a map.
    fn check_against_map<const WITH_IDS: bool>(t: &mut FingerprintTable<WITH_IDS>, fps: &[u128]) {
        let mut want: HashMap<u128, u32> = HashMap::new();
        for &fp in fps {
            let next = want.len() as u32;
            let got = t.insert(fp);
            match want.get(&fp) {
                Some(&id) => assert_eq!(got, Insert::Seen(if WITH_IDS { id } else { 0 })),
                None => {
                    assert_eq!(got, Insert::New(if WITH_IDS { next } else { 0 }));
                    want.insert(fp, next);
                }
            }
        }
        assert_eq!(t.len(), want.len());
        for (&fp, &id) in &want {
            assert_eq!(t.find(fp), Some(if WITH_IDS { id } else { 0 }));
        }
    }

    #[test]
    fn fpset_insert_contains_grow() {
        let mut t = FingerprintTable::<false>::default();
        let n = 10_000u32;
        for i in 0..n {
            let fp = fingerprint(&i.to_le_bytes());
            assert!(!t.contains(fp));
            assert!(t.insert(fp).is_new());
            assert!(t.contains(fp));
            assert!(!t.insert(fp).is_new());
        }
        assert_eq!(t.len(), n as usize);
        assert!(t.slots.len() >= MIN_BUCKETS * 64, "the table grew");
        assert!(!t.contains(fingerprint(b"absent")));
        assert!(t.filled <= max_filled(t.slots.len()));
    }

    #[test]
    fn fpset_grows_in_place_past_huge_pages() {
        // Past 2 MiB (32768 buckets) tables grow inside their own map.
        let fps: Vec<u128> = (0..700_000u32)
            .map(|i| fingerprint(&(i % 600_000).to_le_bytes()))
            .collect();
        for phase in [0, 5, 15] {
            let mut t = FingerprintTable::<true>::with_phase(phase);
            check_against_map(&mut t, &fps);
            assert!(
                t.slots.len() * BUCKET > 2 * HUGE_PAGE,
                "several in-place steps"
            );
            assert_eq!(t.slots.len() % PAGE_BUCKETS, 0, "whole huge pages");
            assert!(matches!(t.slots.mem, SlotMemory::Map { .. }));
            assert!(!t.contains(fingerprint(b"absent")));
        }
    }

    /// The `VmFlags` line of the mapping that holds `addr`, from
    /// `/proc/self/smaps`.
    #[cfg(target_os = "linux")]
    fn vm_flags(addr: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().and_then(|r| {
                let (a, b) = r.split_once('-')?;
                Some((
                    usize::from_str_radix(a, 16).ok()?,
                    usize::from_str_radix(b, 16).ok()?,
                ))
            });
            if let Some((a, b)) = range.filter(|_| !line.starts_with("VmFlags")) {
                inside = (a..b).contains(&addr);
            } else if inside && line.starts_with("VmFlags:") {
                return Some(line.to_owned());
            }
        }
        None
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn fpset_small_pages_up_to_huge_from_then_huge_pages() {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage").exists() {
            eprintln!("no transparent huge pages on this system: nothing to check");
            return;
        }
        let mut t = FingerprintTable::<false>::with_phase(0);
        let mut i = 0u32;
        let mut small_seen = false;
        while t.slots.len() * BUCKET <= HUGE_FROM {
            t.insert(fingerprint(&i.to_le_bytes()));
            i += 1;
            if let SlotMemory::Map { huge, bytes, .. } = &t.slots.mem {
                if *bytes >= HUGE_PAGE && *bytes < HUGE_FROM {
                    assert!(!huge, "small pages below HUGE_FROM");
                    small_seen = true;
                }
            }
        }
        assert!(
            small_seen,
            "the table passed through a size below HUGE_FROM"
        );
        let SlotMemory::Map {
            map,
            offset,
            bytes,
            huge,
        } = &t.slots.mem
        else {
            panic!("a table of {} bytes in a map", t.slots.len() * BUCKET);
        };
        assert!(*huge && *bytes > HUGE_FROM);
        let start = map.as_ptr() as usize + offset;
        let end = start + bytes - 1;
        let flags = |a| vm_flags(a).unwrap_or_default();
        // `hg`: MADV_HUGEPAGE given; the first part was faulted in before.
        assert!(!flags(start).contains(" hg"), "{}", flags(start));
        assert!(flags(end).contains(" hg"), "{}", flags(end));
        assert!(t.contains(fingerprint(&0u32.to_le_bytes())));
    }

    #[test]
    fn fpset_two_buckets_then_the_chain_past_the_home() {
        // Twelve fingerprints with the same home and the same second bucket
        // (same low 64 bits, same top bits of 64..96): the first ten fill
        // the two buckets, taking the emptier (the home when even), the
        // last two go on past the home, which is marked overflowed.
        let mut t = FingerprintTable::<true>::default();
        let lo = u64::MAX / 3;
        let fps: Vec<u128> = (0..12u128).map(|j| (j << 64) | u128::from(lo)).collect();
        for (id, &fp) in fps.iter().enumerate() {
            assert_eq!(t.insert(fp), Insert::New(id as u32));
        }
        let len = t.slots.len();
        let h = home(lo, len);
        let s = second(h, Kept::of(fps[0]));
        assert_eq!(s, second(h, Kept::of(fps[11])), "one second bucket");
        assert_eq!(s / GROUP, h / GROUP, "in the home's group");
        let bytes = t.slots.bytes();
        let places: Vec<usize> = fps
            .iter()
            .map(|&fp| match probe(bytes, len, Kept::of(fp)) {
                Probe::Found { b, .. } => b,
                Probe::Absent => usize::MAX,
            })
            .collect();
        let alternating: Vec<usize> = (0..10).map(|i| if i % 2 == 0 { h } else { s }).collect();
        assert_eq!(places[..10], alternating[..]);
        assert!(places[10..]
            .iter()
            .all(|&b| b != h && b != s && b != usize::MAX));
        assert_ne!(header(bucket(bytes, h)) & OVERFLOW, 0);
        assert_eq!(header(bucket(bytes, s)) & OVERFLOW, 0);
        // A thirteenth with the same home is absent; all twelve are found
        // with their ids, here and after the table grows.
        assert_eq!(t.find((99 << 64) | u128::from(lo)), None);
        for _ in 0..2 {
            for (id, &fp) in fps.iter().enumerate() {
                assert_eq!(t.find(fp), Some(id as u32));
            }
            t.grow();
        }
    }

    #[test]
    fn fpset_grows_in_place_past_eight_times_its_first_map() {
        // From its first huge page to more than 8 times that, a table stays
        // in the map it started in (`RESERVE_BYTES`), where the system lets
        // it reserve that much.
        if !crate::engine::memory::address_space_is_free() {
            return;
        }
        let mut t = FingerprintTable::<false>::with_phase(4);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut start = None;
        let mut n = 0u64;
        while t.slots.len() * BUCKET <= 9 * HUGE_PAGE {
            x = xorshift(x);
            assert!(t
                .insert((u128::from(x) << 64) | u128::from(x.rotate_left(29)))
                .is_new());
            n += 1;
            if let SlotMemory::Map { map, .. } = &t.slots.mem {
                if t.slots.len() >= PAGE_BUCKETS {
                    assert_eq!(*start.get_or_insert(map.as_ptr()), map.as_ptr(), "same map");
                }
            }
        }
        assert!(start.is_some());
        assert_eq!(t.len() as u64, n);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn fpset_populate_splits_on_pool_threads_and_keeps_zeros() {
        let len = 3 * POPULATE_PIECE + HUGE_PAGE;
        let mut map = memmap2::MmapMut::map_anon(len).expect("anonymous map");
        map[5] = 7;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("pool");
        pool.install(|| populate(&map, 0, len));
        populate(&map, HUGE_PAGE, len - HUGE_PAGE);
        assert_eq!(map[5], 7, "faulting in keeps what was written");
        assert!(map.iter().enumerate().all(|(i, &b)| b == 0 || i == 5));
        map[len - 1] = 1;
    }

    #[test]
    fn fpset_growth_keeps_wrapped_and_displaced_clusters() {
        let mut fps = Vec::new();
        // 40 fingerprints whose home is the last bucket at every length: a
        // cluster that wraps around the end of every table, small (heap)
        // or grown in place.
        for j in 0..40u64 {
            fps.push((u128::from(j) << 64) | u128::from(u64::MAX - j % 3));
        }
        // 40 whose home is the first bucket: displaced far from a home
        // near the start, so a rebuild in place must set them aside.
        for j in 0..40u64 {
            fps.push((u128::from(j + 100) << 64) | u128::from(j));
        }
        // Homes that go down as they are inserted.
        for j in 0..300u64 {
            fps.push((u128::from(j + 1000) << 64) | u128::from(u64::MAX / 2 - (j << 48)));
        }
        for i in 0..400_000u32 {
            fps.push(fingerprint(&i.to_le_bytes()));
        }
        let mut t = FingerprintTable::<true>::default();
        check_against_map(&mut t, &fps);
        assert!(t.slots.len() * BUCKET > 2 * HUGE_PAGE, "grown in place too");
        let mut f = FingerprintTable::<false>::with_phase(7);
        check_against_map(&mut f, &fps);
        assert!(!f.contains((999 << 64) | u128::from(u64::MAX)));
    }

    #[test]
    fn fpset_split_rebuild_on_a_pool_keeps_every_entry() {
        // Enough fingerprints that the growths from 2 MiB on rebuild in two
        // parts (`SPLIT_REBUILD_BYTES` in tests), with crowds of shared
        // homes where the parts split (half the table), where the lower
        // part's entries end (near 0.65), around those, and at the end.
        let fps = crowded_fps(300_000, 0x2545_f491_4f6c_dd1d, 50, 4, |i, x| {
            let at = [45, 50, 55, 60, 65, 70, 100][((i / 50) % 7) as usize];
            (u64::MAX / 100 * at).wrapping_sub(x & 0xffff)
        });
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("pool");
        pool.install(|| {
            let mut t = FingerprintTable::<true>::with_phase(9);
            check_against_map(&mut t, &fps);
            let old = t.slots.len();
            assert!(
                split_point(old, next_len(old, 9), 4 * SLOTS).is_some(),
                "the last growths split"
            );
            let mut f = FingerprintTable::<false>::with_phase(2);
            check_against_map(&mut f, &fps);
            assert!(!f.contains(fingerprint(b"absent")));
        });
    }

    #[test]
    fn fpset_expected_size_is_reached_in_one_growth() {
        // A table told to expect 600,000 fingerprints goes from its first
        // length straight to one that holds them all, and so does one told
        // at 4 MiB (2 huge pages); `bytes_after` says so beforehand.
        // The long jumps (the second one rebuilds in place where the
        // address space allows) lose no entry and no id, crowds of shared
        // homes included.
        let fps = crowded_fps(600_000, 0x5851_f42d_4c95_7f2d, 40, 3, |i, x| {
            (u64::MAX / 7 * (i % 7)).wrapping_sub(x & 0xfff)
        });
        let distinct = fps.iter().collect::<std::collections::HashSet<_>>().len();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .expect("pool");
        for start_at in [0, 200_000] {
            pool.install(|| {
                let mut t = FingerprintTable::<true>::with_phase(3);
                let (early, late) = fps.split_at(start_at);
                check_against_map(&mut t, early);
                t.expect(distinct);
                let before = t.slots.len();
                let predicted = t.bytes_after(max_filled(before) + 1 - t.len());
                let mut lens = vec![before];
                let mut all = early.to_vec();
                for &fp in late {
                    all.push(fp);
                    t.insert(fp);
                    if lens.last() != Some(&t.slots.len()) {
                        lens.push(t.slots.len());
                    }
                }
                assert_eq!(lens.len(), 2, "one growth: {lens:?}");
                if start_at > 0 {
                    assert_eq!(before, 2 * PAGE_BUCKETS);
                }
                assert!(max_filled(lens[1]) >= distinct);
                assert!(
                    max_filled(next_len(before, 3)) < distinct,
                    "past the next step"
                );
                assert_eq!(predicted, lens[1] * (BUCKET + 4 * SLOTS));
                let mut again = FingerprintTable::<true>::with_phase(3);
                check_against_map(&mut again, &all);
                for &fp in &all {
                    assert_eq!(t.find(fp), again.find(fp));
                }
            });
        }
        // Without an expectation, the same table takes many steps.
        let mut t = FingerprintTable::<false>::with_phase(3);
        let mut growths = 0;
        for &fp in &fps {
            let len = t.slots.len();
            t.insert(fp);
            growths += usize::from(t.slots.len() != len);
        }
        assert!(growths > 5, "{growths} growths");
    }

    #[test]
    fn fpset_split_point_bounds() {
        let pages = |n: usize| n * PAGE_BUCKETS;
        // Too small to split, or not growing.
        assert_eq!(split_point(PAGE_BUCKETS - 1, pages(2), 0), None);
        assert_eq!(split_point(pages(8), pages(8), 0), None);
        // Half the table; the lower part's entries end before `d`.
        let (m, d) = split_point(pages(20), pages(26), 0).expect("split");
        assert_eq!(m, pages(10));
        assert_eq!(d, pages(13));
        // A large table sets aside at most `REBUILD_ASIDE_BYTES`.
        for id_bytes in [0, 4 * SLOTS] {
            let (m, d) = split_point(pages(400), pages(520), id_bytes).expect("split");
            assert!(m < pages(200));
            assert!((d - m) * (BUCKET + id_bytes) <= REBUILD_ASIDE_BYTES + BUCKET + id_bytes);
        }
    }

    #[test]
    fn fpset_keeps_101_low_bits() {
        let mut t = FingerprintTable::<true>::default();
        let a = fingerprint(b"a");
        // Every bit below `KEPT_BITS` tells fingerprints apart.
        assert_eq!(t.insert(a), Insert::New(0));
        for bit in 0..KEPT_BITS {
            assert_eq!(t.insert(a ^ (1 << bit)), Insert::New(bit + 1), "bit {bit}");
        }
        // Bits from there on are the caller's (its shard or partition).
        assert_eq!(t.insert(a ^ (1 << KEPT_BITS)), Insert::Seen(0));
        assert_eq!(t.insert(a ^ (1 << 127)), Insert::Seen(0));
        // The zero fingerprint is one like any other.
        assert_eq!(t.insert(0), Insert::New(KEPT_BITS + 1));
        assert_eq!(t.insert(0), Insert::Seen(KEPT_BITS + 1));
    }

    #[test]
    fn fpset_crowded_homes_through_growth() {
        // Uniform fingerprints, and among them groups of 300 that share
        // their home at every length (low bits within 2^16 of each other):
        // long overflow chains, clusters that wrap around the end, and
        // entries far from their homes when a table grows in place.
        let fps = crowded_fps(240_000, 0x9e37_79b9_7f4a_7c15, 40, 3, |i, x| {
            let group = (i / 40) % 20;
            let base = [0, u64::MAX - 0xffff, group << 59][(group % 3) as usize];
            base.wrapping_add(x & 0xffff)
        });
        let mut t = FingerprintTable::<true>::with_phase(3);
        check_against_map(&mut t, &fps);
        assert!(matches!(t.slots.mem, SlotMemory::Map { .. }));
        let mut all = FingerprintTable::<false>::with_phase(11);
        let mut seen = std::collections::HashSet::new();
        for piece in fps.chunks(7_777) {
            all.insert_all(
                piece,
                |&fp| fp,
                |&fp, ins| {
                    assert_eq!(ins.is_new(), seen.insert(fp));
                },
            );
        }
    }

    /// `insert_all` gives what one `insert` per item gives, through growth
    /// (heap and in place) and duplicates.
    fn check_insert_all<const WITH_IDS: bool>() {
        let mut items: Vec<u128> = Vec::new();
        for i in 0..250_000u32 {
            items.push(fingerprint(&(i % 200_000).to_le_bytes()));
            if i % 40_000 == 7 {
                items.push(0);
            }
        }
        let mut one = FingerprintTable::<WITH_IDS>::default();
        let want: Vec<Insert> = items.iter().map(|&fp| one.insert(fp)).collect();
        let mut all = FingerprintTable::<WITH_IDS>::default();
        let mut got = Vec::new();
        // In pieces, as the engine does, one per chunk.
        for piece in items.chunks(30_001) {
            all.insert_all(piece, |&fp| fp, |&fp, ins| got.push((fp, ins)));
        }
        assert_eq!(got.len(), items.len());
        for ((fp, ins), (&item, &w)) in got.iter().zip(items.iter().zip(&want)) {
            assert_eq!((*fp, *ins), (item, w));
        }
        assert_eq!(all.len(), 200_001);
        assert_eq!(all.len(), one.len());
        assert!(all.slots.len() * BUCKET > HUGE_PAGE, "grown in place");
    }

    #[test]
    fn fpset_insert_all_matches_insert() {
        check_insert_all::<false>();
        check_insert_all::<true>();
    }

    #[test]
    fn fpset_next_len_steps() {
        let mut len = MIN_BUCKETS;
        let mut seen = vec![len];
        while len < PAGE_BUCKETS {
            len = next_len(len, 0);
            seen.push(len);
        }
        assert_eq!(seen, [64, 256, 1024, 4096, 16384, 32768]);
        // From one huge page on: steps of about 1.4 in whole pages, each
        // phase on its own sizes.
        let pages = |phase| {
            let mut len = PAGE_BUCKETS;
            let mut out = Vec::new();
            while len < 100 * PAGE_BUCKETS {
                len = next_len(len, phase);
                assert_eq!(len % PAGE_BUCKETS, 0);
                out.push(len / PAGE_BUCKETS);
            }
            out
        };
        assert_eq!(
            pages(0),
            [2, 3, 4, 5, 7, 9, 11, 14, 18, 24, 31, 40, 52, 67, 87, 113]
        );
        assert_ne!(pages(8), pages(0));
        for phase in 0..PHASES {
            for w in pages(phase).windows(2) {
                assert!(w[1] > w[0], "{w:?}");
                assert!(w[0] < 10 || w[1] * 10 <= w[0] * 14, "{w:?}");
            }
        }
    }

    #[test]
    fn fpset_bytes_per_key_over_staggered_tables() {
        // 16 tables filled at the same pace, as the engine's shards are:
        // from 8 M keys on, their buckets take at most 19 bytes a key, and
        // about 16.7 on average over sizes.
        let mut sum = 0f64;
        let mut points = 0;
        let mut n = 8usize << 20;
        while n < 4usize << 30 {
            let bytes: usize = (0..PHASES)
                .map(|p| FingerprintTable::<false>::with_phase(p).bytes_after(n / PHASES))
                .sum();
            let per_key = bytes as f64 / n as f64;
            assert!(per_key <= 19.0, "{per_key:.1} bytes a key at {n} keys");
            sum += per_key;
            points += 1;
            n += n / 64;
        }
        let mean = sum / f64::from(points);
        assert!((16.0..17.5).contains(&mean), "{mean:.1}");
    }
}
