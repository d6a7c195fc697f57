//! The AVX2 run scanner of the fast tier (x86_64 only): 32 bytes per step.
//!
//! A byte's class is read from two 16-entry tables, one indexed by its low
//! nibble and one by its high nibble (`vpshufb` looks up 32 bytes at once):
//! the byte is outside the class when the two entries share a bit. The
//! tables are derived at compile time from the same class table the scalar
//! scanner reads ([`CLASSES`]), so the two cannot disagree; a unit test
//! checks them against each other on every byte and every start index.
//!
//! The fast tier is compiled a second time with AVX2 enabled
//! ([`Avx2::key`]), so that its calls into this scanner stay in AVX2 code.
//! An [`Avx2`] value exists only when the running CPU has AVX2
//! ([`Avx2::detect`]); without it the portable [`Scalar`] scanner is used.
//!
//! Its `unsafe` code: calls into `#[target_feature]` functions, guarded by
//! that proof, and unaligned loads of 32-byte arrays. It pays because the
//! fast tier's runs are scanned 32 bytes a step instead of 8 (the key
//! function about a quarter faster on crawl lines; `benches/normalize.rs`).

#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m256i, _mm256_and_si256, _mm256_broadcastsi128_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256,
    _mm256_movemask_epi8, _mm256_set1_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8,
    _mm256_srli_epi16, _mm_setr_epi8,
};

use super::scalar::{Scalar, Scan, CLASSES};
use super::{FastWriter, Written};

/// Proof that the running CPU has AVX2; made only by [`Avx2::detect`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::uri::key) struct Avx2(());

impl Avx2 {
    /// `Some` when the running CPU has AVX2.
    pub(in crate::uri::key) fn detect() -> Option<Self> {
        std::is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }

    /// The fast tier's key of `s` (see [`FastWriter::key`]), scanned with
    /// AVX2.
    #[inline]
    pub(in crate::uri::key) fn key(
        self,
        w: &FastWriter,
        s: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<Written> {
        // SAFETY: `self` proves the CPU has AVX2, the only feature
        // `key_avx2` enables.
        unsafe { key_avx2(self, w, s, out) }
    }
}

/// [`FastWriter::key`] compiled with AVX2.
#[target_feature(enable = "avx2")]
fn key_avx2(t: Avx2, w: &FastWriter, s: &[u8], out: &mut Vec<u8>) -> Option<Written> {
    w.key(t, s, out)
}

impl Scan for Avx2 {
    #[inline(always)]
    fn skip<const C: u8>(self, s: &[u8], i: usize) -> usize {
        // SAFETY: `self` proves the CPU has AVX2, the only feature
        // `skip_avx2` enables.
        unsafe { skip_avx2::<C>(s, i) }
    }
}

/// The nibble tables of one class: byte `b` is outside it exactly when
/// `lo[b & 15] & hi[b >> 4] != 0`.
struct Nibbles {
    lo: [u8; 16],
    hi: [u8; 16],
}

/// The nibble tables of class `c`. For each high nibble, the low nibbles of
/// the bytes outside the class form a set; each distinct non-empty set gets
/// a bit, set in `hi` for the high nibbles that have that set and in `lo`
/// for the low nibbles in it. Eight bits allow eight distinct sets; the
/// classes of the fast tier need at most six (a class that needed more
/// would fail to compile).
const fn nibbles(c: u8) -> Nibbles {
    let mut outside = [0u16; 16];
    let mut b = 0;
    while b < 256 {
        if CLASSES[b] & c == 0 {
            outside[b >> 4] |= 1 << (b & 15);
        }
        b += 1;
    }
    let mut sets = [0u16; 8];
    let mut n = 0;
    let mut t = Nibbles {
        lo: [0; 16],
        hi: [0; 16],
    };
    let mut h = 0;
    while h < 16 {
        let set = outside[h];
        if set != 0 {
            let mut k = 0;
            while k < n && sets[k] != set {
                k += 1;
            }
            if k == n {
                assert!(n < 8, "a class needs more than eight nibble sets");
                sets[n] = set;
                n += 1;
            }
            t.hi[h] = 1 << k;
        }
        h += 1;
    }
    let mut k = 0;
    while k < n {
        let mut l = 0;
        while l < 16 {
            if sets[k] >> l & 1 != 0 {
                t.lo[l] |= 1 << k;
            }
            l += 1;
        }
        k += 1;
    }
    t
}

/// A 16-byte table in both 128-bit lanes (`vpshufb` looks up per lane).
#[target_feature(enable = "avx2")]
#[inline]
fn lanes(t: &[u8; 16]) -> __m256i {
    let b = |k: usize| t[k] as i8;
    _mm256_broadcastsi128_si256(_mm_setr_epi8(
        b(0),
        b(1),
        b(2),
        b(3),
        b(4),
        b(5),
        b(6),
        b(7),
        b(8),
        b(9),
        b(10),
        b(11),
        b(12),
        b(13),
        b(14),
        b(15),
    ))
}

/// Bit `k` is set when byte `k` of `block` is outside the class of the
/// nibble tables `lo` and `hi` (see [`nibbles`]).
#[target_feature(enable = "avx2")]
#[inline]
fn outside(block: &[u8; 32], lo: __m256i, hi: __m256i) -> u32 {
    // SAFETY: `block` refers to 32 readable bytes, exactly what the load
    // reads; `loadu` has no alignment requirement.
    let v = unsafe { _mm256_loadu_si256(block.as_ptr().cast()) };
    let low_nibble = _mm256_set1_epi8(0x0f);
    let l = _mm256_and_si256(v, low_nibble);
    let h = _mm256_and_si256(_mm256_srli_epi16::<4>(v), low_nibble);
    let hits = _mm256_and_si256(_mm256_shuffle_epi8(lo, l), _mm256_shuffle_epi8(hi, h));
    let inside = _mm256_movemask_epi8(_mm256_cmpeq_epi8(hits, _mm256_setzero_si256()));
    !(inside as u32)
}

/// [`Scan::skip`] 32 bytes at a time. The last partial block is read as
/// the input's last 32 bytes, ignoring the ones already scanned; an input
/// shorter than 32 bytes is left to the scalar scanner.
#[target_feature(enable = "avx2")]
#[inline]
fn skip_avx2<const C: u8>(s: &[u8], mut i: usize) -> usize {
    let t = const { nibbles(C) };
    let (lo, hi) = (lanes(&t.lo), lanes(&t.hi));
    while let Some(block) = s.get(i..).and_then(<[u8]>::first_chunk::<32>) {
        let stops = outside(block, lo, hi);
        if stops != 0 {
            return i + stops.trailing_zeros() as usize;
        }
        i += 32;
    }
    let n = s.len();
    if i >= n {
        return n;
    }
    match s.last_chunk::<32>() {
        Some(block) => {
            // Bytes n-32 .. i were scanned already (i > n - 32 here).
            let base = n - 32;
            let stops =
                outside(block, lo, hi) & u32::MAX.checked_shl((i - base) as u32).unwrap_or(0);
            if stops == 0 {
                n
            } else {
                base + stops.trailing_zeros() as usize
            }
        }
        None => Scalar.skip::<C>(s, i),
    }
}

#[cfg(test)]
mod tests {
    use super::super::scalar::{F_HOST, F_HOST_ANY, F_PATH_PLAIN, F_QUERY_PLAIN, F_USERINFO};
    use super::*;

    /// Both scanners on every start index of `s`, for every class.
    fn agree(t: Avx2, s: &[u8]) {
        for i in 0..=s.len() + 1 {
            assert_eq!(
                t.skip::<F_HOST>(s, i),
                Scalar.skip::<F_HOST>(s, i),
                "{s:?} {i}"
            );
            assert_eq!(t.skip::<F_HOST_ANY>(s, i), Scalar.skip::<F_HOST_ANY>(s, i));
            assert_eq!(
                t.skip::<F_PATH_PLAIN>(s, i),
                Scalar.skip::<F_PATH_PLAIN>(s, i)
            );
            assert_eq!(
                t.skip::<F_QUERY_PLAIN>(s, i),
                Scalar.skip::<F_QUERY_PLAIN>(s, i)
            );
            assert_eq!(t.skip::<F_USERINFO>(s, i), Scalar.skip::<F_USERINFO>(s, i));
        }
    }

    #[test]
    fn simd_nibble_tables_classify_every_byte() {
        for c in [F_HOST, F_HOST_ANY, F_PATH_PLAIN, F_QUERY_PLAIN, F_USERINFO] {
            let t = nibbles(c);
            for b in 0..=255u8 {
                let out = t.lo[usize::from(b & 15)] & t.hi[usize::from(b >> 4)] != 0;
                assert_eq!(out, CLASSES[usize::from(b)] & c == 0, "class {c} byte {b}");
            }
        }
    }

    #[test]
    fn simd_scanner_agrees_with_scalar() {
        let Some(t) = Avx2::detect() else {
            eprintln!("no AVX2 on this CPU: nothing to compare");
            return;
        };
        // Every byte value at every position of blocks of every length
        // around the 32-byte step, on a background of each class.
        for fill in [b'a', b'A', b'/', b'?', b'!'] {
            for len in [0usize, 1, 7, 31, 32, 33, 63, 64, 65, 100] {
                for at in [0, len / 2, len.saturating_sub(1)] {
                    for b in 0..=255u8 {
                        let mut s = vec![fill; len];
                        if let Some(x) = s.get_mut(at) {
                            *x = b;
                        }
                        agree(t, &s);
                    }
                }
            }
        }
        // Pseudo-random lines over a URL-ish alphabet.
        let alphabet = b"abcXYZ019-._~!$&'()*+,;=:@/?#%[] \"<>\\^`{|}\x7f\x80\xff";
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..2_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 90) as usize;
            let s: Vec<u8> = (0..len)
                .map(|k| {
                    let r = x.rotate_left(k as u32 * 7) ^ (k as u64).wrapping_mul(0x9E37);
                    // Mostly class bytes, so runs are long.
                    if r.is_multiple_of(8) {
                        alphabet[(r / 8 % alphabet.len() as u64) as usize]
                    } else {
                        b'a' + (r % 26) as u8
                    }
                })
                .collect();
            agree(t, &s);
        }
    }
}
