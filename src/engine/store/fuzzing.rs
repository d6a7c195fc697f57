//! Test hooks for the store's fuzz targets (feature `__internal-testing`):
//! the manifest's codec and the run file's reader and writer, which the
//! store keeps private, and [`seal_run_file`]. Not a public API.

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

pub use super::manifest::{is_run_name, run_name, Manifest, RunEntry};
use super::run_file::Layout;
pub use super::run_file::{RunFile, RunMeta, RunWriter, BLOCK_KEYS, HEADER_BYTES};

/// Rewrites the checksums of the run file `bytes` to match what they
/// cover (the header's; where the file has the size its header gives, each
/// block's and the index's too), so that a fuzz target reaches the checks
/// behind them: arbitrary bytes almost never pass an XXH3 checksum.
pub fn seal_run_file(bytes: &mut [u8]) {
    let header = HEADER_BYTES as usize;
    if bytes.len() < header {
        return;
    }
    let sum = xxh3_64(&bytes[..56]);
    bytes[56..64].copy_from_slice(&sum.to_le_bytes());
    let word = |at: usize, n: usize| {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(&bytes[at..at + n]);
        u64::from_le_bytes(w)
    };
    let layout = Layout {
        keys: word(16, 8),
        dir_bits: word(24, 4) as u32,
    };
    // The reader's own bounds (`decode_header`): beyond them it reads no
    // further, and the offsets below could overflow.
    if layout.dir_bits > 32
        || layout.keys > u64::MAX / 64
        || layout.file_bytes() != bytes.len() as u64
    {
        return;
    }
    let sums = layout.sums_offset() as usize;
    let block = (layout.key_bytes() * BLOCK_KEYS) as usize;
    for b in 0..layout.blocks() as usize {
        let start = header + block * b;
        let end = (start + block).min(sums);
        let sum = xxh3_64_with_seed(&bytes[start..end], b as u64);
        bytes[sums + 8 * b..sums + 8 * b + 8].copy_from_slice(&sum.to_le_bytes());
    }
    let trailer = layout.trailer_offset() as usize;
    let sum = xxh3_64(&bytes[sums..trailer]);
    bytes[trailer..trailer + 8].copy_from_slice(&sum.to_le_bytes());
}

// The run file's writer and iterator are reachable outside the crate only
// through these hooks, so their `Debug` (which the crate's lints ask of
// public types) lives here.
impl core::fmt::Debug for RunWriter {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RunWriter").finish_non_exhaustive()
    }
}

impl core::fmt::Debug for super::run_file::RunIter<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RunIter").finish_non_exhaustive()
    }
}
