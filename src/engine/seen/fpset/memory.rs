//! The memory behind a table's buckets: a vector for small tables, an
//! anonymous map for larger ones, with huge pages past [`HUGE_FROM`],
//! faulted in writable at once, and room to grow in place.

use super::bucket::BUCKET;

/// Tables at least this large live in their own anonymous memory map,
/// faulted in at once (see [`Slots::zeroed`]).
const HUGE_TABLE_BYTES: usize = 64 << 10;

/// Size and alignment of a transparent huge page (x86_64, aarch64 with 4 KiB
/// pages). Tables from [`HUGE_FROM`] on span whole huge pages where they
/// can: far fewer TLB misses on their random accesses.
pub(super) const HUGE_PAGE: usize = 2 << 20;

/// Tables stay in small pages up to this size; the part of a table past
/// it goes into huge pages. The TLB misses of random accesses cost little
/// while the page tables of all 16 shards' tables (16 KiB per 8 MiB) stay
/// in the CPU's caches, and a huge page costs more to fault in where the
/// system is a virtual machine whose host takes back free memory (free
/// page reporting works in 2 MiB blocks, which are what a huge page is
/// made of): there fresh huge pages fault in at a fifth of the speed of
/// small pages.
pub(super) const HUGE_FROM: usize = 8 << 20;

/// Buckets in a huge page.
pub(super) const PAGE_BUCKETS: usize = HUGE_PAGE / BUCKET;

/// A table of a huge page or more reserves this many times its size of
/// address space, and at least [`RESERVE_BYTES`], and grows inside it (see
/// `FingerprintTable::grow`).
const RESERVE_FACTOR: usize = 8;

/// The least address space a table of a huge page or more reserves: room
/// for about 70 M fingerprints, so that the engine's 16 shards grow in
/// place up to a billion keys: a shard that outgrows its range moves to a
/// new map, re-inserting its entries and faulting in fresh pages for them,
/// which costs about three times a rebuild in place. Address space that
/// is never touched costs no memory (the map is made without a swap
/// reservation), but it counts against `ulimit -v` and under strict
/// overcommit: there a table reserves 8 times its size only (see
/// [`address_space_is_free`](crate::engine::memory::address_space_is_free)), else a
/// large run under a `ulimit -v` runs out of address space.
const RESERVE_BYTES: usize = 1 << 30;

/// Zero-initialised storage for `len` buckets.
#[derive(Debug)]
pub(super) struct Slots {
    pub(super) mem: SlotMemory,
    len: usize,
}

#[derive(Debug)]
pub(super) enum SlotMemory {
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
    pub(super) fn zeroed(len: usize) -> Self {
        let bytes = len * BUCKET;
        if bytes >= HUGE_TABLE_BYTES {
            // A table of at least one huge page gets a huge page of slack so
            // that it can start on a huge-page boundary: unaligned, a table
            // whose length is not a power of two gets huge pages for about
            // half its memory. The slack is never touched, so it costs
            // address space, not memory.
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
            let map = if slack > 0 && crate::engine::memory::address_space_is_free() {
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

    pub(super) fn bytes(&self) -> &[u8] {
        match &self.mem {
            SlotMemory::Heap(v) => v,
            SlotMemory::Map {
                map, offset, bytes, ..
            } => map.get(*offset..offset + bytes).unwrap_or_default(),
        }
    }

    pub(super) fn bytes_mut(&mut self) -> &mut [u8] {
        match &mut self.mem {
            SlotMemory::Heap(v) => v,
            SlotMemory::Map {
                map, offset, bytes, ..
            } => map.get_mut(*offset..*offset + *bytes).unwrap_or_default(),
        }
    }

    /// Number of buckets.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Grows to `len` buckets inside the map's spare room, the old buckets
    /// kept as they are and the new ones zero. False (nothing changed) when
    /// there is no such room.
    pub(super) fn extend_in_place(&mut self, len: usize) -> bool {
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
/// wait, and a fresh huge page is slow to fault in on a VM whose host backs
/// it on first touch (milliseconds).
#[cfg(target_os = "linux")]
pub(super) fn populate(map: &memmap2::MmapMut, start: usize, len: usize) {
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
pub(super) const POPULATE_PIECE: usize = 4 * HUGE_PAGE;
