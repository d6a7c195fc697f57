//! Lookups in a store's runs: batches sorted by the caller (a run asks a
//! shard's first-seen keys at a time), and batches in any order (the Python
//! binding's), which are sorted and split over threads here.

use std::sync::Arc;

use rayon::prelude::*;

use super::error::StoreError;
use super::run_file::RunFile;

/// Sorted keys one thread looks up at a time: enough that a piece's
/// lookups keep their prefetches in flight.
const PIECE: usize = 8192;

/// Sets `found[i]` when one of `runs` (largest first) holds `fps[i]`;
/// `fps` is sorted ascending, so each run is read in order.
pub(super) fn contains_in(
    runs: &[Arc<RunFile>],
    fps: &[u128],
    found: &mut [bool],
) -> Result<(), StoreError> {
    for r in runs {
        r.contains_sorted(fps, found)?;
    }
    Ok(())
}

/// Whether `runs` hold each of `fps` (in any order, repeats allowed), in
/// the order of `fps`: sorted, then looked up in pieces on rayon's threads.
pub(super) fn contains_each(runs: &[Arc<RunFile>], fps: &[u128]) -> Result<Vec<bool>, StoreError> {
    if runs.is_empty() {
        return Ok(vec![false; fps.len()]);
    }
    let mut order: Vec<(u128, usize)> = fps.iter().copied().zip(0..).collect();
    order.par_sort_unstable_by_key(|p| p.0);
    let sorted: Vec<u128> = order.iter().map(|p| p.0).collect();
    let mut found = vec![false; sorted.len()];
    sorted
        .par_chunks(PIECE)
        .zip(found.par_chunks_mut(PIECE))
        .try_for_each(|(keys, hits)| contains_in(runs, keys, hits))?;
    let mut out = vec![false; fps.len()];
    for (&(_, at), hit) in order.iter().zip(found) {
        if let Some(slot) = out.get_mut(at) {
            *slot = hit;
        }
    }
    Ok(out)
}
