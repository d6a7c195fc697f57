//! "Seen before?" over keys: the engine's streaming seen-set, so a
//! `Deduplicator` keeps a key in the same fingerprint table as the CLI's
//! `dedup` (about 17 bytes per key) with the same collision bound.

use urikey::engine::{OverLimit, SeenSet, Verdict};

use crate::keys::Line;
use crate::options::Keying;

/// Adds `lines` to `set`: true at each line whose key was not in the set
/// (the first line of its key), false for duplicates, invalid lines and
/// `None`.
///
/// # Errors
/// The set would pass its memory limit (nothing was added).
pub fn add(set: &mut SeenSet, lines: &[Line<'_>]) -> Result<Vec<bool>, OverLimit> {
    Ok(set.add(lines)?.into_iter().map(Verdict::is_new).collect())
}

/// [`add`] on a new set without a limit: the first line of each key within
/// one batch (the set takes less memory than the batch itself).
pub fn first_of_each_key(k: &Keying, lines: &[Line<'_>]) -> Vec<bool> {
    let mut set = SeenSet::new(k.keyer.clone());
    match set.add(lines) {
        Ok(verdicts) => verdicts.into_iter().map(Verdict::is_new).collect(),
        // A set without a limit refuses nothing.
        Err(_) => Vec::new(),
    }
}
