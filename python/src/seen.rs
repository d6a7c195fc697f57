//! "Seen before?" over keys: the engine's streaming seen-set, so a
//! `Deduplicator` keeps a key in the same fingerprint table as the CLI's
//! `dedup` (about 17 bytes per key) with the same collision bound.
//!
//! An empty line is a blank line, as `urikey dedup` reads it: never kept,
//! never invalid, whatever the relative-reference rule (the empty string is
//! a valid relative reference, which `allow_relative=True` would key).

use urikey::engine::{OverLimit, SeenSet, Verdict};

use crate::keys::Line;
use crate::options::Keying;

/// `lines` with empty lines as missing ones, borrowed when there are none.
fn without_blanks<'a, 'b>(lines: &'b [Line<'a>]) -> std::borrow::Cow<'b, [Line<'a>]> {
    if lines.iter().any(|l| l.is_some_and(<[u8]>::is_empty)) {
        lines
            .iter()
            .map(|l| l.filter(|b| !b.is_empty()))
            .collect::<Vec<_>>()
            .into()
    } else {
        lines.into()
    }
}

/// Adds `lines` to `set`: true at each line whose key was not in the set
/// (the first line of its key), false for duplicates, invalid lines, blank
/// lines and `None`.
///
/// # Errors
/// The set would pass its memory limit (nothing was added).
pub fn add(set: &mut SeenSet, lines: &[Line<'_>]) -> Result<Vec<bool>, OverLimit> {
    let lines = without_blanks(lines);
    Ok(set.add(&lines)?.into_iter().map(Verdict::is_new).collect())
}

/// [`add`] on a new set without a limit: the first line of each key within
/// one batch (the set takes less memory than the batch itself).
pub fn first_of_each_key(k: &Keying, lines: &[Line<'_>]) -> Vec<bool> {
    let mut set = SeenSet::new(k.keyer.clone());
    // A set without a limit refuses nothing.
    add(&mut set, lines).unwrap_or_default()
}
