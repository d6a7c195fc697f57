//! "Seen before?" over keys: the engine's streaming seen-set, so a
//! `Deduplicator` keeps a key in the same fingerprint table as the CLI's
//! `dedup` (23 to 34 bytes per key) with the same collision bound.

use urikey::engine::{SeenSet, Verdict};

use crate::keys::Line;
use crate::options::Keying;

/// Adds `lines` to `set`: true at each line whose key was not in the set
/// (the first line of its key), false for duplicates, invalid lines and
/// `None`.
pub fn add(set: &mut SeenSet, lines: &[Line<'_>]) -> Vec<bool> {
    set.add(lines).into_iter().map(Verdict::is_new).collect()
}

/// [`add`] on a new set: the first line of each key within one batch.
pub fn first_of_each_key(k: &Keying, lines: &[Line<'_>]) -> Vec<bool> {
    add(&mut SeenSet::new(k.keyer.clone()), lines)
}
