//! Software prefetch: telling the CPU which memory will be read soon.

/// Asks the CPU to start loading the cache line that holds byte `at` of
/// `bytes` (any `at`: past the end, the request is simply useless).
#[inline]
pub fn prefetch(bytes: &[u8], at: usize) {
    let p = bytes.as_ptr().wrapping_add(at);
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
