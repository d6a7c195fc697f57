//! Keys known before a run: a seen-store (or any set of fingerprints) that
//! a run consults and adds to, so that deduplication spans many runs.
//!
//! With [`Config::prior`](super::Config::prior) set, a run asks the prior
//! set about every key its own seen-set finds first: in phase 2 for the
//! keys of a batch in memory, and when a spilled run resolves a partition.
//! So the lookups grow with the run's distinct keys, not with its lines,
//! and they come sorted by fingerprint, a shard's (or a partition's) at a
//! time. A key the prior set holds is a duplicate from its first line on;
//! every other first-seen key is handed to [`PriorKeys::add_new`]. The
//! output is then what one run over (everything the prior set was fed,
//! then this input) writes for this input. With [`Select::Counts`] the
//! keys the prior set holds are left out, and a count is the number of
//! this run's lines that have the key.
//!
//! [`Select::Counts`]: super::Select::Counts

use core::fmt;

use super::error::Error;
use super::store::StoreSession;

/// A set of fingerprints known before the run. Called from the run's
/// worker threads at once.
pub trait PriorKeys: Send + Sync + fmt::Debug {
    /// Sets `found[i]` when the set holds `fps[i]`; `fps` is sorted
    /// ascending and `found` starts all false.
    ///
    /// # Errors
    /// A failure of the set ([`Error::Store`]): the run stops.
    fn contains_sorted(&self, fps: &[u128], found: &mut [bool]) -> Result<(), Error>;

    /// Keys the run found first that the set does not hold (each once per
    /// run, in no particular order), for the caller to commit once the run
    /// has succeeded.
    ///
    /// # Errors
    /// A failure of the set ([`Error::Store`]): the run stops.
    fn add_new(&self, fps: &[u128]) -> Result<(), Error>;
}

/// A seen-store as a run's prior set: the store itself knows nothing of
/// runs (it depends on no other room), so its seam is written here.
impl PriorKeys for StoreSession {
    fn contains_sorted(&self, fps: &[u128], found: &mut [bool]) -> Result<(), Error> {
        self.lookup_sorted(fps, found).map_err(Error::Store)
    }

    fn add_new(&self, fps: &[u128]) -> Result<(), Error> {
        self.collect(fps).map_err(Error::Store)
    }
}
