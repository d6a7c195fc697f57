//! Sixteen bytes tested at once, for the byte searches of the compatibility
//! presets (`compat/bytes.rs`), the parser's check of what follows an
//! authority (`parse.rs`), SURT keys (`surt.rs`) and the engine's newline
//! scan.
//!
//! A test is written once as compares on a [`Lanes`] value (`eq`, `range`,
//! `|`, `&`, `!`), and [`Lanes::bits`] gives one bit per byte, so that the
//! first match is a `trailing_zeros` away: no second, byte-by-byte search
//! of the chunk. On x86-64 the lanes are an SSE2 register (SSE2 is part of
//! the x86-64 baseline); elsewhere a plain array with the same meaning.
//! A fold over the 16 bytes left to the compiler vectorizes badly and
//! loses where the match is.
//!
//! The SSE2 intrinsics are this module's `unsafe` code; each call says why
//! it is sound.

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub(crate) use sse2::Lanes;

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
pub(crate) use portable::Lanes;

/// Sixteen bytes of `s` that include those from `at` on: the lanes, the
/// offset in `s` of the first lane, and one bit per lane that holds a byte
/// of `s` at `at` or later. Near the end of `s` the block is the last
/// sixteen bytes (no copy); only an `s` shorter than that is copied.
#[inline(always)]
pub(crate) fn lanes_at(s: &[u8], at: usize) -> (Lanes, u32, usize) {
    let full = |from: usize| {
        s.get(from..from.saturating_add(16))
            .and_then(|b| <&[u8; 16]>::try_from(b).ok())
    };
    if let Some(block) = full(at) {
        return (Lanes::load(block), 0xffff, at);
    }
    if let Some(base) = s.len().checked_sub(16) {
        if let Some(block) = full(base) {
            let skipped = at.saturating_sub(base).min(16);
            return (Lanes::load(block), (0xffff << skipped) & 0xffff, base);
        }
    }
    let rest = s.get(at..).unwrap_or_default();
    let n = rest.len().min(16);
    let mut padded = [0u8; 16];
    padded[..n].copy_from_slice(&rest[..n]);
    (Lanes::load(&padded), (1u32 << n) - 1, at)
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[allow(unsafe_code)]
mod sse2 {
    //! Every `unsafe` block here calls an SSE2 intrinsic (the load reads
    //! 16 bytes from a `&[u8; 16]`). SAFETY, for all of them: this module
    //! is compiled only when SSE2 is enabled for the target, so the
    //! instructions exist on every CPU the binary runs on; none of the
    //! intrinsics touches memory except `_mm_loadu_si128`, whose unaligned
    //! 16-byte read stays inside the array it is given.

    use core::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_min_epu8,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8, _mm_setzero_si128, _mm_sub_epi8,
        _mm_xor_si128,
    };

    /// Sixteen bytes, or sixteen test results (each lane all ones or zero).
    #[derive(Clone, Copy)]
    pub(crate) struct Lanes(__m128i);

    impl Lanes {
        /// The 16 bytes of `chunk`.
        #[inline(always)]
        pub(crate) fn load(chunk: &[u8; 16]) -> Self {
            // SAFETY: see the module comment.
            Lanes(unsafe { _mm_loadu_si128(chunk.as_ptr().cast()) })
        }

        /// All lanes false.
        #[inline(always)]
        pub(crate) fn zero() -> Self {
            // SAFETY: see the module comment.
            Lanes(unsafe { _mm_setzero_si128() })
        }

        /// Is the byte `b`?
        #[inline(always)]
        pub(crate) fn eq(self, b: u8) -> Self {
            // SAFETY: see the module comment.
            Lanes(unsafe { _mm_cmpeq_epi8(self.0, _mm_set1_epi8(b as i8)) })
        }

        /// Is the byte in `lo..=hi` (unsigned)? The byte minus `lo` is at
        /// most `hi - lo` exactly when the smaller of the two is itself.
        #[inline(always)]
        pub(crate) fn range(self, lo: u8, hi: u8) -> Self {
            // SAFETY: see the module comment.
            unsafe {
                let x = _mm_sub_epi8(self.0, _mm_set1_epi8(lo as i8));
                Lanes(_mm_cmpeq_epi8(
                    _mm_min_epu8(x, _mm_set1_epi8(hi.wrapping_sub(lo) as i8)),
                    x,
                ))
            }
        }

        /// Is the byte below `b` (an ASCII byte), or not ASCII? One signed
        /// compare: bytes from 0x80 on are negative as `i8`.
        #[inline(always)]
        #[cfg_attr(not(feature = "engine"), allow(dead_code))] // the CDXJ reader's
        pub(crate) fn below_or_non_ascii(self, b: u8) -> Self {
            // SAFETY: see the module comment.
            Lanes(unsafe { _mm_cmplt_epi8(self.0, _mm_set1_epi8(b as i8)) })
        }

        /// Bit `i` set when lane `i` is true.
        #[inline(always)]
        pub(crate) fn bits(self) -> u32 {
            // SAFETY: see the module comment.
            unsafe { _mm_movemask_epi8(self.0) as u32 }
        }
    }

    impl core::ops::BitOr for Lanes {
        type Output = Self;
        #[inline(always)]
        fn bitor(self, o: Self) -> Self {
            // SAFETY: see the module comment.
            Lanes(unsafe { _mm_or_si128(self.0, o.0) })
        }
    }

    impl core::ops::BitAnd for Lanes {
        type Output = Self;
        #[inline(always)]
        fn bitand(self, o: Self) -> Self {
            // SAFETY: see the module comment.
            Lanes(unsafe { _mm_and_si128(self.0, o.0) })
        }
    }

    impl core::ops::Not for Lanes {
        type Output = Self;
        #[inline(always)]
        fn not(self) -> Self {
            // SAFETY: see the module comment.
            Lanes(unsafe { _mm_xor_si128(self.0, _mm_set1_epi8(-1)) })
        }
    }
}

#[cfg(any(test, not(all(target_arch = "x86_64", target_feature = "sse2"))))]
mod portable {
    //! The same operations on a plain array, one byte at a time.

    /// Sixteen bytes, or sixteen test results (each lane 0xFF or 0; `|`,
    /// `&` and `!` are meant for results).
    #[derive(Clone, Copy)]
    pub(crate) struct Lanes([u8; 16]);

    fn lanes(f: impl Fn(usize) -> bool) -> Lanes {
        Lanes(core::array::from_fn(|i| if f(i) { 0xff } else { 0 }))
    }

    impl Lanes {
        /// The 16 bytes of `chunk`.
        #[inline(always)]
        pub(crate) fn load(chunk: &[u8; 16]) -> Self {
            Lanes(*chunk)
        }

        /// All lanes false.
        #[inline(always)]
        pub(crate) fn zero() -> Self {
            Lanes([0; 16])
        }

        /// Is the byte `b`?
        #[inline(always)]
        pub(crate) fn eq(self, b: u8) -> Self {
            lanes(|i| self.0[i] == b)
        }

        /// Is the byte in `lo..=hi` (unsigned)?
        #[inline(always)]
        pub(crate) fn range(self, lo: u8, hi: u8) -> Self {
            lanes(|i| (lo..=hi).contains(&self.0[i]))
        }

        /// Is the byte below `b` (an ASCII byte), or not ASCII?
        #[inline(always)]
        #[cfg_attr(not(feature = "engine"), allow(dead_code))] // the CDXJ reader's
        pub(crate) fn below_or_non_ascii(self, b: u8) -> Self {
            lanes(|i| self.0[i] < b || self.0[i] >= 0x80)
        }

        /// Bit `i` set when lane `i` is true.
        #[inline(always)]
        pub(crate) fn bits(self) -> u32 {
            (0..16).fold(0, |m, i| m | (u32::from(self.0[i] >> 7) << i))
        }
    }

    impl core::ops::BitOr for Lanes {
        type Output = Self;
        fn bitor(self, o: Self) -> Self {
            lanes(|i| (self.0[i] | o.0[i]) != 0)
        }
    }

    impl core::ops::BitAnd for Lanes {
        type Output = Self;
        fn bitand(self, o: Self) -> Self {
            lanes(|i| (self.0[i] & o.0[i]) != 0)
        }
    }

    impl core::ops::Not for Lanes {
        type Output = Self;
        fn not(self) -> Self {
            lanes(|i| self.0[i] == 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::portable::Lanes as Portable;
    use super::{lanes_at, Lanes};

    #[test]
    fn lanes_at_covers_the_bytes_from_at_and_says_where_they_are() {
        for len in 0..40usize {
            // Distinct bytes, none of them 0 (the padding).
            let s: Vec<u8> = (1..=len as u8).collect();
            for at in 0..len {
                let (v, valid, base) = lanes_at(&s, at);
                assert_eq!(
                    valid.count_ones() as usize,
                    (len - at).min(16),
                    "{len} {at}"
                );
                for i in 0..16 {
                    let p = base + i;
                    let holds = valid >> i & 1 == 1;
                    assert_eq!(holds, p >= at && p < len && p < at + 16, "{len} {at} {i}");
                    if holds {
                        assert_eq!(v.eq(s[p]).bits(), 1 << i, "{len} {at} {i}");
                    }
                }
            }
        }
    }

    /// Each chunk of 16 consecutive byte values, as bytes and as both lanes.
    fn chunks() -> impl Iterator<Item = ([u8; 16], Lanes, Portable)> {
        (0..=255u8).step_by(16).map(|start| {
            let chunk: [u8; 16] = core::array::from_fn(|i| start + i as u8);
            (chunk, Lanes::load(&chunk), Portable::load(&chunk))
        })
    }

    #[test]
    fn operations_match_their_byte_meaning() {
        for (chunk, v, p) in chunks() {
            let want = |f: &dyn Fn(u8) -> bool| {
                (0..16).fold(0u32, |m, i| m | (u32::from(f(chunk[i])) << i))
            };
            let both = |got: (u32, u32), f: &dyn Fn(u8) -> bool| {
                assert_eq!(got.0, want(f), "{chunk:?}");
                assert_eq!(got.1, want(f), "portable {chunk:?}");
            };
            both((v.eq(b'%').bits(), p.eq(b'%').bits()), &|b| b == b'%');
            for below in [0, 0x20, 0x7f] {
                both(
                    (
                        v.below_or_non_ascii(below).bits(),
                        p.below_or_non_ascii(below).bits(),
                    ),
                    &|b| b < below || b >= 0x80,
                );
            }
            both(
                (v.range(0x21, 0x7e).bits(), p.range(0x21, 0x7e).bits()),
                &|b| (0x21..=0x7e).contains(&b),
            );
            both(
                (v.range(0x80, 0xff).bits(), p.range(0x80, 0xff).bits()),
                &|b| b >= 0x80,
            );
            both((v.range(0, 13).bits(), p.range(0, 13).bits()), &|b| b <= 13);
            both(
                (
                    (!v.range(b'a', b'z') | v.eq(b'q') & v.eq(b'q')).bits(),
                    (!p.range(b'a', b'z') | p.eq(b'q') & p.eq(b'q')).bits(),
                ),
                &|b| !b.is_ascii_lowercase() || b == b'q',
            );
            both(
                (
                    (Lanes::zero() | v.eq(b'%')).bits(),
                    (Portable::zero() | p.eq(b'%')).bits(),
                ),
                &|b| b == b'%',
            );
        }
    }
}
