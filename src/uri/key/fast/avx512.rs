//! The byte-class masks of the mask tier on x86_64 CPUs with AVX-512 (F, BW and
//! VBMI): the byte classes of a line of up to 128 bytes, 64 bytes an
//! instruction.
//!
//! `vpermi2b` looks up 64 bytes at once in a 128-entry table (the mask
//! bits of each ASCII byte); one `vptestmb` per class then gives that
//! class's bits for the block. The line is read with masked loads, which
//! touch no byte past its end. The key is then written by the portable
//! [`mask_key`](FastWriter::mask_key); for a line it does not take, the
//! AVX2 tier reads it.
//!
//! It pays on crawl lines: the key function is about 15% faster than with
//! AVX2 alone (`benches/normalize.rs`).

#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m512i, _mm512_cmplt_epu8_mask, _mm512_loadu_si512, _mm512_maskz_loadu_epi8,
    _mm512_maskz_permutex2var_epi8, _mm512_movepi8_mask, _mm512_set1_epi8, _mm512_sub_epi8,
    _mm512_test_epi8_mask,
};

use super::avx2::Avx2;
use super::masks::{
    line_bits, LineMasks, MASK_BITS, MAX_LEN, M_COLON, M_DOT, M_HASH, M_HOST, M_PATH, M_QUERY,
    M_QUESTION, M_SLASH,
};
use super::{FastWriter, Written};

/// Proof that the running CPU has AVX-512 F, BW and VBMI (and so AVX2);
/// made only by [`Avx512::detect`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::uri::key) struct Avx512 {
    avx2: Avx2,
}

impl Avx512 {
    /// `Some` when the running CPU has AVX-512 F, BW and VBMI.
    pub(in crate::uri::key) fn detect() -> Option<Self> {
        let avx2 = Avx2::detect()?;
        let avx512 = std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vbmi");
        avx512.then_some(Self { avx2 })
    }

    /// The fast tier's key of `s` (see [`FastWriter::key`]): written
    /// from its masks when it has one of their shapes, else by the AVX2
    /// tier.
    #[inline]
    pub(in crate::uri::key) fn key(
        self,
        w: &FastWriter,
        s: &[u8],
        out: &mut Vec<u8>,
    ) -> Option<Written> {
        if s.len() <= MAX_LEN {
            // SAFETY: `self` proves the CPU has the features `mask_key`
            // enables.
            if let Some(key) = unsafe { mask_key(w, s, out) } {
                return Some(key);
            }
        }
        self.avx2.key(w, s, out)
    }

    /// The masks of `s` (at most [`MAX_LEN`] bytes).
    #[cfg(test)]
    fn masks(self, s: &[u8]) -> LineMasks {
        assert!(s.len() <= MAX_LEN);
        // SAFETY: `self` proves the CPU has the features `line_masks`
        // enables.
        unsafe { line_masks(s) }
    }
}

/// [`FastWriter::mask_key`] of `s` (at most [`MAX_LEN`] bytes), with
/// its masks built here.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
fn mask_key(w: &FastWriter, s: &[u8], out: &mut Vec<u8>) -> Option<Written> {
    w.mask_key(&line_masks(s), s, out)
}

/// The masks of `s`, which has at most [`MAX_LEN`] bytes.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
fn line_masks(s: &[u8]) -> LineMasks {
    let (low, high) = table_halves();
    let (first, second) = s.split_at(s.len().min(64));
    let lo = block_masks(first, low, high);
    let hi = block_masks(second, low, high);
    let join = |k: usize| u128::from(lo[k]) | u128::from(hi[k]) << 64;
    LineMasks {
        host: join(0),
        path: join(1),
        query: join(2),
        slash: join(3),
        question: join(4),
        hash: join(5),
        dot: join(6),
        colon: join(7),
        digit: join(8),
        upper: join(9),
        percent: join(10),
        line: line_bits(s.len()),
    }
}

/// The masks of `block` (at most 64 bytes), in the order of the fields of
/// [`LineMasks`].
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
#[inline]
fn block_masks(block: &[u8], low: __m512i, high: __m512i) -> [u64; 11] {
    if block.is_empty() {
        return [0; 11];
    }
    let within = u64::MAX >> (64 - block.len());
    // SAFETY: the load reads only the bytes whose bit is set in `within`,
    // the `block.len()` bytes of `block` (masked-out bytes are not
    // accessed, so no fault past its end).
    let v = unsafe { _mm512_maskz_loadu_epi8(within, block.as_ptr().cast()) };
    let ascii = within & !_mm512_movepi8_mask(v);
    // Indexes use their low seven bits: bit 6 picks `high` over `low`.
    let bits = _mm512_maskz_permutex2var_epi8(ascii, low, v, high);
    let class = |bit: u8| _mm512_test_epi8_mask(bits, _mm512_set1_epi8(bit as i8));
    let range = |from: u8, count: u8| {
        let offset = _mm512_sub_epi8(v, _mm512_set1_epi8(from as i8));
        within & _mm512_cmplt_epu8_mask(offset, _mm512_set1_epi8(count as i8))
    };
    [
        class(M_HOST),
        class(M_PATH),
        class(M_QUERY),
        class(M_SLASH),
        class(M_QUESTION),
        class(M_HASH),
        class(M_DOT),
        class(M_COLON),
        range(b'0', 10),
        range(b'A', 26),
        range(b'%', 1),
    ]
}

/// [`MASK_BITS`] as the two 64-byte tables of `vpermi2b`.
#[target_feature(enable = "avx512f")]
#[inline]
fn table_halves() -> (__m512i, __m512i) {
    // SAFETY: each half is 64 readable bytes of a 128-byte static;
    // `loadu` has no alignment requirement.
    unsafe {
        (
            _mm512_loadu_si512(MASK_BITS.as_ptr().cast()),
            _mm512_loadu_si512(MASK_BITS[64..].as_ptr().cast()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simd_masks_equal_the_portable_ones() {
        let Some(t) = Avx512::detect() else {
            eprintln!("no AVX-512 VBMI on this CPU: nothing to compare");
            return;
        };
        // Every byte value at every position, in lines of every length.
        for len in 1..=MAX_LEN {
            for at in [0, len / 2, len - 1] {
                for b in 0..=255u8 {
                    let mut s = vec![b'a'; len];
                    s[at] = b;
                    assert_eq!(t.masks(&s), LineMasks::of(&s).unwrap(), "{len} {at} {b}");
                }
            }
        }
        assert_eq!(t.masks(b""), LineMasks::default());
    }
}
