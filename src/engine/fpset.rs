//! An open-addressing table of 128-bit fingerprints.
//!
//! Fingerprints are XXH3-128 values, so their bits are already uniformly
//! distributed: the low 64 bits choose the home slot directly (scaled to
//! the table length by a multiply and shift, so any length works), with no
//! further hashing. Collisions between slots are resolved by linear
//! probing. The value `0` marks an empty slot; the (astronomically
//! unlikely) fingerprint `0` itself is kept aside in a separate field, so
//! no two fingerprints are ever merged by the table.
//!
//! The table grows when it would pass 70 % load. Below one 2 MiB huge page
//! it grows fourfold (small tables are cheap; each step is a new map to
//! fault in). From 2 MiB on it grows alternately by 3/2 and by 4/3
//! (lengths 2^k and 3·2^(k-1), in whole huge pages: see `next_len`), so
//! it mostly holds between 47 % and 70 % live slots: 23 to 34 bytes per
//! fingerprint, plus 6 to 9 bytes for the optional dense ids (see
//! [`FingerprintTable::insert`]). Plain doubling would leave a table as
//! little as 35 % full (46 bytes per fingerprint); the smaller steps cost
//! a few more, smaller, rebuilds. From 2 MiB on a table grows in place
//! (see `rebuild_in_place`): during a rebuild only its live fingerprints
//! are held twice, in a buffer each worker thread keeps.
//!
//! Slots are prefetched a few inserts ahead
//! ([`FingerprintTable::insert_all`]): without it a 1 GiB engine-only run
//! took 40 % more CPU (2.10 -> 2.95 s).

/// Numerator / denominator of the maximum load factor.
const MAX_LOAD: (usize, usize) = (7, 10);

/// How many items ahead [`FingerprintTable::insert_all`] prefetches slots.
/// In a phase-2-only run (13.8 M fingerprints into 16 tables) 16 took
/// 0.55 CPU seconds against 0.58 for 8 and 0.65 for 4; 24 and 32 measured
/// the same as 16. In a whole 1 GiB 2-thread run 8, 16 and 32 were within
/// noise of each other.
pub const AHEAD: usize = 16;

/// Bytes per live entry of the per-thread buffer a rebuild in place
/// copies the entries to (a fingerprint and an id), kept between rebuilds.
pub const REBUILD_BYTES_PER_KEY: usize = 20;

/// Smallest number of slots a table starts with.
const MIN_SLOTS: usize = 64;

/// Tables at least this large live in their own anonymous memory map,
/// faulted in at once (see [`Slots::zeroed`]).
const HUGE_TABLE_BYTES: usize = 64 << 10;

/// Size and alignment of a transparent huge page (x86_64, aarch64 with 4 KiB
/// pages). Tables span whole huge pages where they can: fewer page faults
/// while they are faulted in, far fewer TLB misses on their random accesses.
const HUGE_PAGE: usize = 2 << 20;

/// A table of a huge page or more reserves this many times its size of
/// address space and grows inside it (see [`FingerprintTable::grow`]).
const RESERVE_FACTOR: usize = 8;

std::thread_local! {
    /// The live entries of a table being rebuilt in place (fingerprints and
    /// ids), reused by each worker thread from one rebuild to the next.
    static REBUILD: std::cell::RefCell<(Vec<u128>, Vec<u32>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Frees the calling thread's rebuild buffer (it is kept between rebuilds
/// otherwise): the engine calls it on every worker before it resolves a
/// spilled run.
pub fn release_rebuild_buffer() {
    REBUILD.with(|cell| {
        if let Ok(mut b) = cell.try_borrow_mut() {
            *b = (Vec::new(), Vec::new());
        }
    });
}

/// Zero-initialised storage for `len` slots of 16 bytes.
#[derive(Debug)]
struct Slots {
    mem: SlotMemory,
    len: usize,
}

#[derive(Debug)]
enum SlotMemory {
    Heap(Vec<u8>),
    /// The slots start `offset` bytes into the map (huge-page aligned); the
    /// rest of the map is room to grow.
    Map {
        map: memmap2::MmapMut,
        offset: usize,
        bytes: usize,
    },
}

impl Slots {
    fn zeroed(len: usize) -> Self {
        let bytes = len * 16;
        if bytes >= HUGE_TABLE_BYTES {
            // A table of at least one huge page gets a huge page of slack so
            // that it can start on a huge-page boundary: an unaligned 3 MiB
            // table got at most one huge page, and with lengths that are not
            // powers of two half of all table memory went without (perf: the
            // 1 GiB engine-only run took 25 % more CPU). The slack is never
            // touched, so it costs address space, not memory.
            let slack = if bytes >= HUGE_PAGE { HUGE_PAGE } else { 0 };
            // Room to grow in place: address space only (never touched
            // until used). Falls back to the exact size if the system
            // refuses that much address space.
            let room = if slack > 0 {
                bytes.saturating_mul(RESERVE_FACTOR)
            } else {
                bytes
            };
            let map = memmap2::MmapOptions::new()
                .len(room + slack)
                .no_reserve_swap()
                .map_anon()
                .or_else(|_| memmap2::MmapMut::map_anon(bytes + slack));
            if let Ok(map) = map {
                let offset = if slack > 0 {
                    (HUGE_PAGE - map.as_ptr() as usize % HUGE_PAGE) % HUGE_PAGE
                } else {
                    0
                };
                #[cfg(target_os = "linux")]
                {
                    // Only hints: without them the table works the same.
                    // Huge pages only for whole ones: a huge page over a
                    // partial tail would add memory. Tables of a huge page
                    // or more are whole huge pages (see `next_len`).
                    let whole = (map.len() - offset) / HUGE_PAGE * HUGE_PAGE;
                    if whole > 0 && slack > 0 {
                        let _ = map.advise_range(memmap2::Advice::HugePage, offset, whole);
                    }
                    // Fault the table in writable now, in one call. Left to
                    // itself, the first probe of a slot *reads* it, which
                    // maps the shared zero page; the first store then takes
                    // a second, copy-on-write fault whose page-table flush
                    // interrupts every other core running this process. With
                    // two workers that cost more than the inserts themselves
                    // (system time of a 2-thread run 0.71 s -> 0.10 s).
                    let _ = map.advise_range(memmap2::Advice::PopulateWrite, offset, bytes);
                }
                return Self {
                    mem: SlotMemory::Map { map, offset, bytes },
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
            SlotMemory::Map { map, offset, bytes } => {
                map.get(*offset..offset + bytes).unwrap_or_default()
            }
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        match &mut self.mem {
            SlotMemory::Heap(v) => v,
            SlotMemory::Map { map, offset, bytes } => {
                map.get_mut(*offset..*offset + *bytes).unwrap_or_default()
            }
        }
    }

    #[inline]
    fn get(&self, i: usize) -> u128 {
        let b = &self.bytes()[i * 16..i * 16 + 16];
        u128::from_ne_bytes(b.try_into().unwrap_or([0; 16]))
    }

    #[inline]
    fn set(&mut self, i: usize, fp: u128) {
        self.bytes_mut()[i * 16..i * 16 + 16].copy_from_slice(&fp.to_ne_bytes());
    }

    fn len(&self) -> usize {
        self.len
    }

    /// Grows to `len` slots inside the map's spare room, the old slots
    /// kept as they are and the new ones zero. False (nothing changed) when
    /// there is no such room.
    fn extend_in_place(&mut self, len: usize) -> bool {
        let SlotMemory::Map { map, offset, bytes } = &mut self.mem else {
            return false;
        };
        let new_bytes = len * 16;
        if new_bytes < *bytes || *offset + new_bytes > map.len() {
            return false;
        }
        #[cfg(target_os = "linux")]
        {
            // As in `zeroed`: fault the new part in writable at once.
            let _ = map.advise_range(
                memmap2::Advice::PopulateWrite,
                *offset + *bytes,
                new_bytes - *bytes,
            );
        }
        *bytes = new_bytes;
        self.len = len;
        true
    }
}

/// Asks the CPU to start loading slot `i` of `bytes` into cache. A plain
/// load cannot stand in for this: its value must be kept somewhere, and
/// the instruction that keeps it waits for the miss (perf showed 70 % of
/// `insert_batch` stalled on such a load).
#[inline]
fn prefetch_slot(bytes: &[u8], i: usize) {
    let p = bytes.as_ptr().wrapping_add(i.wrapping_mul(16));
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it never faults, reads nothing
    // the program can observe and writes nothing, whatever the address.
    // SSE, which provides it, is part of the x86_64 baseline.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
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
    ids: Vec<u32>,
    /// Live non-zero fingerprints in `slots`.
    filled: usize,
    /// The id of the fingerprint `0`, when it was inserted.
    zero: Option<u32>,
}

impl<const WITH_IDS: bool> Default for FingerprintTable<WITH_IDS> {
    fn default() -> Self {
        Self::with_slots(MIN_SLOTS)
    }
}

impl<const WITH_IDS: bool> FingerprintTable<WITH_IDS> {
    fn with_slots(slots: usize) -> Self {
        let slots = slots.max(MIN_SLOTS);
        Self {
            slots: Slots::zeroed(slots),
            ids: if WITH_IDS { vec![0; slots] } else { Vec::new() },
            filled: 0,
            zero: None,
        }
    }

    /// Number of distinct fingerprints stored.
    pub fn len(&self) -> usize {
        self.filled + usize::from(self.zero.is_some())
    }

    /// True when nothing was inserted yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of heap memory held by the table.
    pub fn heap_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<u128>()
            + self.ids.capacity() * std::mem::size_of::<u32>()
    }

    /// True when `fp` is in the table.
    pub fn contains(&self, fp: u128) -> bool {
        if fp == 0 {
            return self.zero.is_some();
        }
        let len = self.slots.len();
        let mut i = home(fp, len);
        loop {
            match self.slots.get(i) {
                0 => return false,
                s if s == fp => return true,
                _ => i = next_slot(i, len),
            }
        }
    }

    /// The id of `fp` when it is in the table (0 for every fingerprint of a
    /// table without ids).
    pub fn find(&self, fp: u128) -> Option<u32> {
        if fp == 0 {
            return self.zero;
        }
        let len = self.slots.len();
        let mut i = home(fp, len);
        loop {
            match self.slots.get(i) {
                0 => return None,
                s if s == fp => {
                    return Some(if WITH_IDS {
                        self.ids.get(i).copied().unwrap_or(0)
                    } else {
                        0
                    })
                }
                _ => i = next_slot(i, len),
            }
        }
    }

    /// Bytes the table's slots (and ids) would take after `more` new
    /// fingerprints (it may grow several times): what the engine checks
    /// against its memory limit before a batch. A rebuild also holds the
    /// live entries once more, in the rebuilding thread's buffer
    /// ([`REBUILD_BYTES_PER_KEY`] each).
    pub fn bytes_after(&self, more: usize) -> usize {
        let want = self.filled + more;
        let mut len = self.slots.len();
        while want * MAX_LOAD.1 > len * MAX_LOAD.0 {
            len = next_len(len);
        }
        len * (16 + if WITH_IDS { 4 } else { 0 })
    }

    /// Inserts `fp`, telling whether it was new. The id of a new fingerprint
    /// is the number of fingerprints inserted before it.
    #[inline]
    pub fn insert(&mut self, fp: u128) -> Insert {
        if fp == 0 {
            return self.insert_zero();
        }
        let len = self.slots.len();
        let mut i = home(fp, len);
        loop {
            let s = self.slots.get(i);
            if s == fp {
                return Insert::Seen(if WITH_IDS { self.ids[i] } else { 0 });
            }
            if s == 0 {
                break;
            }
            i = next_slot(i, len);
        }
        if (self.filled + 1) * MAX_LOAD.1 > self.slots.len() * MAX_LOAD.0 {
            return self.grow_and_insert(fp);
        }
        let id = self.next_id();
        self.slots.set(i, fp);
        if WITH_IDS {
            self.ids[i] = id;
        }
        self.filled += 1;
        Insert::New(id)
    }

    /// Inserts the fingerprint `fp_of` gives for each of `items`, in order,
    /// and passes the item and what [`insert`](Self::insert) would have
    /// returned to `each`. Same results as one `insert` per item, but each
    /// slot is prefetched [`AHEAD`] items early, and the slots are looked
    /// up once per run between growths instead of once per item.
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
            // Live fingerprints the table may hold before it must grow.
            let limit = len * MAX_LOAD.0 / MAX_LOAD.1;
            let zero = usize::from(self.zero.is_some());
            let mut filled = self.filled;
            let mut must_grow = false;
            let bytes = self.slots.bytes_mut();
            let ids = &mut self.ids;
            while let Some(item) = items.get(k) {
                if let Some(ahead) = items.get(k + AHEAD) {
                    // The slot after the home too: a probe from the last
                    // slot of a cache line often goes on into the next one
                    // (this second prefetch took a phase-2-only run from
                    // 0.62 to 0.58 CPU seconds; in the same line it costs
                    // next to nothing).
                    let h = home(fp_of(ahead), len);
                    prefetch_slot(bytes, h);
                    prefetch_slot(bytes, h + 1);
                }
                let fp = fp_of(item);
                if fp == 0 {
                    break;
                }
                let mut i = home(fp, len);
                let seen = loop {
                    match slot_at(bytes, i) {
                        0 => break false,
                        s if s == fp => break true,
                        _ => i = next_slot(i, len),
                    }
                };
                let ins = if seen {
                    Insert::Seen(if WITH_IDS {
                        ids.get(i).copied().unwrap_or(0)
                    } else {
                        0
                    })
                } else if filled + 1 > limit {
                    must_grow = true;
                    break;
                } else {
                    if let Some(slot) = bytes.get_mut(i * 16..i * 16 + 16) {
                        slot.copy_from_slice(&fp.to_ne_bytes());
                    }
                    // As `next_id`: the number of fingerprints so far.
                    let id = if WITH_IDS { (filled + zero) as u32 } else { 0 };
                    if let Some(slot) = ids.get_mut(i) {
                        *slot = id;
                    }
                    filled += 1;
                    Insert::New(id)
                };
                each(item, ins);
                k += 1;
            }
            self.filled = filled;
            if must_grow {
                self.grow();
            } else if let Some(item) = items.get(k) {
                // The fingerprint `0`, which no slot holds.
                let ins = self.insert(fp_of(item));
                each(item, ins);
                k += 1;
            }
        }
    }

    /// [`insert`](Self::insert) of the fingerprint `0`, kept out of the
    /// inlined path.
    #[cold]
    #[inline(never)]
    fn insert_zero(&mut self) -> Insert {
        match self.zero {
            Some(id) => Insert::Seen(id),
            None => {
                let id = self.next_id();
                self.zero = Some(id);
                Insert::New(id)
            }
        }
    }

    /// [`insert`](Self::insert) of a new fingerprint that does not fit
    /// under the maximum load: grows the table first. Kept out of the
    /// inlined path.
    #[cold]
    #[inline(never)]
    fn grow_and_insert(&mut self, fp: u128) -> Insert {
        self.grow();
        self.insert(fp)
    }

    fn next_id(&self) -> u32 {
        if WITH_IDS {
            // Ids are u32: 4 billion distinct keys per table (the engine
            // spreads keys over many tables) before they would wrap.
            self.len() as u32
        } else {
            0
        }
    }

    fn grow(&mut self) {
        let old_len = self.slots.len();
        let new_len = next_len(old_len);
        if self.slots.extend_in_place(new_len) {
            self.rebuild_in_place(old_len);
            return;
        }
        let old_slots = std::mem::replace(&mut self.slots, Slots::zeroed(new_len));
        let old_ids = std::mem::replace(
            &mut self.ids,
            if WITH_IDS {
                vec![0; new_len]
            } else {
                Vec::new()
            },
        );
        let bytes = self.slots.bytes_mut();
        let mut at = Placement::default();
        let old = old_slots.bytes();
        let start = first_empty(old);
        let (head, tail) = old.split_at(start * 16);
        for (k, slot) in (start..)
            .zip(tail.chunks_exact(16))
            .chain((0..).zip(head.chunks_exact(16)))
        {
            let fp = slot_value(slot);
            if fp != 0 {
                let id = if WITH_IDS {
                    old_ids.get(k).copied().unwrap_or(0)
                } else {
                    0
                };
                at.place(bytes, &mut self.ids, fp, id);
            }
        }
    }
}

impl<const WITH_IDS: bool> FingerprintTable<WITH_IDS> {
    /// After [`Slots::extend_in_place`]: moves every fingerprint (and id)
    /// to its place for the new length.
    ///
    /// Growing in place instead of into a new map matters on machines where
    /// fresh memory is slow to fault in (the kernel zeroes it, a hypervisor
    /// may have to back it): a new map for each step faulted in about 3.4
    /// times the final table size over a run, against 1.1 times now. The
    /// live entries are copied out to a per-thread buffer while the old
    /// part is zeroed, then put back in nearly sorted order (see
    /// `Placement`): most go to their slot without a probe. Against copying
    /// out with a branch per slot and inserting each entry again, that took
    /// the rebuilds of a phase-2-only run (13.8 M fingerprints into 16
    /// tables) from about 0.19 to 0.10 CPU seconds (perf samples).
    fn rebuild_in_place(&mut self, old_len: usize) {
        REBUILD.with(|cell| {
            let mut guard = cell.borrow_mut();
            let (fps, ids) = &mut *guard;
            let bytes = self.slots.bytes_mut();
            let old = bytes.get_mut(..old_len * 16).unwrap_or_default();
            let start = first_empty(old);
            // Copy the live entries out, from the first empty slot on, so
            // that they come nearly in order of their home slots (see
            // `Placement`), and zero the old part on the way. Branch-free:
            // every slot is written to the buffer, only live ones are kept
            // (so the buffer has room for one more than the live ones).
            let room = self.filled + 1;
            fps.clear();
            fps.resize(room, 0);
            ids.clear();
            if WITH_IDS {
                ids.resize(room, 0);
            }
            let mut n = 0usize;
            let (head, tail) = old.split_at_mut(start * 16);
            for (k, slot) in (start..)
                .zip(tail.chunks_exact_mut(16))
                .chain((0..).zip(head.chunks_exact_mut(16)))
            {
                let fp = slot_value(slot);
                slot.fill(0);
                if let Some(d) = fps.get_mut(n) {
                    *d = fp;
                }
                if WITH_IDS {
                    if let Some(d) = ids.get_mut(n) {
                        *d = self.ids.get(k).copied().unwrap_or(0);
                    }
                }
                n += usize::from(fp != 0);
            }
            // The new part is fresh and already zero.
            if WITH_IDS {
                self.ids.clear();
                self.ids.resize(self.slots.len(), 0);
            }
            let bytes = self.slots.bytes_mut();
            let mut at = Placement::default();
            for (k, &fp) in fps.iter().take(n).enumerate() {
                let id = if WITH_IDS {
                    ids.get(k).copied().unwrap_or(0)
                } else {
                    0
                };
                at.place(bytes, &mut self.ids, fp, id);
            }
        });
    }
}

/// Puts the entries of a table being rebuilt into the new, empty table.
///
/// The entries come in the order of their old slots, read from an empty
/// slot on. Since a home slot is the fingerprint's low bits scaled to the
/// table length, that is nearly the order of their new home slots: only
/// entries displaced within a cluster come out of order. The placement
/// keeps track of the run of taken slots it is filling: an entry whose
/// home is in that run goes right after it, one whose home is past it
/// starts a new run at its home, both without a probe. Only an entry whose
/// home is before the run, or one that would wrap around the end, probes
/// as in an insert.
#[derive(Default)]
struct Placement {
    /// First slot of the run: every slot from here up to `next_free` is
    /// taken.
    run_start: usize,
    /// One past the highest slot filled without wrapping: every slot from
    /// here on is empty.
    next_free: usize,
}

impl Placement {
    #[inline]
    fn place(&mut self, bytes: &mut [u8], ids: &mut [u32], fp: u128, id: u32) {
        let len = bytes.len() / 16;
        let h = home(fp, len);
        let direct = h.max(self.next_free);
        let i = if h >= self.run_start && direct < len {
            if h > self.next_free {
                self.run_start = h;
            }
            self.next_free = direct + 1;
            direct
        } else {
            let mut i = h;
            while slot_at(bytes, i) != 0 {
                i = next_slot(i, len);
            }
            if i == self.next_free {
                self.next_free = i + 1;
            }
            i
        };
        if let Some(slot) = bytes.get_mut(i * 16..i * 16 + 16) {
            slot.copy_from_slice(&fp.to_ne_bytes());
        }
        if let Some(slot) = ids.get_mut(i) {
            *slot = id;
        }
    }
}

/// The fingerprint in a 16-byte slot.
#[inline]
fn slot_value(slot: &[u8]) -> u128 {
    slot.try_into().map_or(0, u128::from_ne_bytes)
}

/// The fingerprint in slot `i` of `bytes` (0 past the end).
#[inline]
fn slot_at(bytes: &[u8], i: usize) -> u128 {
    bytes.get(i * 16..i * 16 + 16).map_or(0, slot_value)
}

/// The first empty slot of `bytes` (0 when there is none, which a table
/// under its maximum load never is).
fn first_empty(bytes: &[u8]) -> usize {
    bytes
        .chunks_exact(16)
        .position(|s| slot_value(s) == 0)
        .unwrap_or(0)
}

/// The home slot of `fp` in a table of `len` slots: its low 64 bits read
/// as a fraction of `len` (the engine's shard choice uses the top bits, so
/// the two are independent). Slots keep the order of their fingerprints'
/// low bits, so a rebuild walks the new table nearly in order.
#[inline]
fn home(fp: u128, len: usize) -> usize {
    ((u128::from(fp as u64) * len as u128) >> 64) as usize
}

/// The length a table of `len` slots grows to: four times as long up to
/// one huge page (64 -> 256 -> ... -> 65536 -> 131072 slots), then
/// 2^k -> 3·2^(k-1) -> 2^(k+1), steps of 3/2 and 4/3, except that a
/// table stays a whole number of huge pages (2 MiB -> 4 MiB, not 3 MiB):
/// a tail in small pages made inserts and rebuilds 1.8 times slower (TLB
/// misses). Fourfold below 2 MiB instead of the same 3/2 and 4/3 steps
/// took a phase-2-only run (13.8 M fingerprints into 16 tables) from
/// 0.74 to 0.65 CPU seconds: about 20 fewer rebuilds and new maps per
/// table, for at most 1.5 MiB more per table while it is small.
fn next_len(len: usize) -> usize {
    let per_page = HUGE_PAGE / 16;
    if len < per_page {
        return (len * 4).min(per_page);
    }
    let next = if len.is_power_of_two() {
        len + len / 2
    } else {
        len / 3 * 4
    };
    if next >= per_page {
        next.div_ceil(per_page) * per_page
    } else {
        next
    }
}

/// The slot after `i`, wrapping around.
#[inline]
fn next_slot(i: usize, len: usize) -> usize {
    if i + 1 == len {
        0
    } else {
        i + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uri::key::fingerprint;

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
        assert!(t.slots.len() >= MIN_SLOTS * 64, "the table grew");
        for i in 0..n {
            assert!(t.contains(fingerprint(&i.to_le_bytes())));
        }
        assert!(!t.contains(fingerprint(b"absent")));
        // Load stays at or under 70 %.
        assert!(t.filled * 10 <= t.slots.len() * 7);
    }

    #[test]
    fn fpset_grows_in_place_past_huge_pages() {
        // Past 2 MiB (131072 slots) tables grow inside their own map.
        let n = 400_000u32;
        let mut t = FingerprintTable::<true>::default();
        for i in 0..n {
            assert_eq!(t.insert(fingerprint(&i.to_le_bytes())), Insert::New(i));
        }
        assert!(t.slots.len() * 16 > 4 * HUGE_PAGE, "several in-place steps");
        assert_eq!(t.slots.len() % (HUGE_PAGE / 16), 0, "whole huge pages");
        for i in (0..n).step_by(7) {
            assert_eq!(t.insert(fingerprint(&i.to_le_bytes())), Insert::Seen(i));
        }
        assert!(!t.contains(fingerprint(b"absent")));
        assert_eq!(t.len(), n as usize);
        assert!(t.filled * 10 <= t.slots.len() * 7);
    }

    #[test]
    fn fpset_growth_keeps_wrapped_and_out_of_order_clusters() {
        let mut fps = Vec::new();
        // 30 fingerprints whose home is the last slot at every length: a
        // cluster that wraps around the end of every table, small (heap)
        // or grown in place.
        for j in 0..30u64 {
            fps.push((u128::from(j) << 64) | u128::from(u64::MAX - j % 3));
        }
        // Homes that go down as they are inserted: clusters whose slots
        // are in reverse order of home until the table is large.
        for j in 0..300u64 {
            fps.push((u128::from(j + 1000) << 64) | u128::from(u64::MAX / 2 - (j << 48)));
        }
        for i in 0..300_000u32 {
            fps.push(fingerprint(&i.to_le_bytes()));
        }
        let mut t = FingerprintTable::<true>::default();
        for (i, &fp) in fps.iter().enumerate() {
            assert_eq!(t.insert(fp), Insert::New(i as u32));
        }
        assert!(t.slots.len() * 16 > 2 * HUGE_PAGE, "grown in place too");
        for (i, &fp) in fps.iter().enumerate().rev() {
            assert_eq!(t.insert(fp), Insert::Seen(i as u32));
        }
        assert_eq!(t.len(), fps.len());
        let mut f = FingerprintTable::<false>::default();
        for &fp in &fps {
            assert!(f.insert(fp).is_new());
        }
        assert!(fps.iter().all(|&fp| f.contains(fp)));
        assert!(!f.contains((999 << 64) | u128::from(u64::MAX)));
    }

    #[test]
    fn fpset_placement_out_of_order_and_wrapping() {
        // Eight slots; entries in an order that needs every branch.
        let len = 8usize;
        // Home slot `h` of 8 is the top 3 of the low 64 bits.
        let at_home = |h: u64| u128::from((h << 61) + 1);
        let order = [
            at_home(2),
            at_home(2) | (1 << 64),
            at_home(2) | (2 << 64), // home inside the run: after it
            at_home(1),             // home before the run: probes
            at_home(5),
            at_home(7),
            at_home(7) | (1 << 64), // runs off the end: wraps to slot 0
            at_home(6),             // before the run again
        ];
        let mut bytes = vec![0u8; len * 16];
        let mut ids = vec![0u32; len];
        let mut at = Placement::default();
        for (id, &fp) in order.iter().enumerate() {
            at.place(&mut bytes, &mut ids, fp, id as u32);
        }
        // Every entry is reachable from its home without crossing an empty
        // slot, and its id went with it.
        for (id, &fp) in order.iter().enumerate() {
            let mut i = home(fp, len);
            while slot_at(&bytes, i) != fp {
                assert_ne!(slot_at(&bytes, i), 0, "gap before {fp:#x}");
                i = next_slot(i, len);
            }
            assert_eq!(ids[i], id as u32);
        }
        assert_eq!(slot_at(&bytes, 0), at_home(7) | (1 << 64));
    }

    /// `insert_all` gives what one `insert` per item gives, through growth
    /// (heap and in place), duplicates and the zero fingerprint.
    fn check_insert_all<const WITH_IDS: bool>() {
        let mut items: Vec<u128> = Vec::new();
        for i in 0..200_000u32 {
            items.push(fingerprint(&(i % 150_000).to_le_bytes()));
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
        assert_eq!(all.len(), 150_001);
        assert_eq!(all.len(), one.len());
        assert!(all.slots.len() * 16 > HUGE_PAGE, "grown in place");
    }

    #[test]
    fn fpset_insert_all_matches_insert() {
        check_insert_all::<false>();
        check_insert_all::<true>();
    }

    #[test]
    fn fpset_next_len_steps() {
        let mut len = MIN_SLOTS;
        let mut seen = vec![len];
        while len < 1 << 20 {
            len = next_len(len);
            seen.push(len);
        }
        let want = [
            64, 256, 1024, 4096, 16384, 65536, 131072, 262144, 393216, 524288,
        ];
        assert_eq!(seen[..want.len()], want);
        assert_eq!(seen.last(), Some(&(1 << 20)));
    }

    #[test]
    fn fpset_ids_are_dense_and_survive_growth() {
        let mut t = FingerprintTable::<true>::default();
        for i in 0..5_000u32 {
            assert_eq!(t.insert(fingerprint(&i.to_le_bytes())), Insert::New(i));
        }
        for i in (0..5_000u32).rev() {
            assert_eq!(t.insert(fingerprint(&i.to_le_bytes())), Insert::Seen(i));
        }
    }

    #[test]
    fn fpset_zero_and_colliding_home_slots() {
        let mut t = FingerprintTable::<true>::default();
        assert!(!t.contains(0));
        // Same low bits, different high bits: they share a home slot.
        let a = 5u128;
        let b = (1u128 << 100) | 5;
        let c = (1u128 << 127) | 5;
        assert_eq!(t.insert(a), Insert::New(0));
        assert_eq!(t.insert(0), Insert::New(1));
        assert_eq!(t.insert(b), Insert::New(2));
        assert_eq!(t.insert(c), Insert::New(3));
        assert_eq!(t.insert(0), Insert::Seen(1));
        assert_eq!(t.insert(b), Insert::Seen(2));
        assert!(t.contains(0) && t.contains(a) && t.contains(c));
        assert_eq!(t.len(), 4);
        assert!(!t.is_empty());
        // Probing wraps around the end of the slot array.
        let last = u128::from(u64::MAX);
        assert_eq!(home(last, MIN_SLOTS), MIN_SLOTS - 1);
        let mut w = FingerprintTable::<false>::default();
        assert!(w.insert(last).is_new());
        assert!(w.insert(last | (1 << 64)).is_new());
        assert!(w.contains(last | (1 << 64)));
    }
}
