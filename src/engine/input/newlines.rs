//! The newlines of a chunk, found 64 bytes at a time.
//!
//! A block's newlines become one bit mask, and each line then costs a
//! trailing-zero count. `memchr_iter` starts a new search per line, whose
//! setup dominates on URL lines: blocks take half its instructions a line.

use crate::uri::lanes::Lanes;

use crate::engine::prefetch::{prefetch, SEQUENTIAL_AHEAD};

/// Bytes per block: one bit of a `u64` mask each.
const BLOCK: usize = 64;

/// Iterator over the positions of `\n` in a byte slice, in order.
pub struct Newlines<'a> {
    data: &'a [u8],
    /// Start of the block `mask` describes.
    base: usize,
    /// Newlines of that block not yet returned, one bit each.
    mask: u64,
}

impl<'a> Newlines<'a> {
    /// The newlines of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            base: 0,
            mask: block_mask(data),
        }
    }
}

impl Iterator for Newlines<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        while self.mask == 0 {
            self.base += BLOCK;
            prefetch(self.data, self.base + SEQUENTIAL_AHEAD);
            let block = self.data.get(self.base..)?;
            if block.is_empty() {
                return None;
            }
            self.mask = block_mask(block);
        }
        let at = self.base + self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(at)
    }
}

/// Bit `i` set where byte `i` of the first 64 of `block` is `\n`.
#[inline]
fn block_mask(block: &[u8]) -> u64 {
    match block.first_chunk::<BLOCK>() {
        Some(full) => full_mask(full),
        None => portable_mask(block),
    }
}

/// [`block_mask`] a byte at a time: for the last, partial block.
fn portable_mask(block: &[u8]) -> u64 {
    block
        .iter()
        .take(BLOCK)
        .enumerate()
        .fold(0, |m, (i, &b)| m | (u64::from(b == b'\n') << i))
}

/// [`block_mask`] of a whole block: four 16-byte compares ([`Lanes`]: SSE2
/// on x86-64). The compiler does not turn the portable loop into these; it
/// stays scalar and costs more than `memchr`.
#[inline]
fn full_mask(block: &[u8; BLOCK]) -> u64 {
    block
        .chunks_exact(16)
        .enumerate()
        .fold(0, |mask, (k, part)| {
            let hits = part
                .first_chunk::<16>()
                .map_or(0, |part| Lanes::load(part).eq(b'\n').bits());
            mask | u64::from(hits) << (16 * k)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_memchr(data: &[u8]) -> Vec<usize> {
        memchr::memchr_iter(b'\n', data).collect()
    }

    #[test]
    fn newlines_equal_memchr() {
        let mut data = Vec::new();
        assert_eq!(Newlines::new(&data).collect::<Vec<_>>(), by_memchr(&data));
        // Lines of every length across block boundaries, runs of newlines,
        // and no final newline.
        for len in 0..200 {
            data.extend(std::iter::repeat_n(b'a', len % 131));
            data.push(b'\n');
            if len % 7 == 0 {
                data.extend_from_slice(b"\n\n");
            }
        }
        data.extend_from_slice(b"tail");
        for cut in [0, 1, 63, 64, 65, 127, 128, data.len() - 1, data.len()] {
            let d = &data[..cut];
            assert_eq!(Newlines::new(d).collect::<Vec<_>>(), by_memchr(d), "{cut}");
        }
        let all = vec![b'\n'; 200];
        assert_eq!(Newlines::new(&all).count(), 200);
    }

    #[test]
    fn newlines_block_masks_agree() {
        // Every bit position, and bytes that differ from '\n' in one bit.
        for i in 0..BLOCK {
            let mut block = [b'a'; BLOCK];
            block[i] = b'\n';
            block[(i + 7) % BLOCK] = b'\n' ^ 0x80;
            block[(i + 13) % BLOCK] = b'\n' ^ 0x01;
            assert_eq!(full_mask(&block), portable_mask(&block), "{i}");
            assert_eq!(full_mask(&block) & (1 << i), 1 << i);
        }
    }
}
