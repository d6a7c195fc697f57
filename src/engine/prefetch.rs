//! Software prefetch: telling the CPU which memory will be read soon.

// The CPU's prefetch hint, which reads no memory.
#![allow(unsafe_code)]

/// How far ahead of where it reads a pass over the input in order (the
/// newline scan, a spilled run's final pass) prefetches it. A mapped input
/// lies in the page cache in 4 KiB pages scattered over memory, and the
/// CPU's own prefetcher, which stays within a page, starts over at each
/// one. In the newline scan, the first read of each chunk, this cut 0.05
/// to 0.08 CPU seconds of about 2.1 on the 1 GiB crawl dump (2 threads;
/// 256 bytes ahead: a little less; 2 and 4 KiB: the same).
pub const SEQUENTIAL_AHEAD: usize = 1024;

/// Asks the CPU to start loading the cache line that holds byte `at` of
/// `bytes` (any `at`: past the end, the request is simply useless).
#[inline]
pub fn prefetch(bytes: &[u8], at: usize) {
    prefetch_item(bytes, at);
}

/// Asks the CPU to start loading the cache line that holds `items[i]` (any
/// `i`: past the end, the request is simply useless).
#[inline]
pub fn prefetch_item<T>(items: &[T], i: usize) {
    let p = items.as_ptr().wrapping_add(i);
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
