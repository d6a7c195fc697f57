//! The bytes an input is read into, shared between threads and sliced into
//! chunks, and the pool their buffers go back to once read out.

// MADV_DONTNEED on the pages of a read-only file map (`release`).
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

impl core::fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("SharedBytes")
            .field("len", &self.as_slice().len())
            .finish()
    }
}

/// Bytes that can be shared between threads and sliced into chunks.
#[derive(Clone)]
pub struct SharedBytes(Arc<Backing>);

enum Backing {
    /// A file map, and the start of the range released last (see
    /// [`SharedBytes::release`]).
    Map(memmap2::Mmap, AtomicUsize),
    Memory(Arc<[u8]>),
    Owned(Vec<u8>, Option<Home>),
}

/// Buffers handed back once read out, to be filled again: fresh memory
/// costs a page fault for every 4 KiB written to it (a third of the time
/// of decoding cheap gzip members).
pub(crate) type Spare = Arc<Mutex<Vec<Vec<u8>>>>;

/// A buffer from `spare` (its content stale), or a new one.
pub(crate) fn take_spare(spare: &Spare) -> Vec<u8> {
    spare
        .lock()
        .ok()
        .and_then(|mut s| s.pop())
        .unwrap_or_default()
}

/// Where a buffer goes back to once nothing holds it: a pool of spare
/// buffers (while it exists) and the most it keeps.
#[derive(Debug)]
pub struct Home {
    pub(crate) pool: Weak<Mutex<Vec<Vec<u8>>>>,
    pub(crate) max: usize,
}

impl Drop for Backing {
    fn drop(&mut self) {
        if let Backing::Owned(bytes, Some(home)) = self {
            if let Some(pool) = home.pool.upgrade() {
                if let Ok(mut pool) = pool.lock() {
                    if pool.len() < home.max {
                        pool.push(std::mem::take(bytes));
                    }
                }
            }
        }
    }
}

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl SharedBytes {
    /// A read-only map of a file (see `source::map_file` for what makes it
    /// sound).
    pub(crate) fn from_map(map: memmap2::Mmap) -> Self {
        Self(Arc::new(Backing::Map(map, AtomicUsize::new(0))))
    }

    /// Bytes in memory.
    pub fn from_memory(bytes: Arc<[u8]>) -> Self {
        Self(Arc::new(Backing::Memory(bytes)))
    }

    /// Bytes in memory, taken over without a copy.
    pub fn from_vec(bytes: Vec<u8>) -> Self {
        Self(Arc::new(Backing::Owned(bytes, None)))
    }

    /// [`from_vec`](Self::from_vec), the buffer going back to `home` once
    /// nothing holds it (so that it is not allocated and faulted in again).
    pub(crate) fn from_vec_home(bytes: Vec<u8>, home: Option<Home>) -> Self {
        Self(Arc::new(Backing::Owned(bytes, home)))
    }

    /// All the bytes.
    pub fn as_slice(&self) -> &[u8] {
        match &*self.0 {
            Backing::Map(map, _) => map,
            Backing::Memory(bytes) => bytes,
            Backing::Owned(bytes, _) => bytes,
        }
    }

    /// Asks the kernel to map `range` now (Linux `MADV_POPULATE_READ`), so
    /// that the page faults are taken by the calling thread (the reader)
    /// rather than by the workers. Only a hint: failure changes nothing.
    pub fn prefault(&self, range: std::ops::Range<usize>) {
        #[cfg(target_os = "linux")]
        if let Backing::Map(map, _) = &*self.0 {
            if range.start < range.end && range.end <= map.len() {
                let _ = map.advise_range(
                    memmap2::Advice::PopulateRead,
                    range.start,
                    range.end - range.start,
                );
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = range;
    }

    /// Tells the kernel that `range`, and everything before it, will not be
    /// read again, so its pages leave this process's resident set (they
    /// stay in the page cache). Ranges must be released in input order.
    /// Without this, the resident set of a run would grow to the size of
    /// the mapped input. The call changes nothing that can be observed.
    ///
    /// The range released before this one is released again: when the page
    /// cache holds the file in large folios (up to 2 MiB), mapping any page
    /// of a folio maps all of it, so the pages of the previous range that
    /// share a folio with this one came back after they were released (the
    /// resident set of a 1 GiB run grew to 1.2 GB; 0.3 GB with this). Only
    /// whole 64 KiB blocks before `range.end` are released, so the next
    /// range's first pages stay mapped.
    pub fn release(&self, range: std::ops::Range<usize>) {
        #[cfg(unix)]
        if let Backing::Map(map, previous) = &*self.0 {
            const BLOCK: usize = 64 << 10;
            let from = previous
                .swap(range.start, Ordering::Relaxed)
                .min(range.start);
            let start = from.div_ceil(BLOCK).saturating_mul(BLOCK);
            let end = (range.end.min(map.len()) / BLOCK) * BLOCK;
            if start < end {
                // SAFETY: the map is a read-only `MAP_SHARED` map of a file,
                // so after MADV_DONTNEED a later read of these pages faults
                // them in again from the file with the same content: no byte
                // any reference can see changes (the truncation caveat of
                // `map_file` applies as before). Nothing is written through
                // the map. Failure only means the pages stay resident.
                let _ = unsafe {
                    map.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        start,
                        end - start,
                    )
                };
            }
        }
        #[cfg(not(unix))]
        let _ = range;
    }
}
