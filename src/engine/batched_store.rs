//! A seen-store fed batch after batch (the Python `SeenStore`): each batch
//! is answered against everything committed and everything added since,
//! and a commit makes the batches' new keys durable at once.

use core::fmt;

use super::seen::{OverLimit, SeenSet};
use super::store::{Additions, CommitReport, SeenStore, StoreError};
use crate::uri::key::Keyer;

/// Why a batch was not added.
#[derive(Debug)]
pub enum BatchError {
    /// The keys added since the last commit would pass the memory limit:
    /// nothing of the batch was added (commit, then add it again).
    OverLimit(OverLimit),
    /// The store could not be read, or its additions could not be written.
    Store(StoreError),
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BatchError::OverLimit(e) => write!(f, "{e} (commit more often)"),
            BatchError::Store(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for BatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BatchError::OverLimit(_) => None,
            BatchError::Store(e) => e.source(),
        }
    }
}

/// A [`SeenStore`] with the keys added since its last commit, which the
/// store itself holds only once committed.
///
/// ```
/// # #[cfg(feature = "engine")] {
/// use urikey::engine::BatchedStore;
/// use urikey::engine::store::SeenStore;
/// use urikey::uri::key::KeyConfig;
///
/// let dir = tempfile::tempdir()?;
/// let config: KeyConfig = "crawl".parse()?;
/// let store = SeenStore::open_or_create(&dir.path().join("seen"), &config)?;
/// let mut batches = BatchedStore::new(store, config.keyer(), None);
/// assert_eq!(batches.add_fingerprints(&[1, 2, 1])?, [true, true, false]);
/// assert_eq!(batches.contains_fingerprints(&[2, 3])?, [true, false]);
/// assert_eq!(batches.commit()?.added, 2);
/// assert_eq!(batches.add_fingerprints(&[2, 3])?, [false, true]);
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct BatchedStore {
    store: SeenStore,
    keyer: Keyer,
    memory_limit: Option<u64>,
    /// Every key added since the last commit (the store holds only
    /// committed keys).
    pending: SeenSet,
    /// Of those, the keys the store lacks: the next commit's (`None` when
    /// the store was opened read-only).
    additions: Option<Additions>,
    /// Keys new to the store added since the last commit.
    added: u64,
}

impl BatchedStore {
    /// Feeds `store` (opened for writing, or read-only for lookups alone);
    /// the keys added between commits are held in memory, within
    /// `memory_limit` bytes when given.
    pub fn new(store: SeenStore, keyer: Keyer, memory_limit: Option<u64>) -> Self {
        let additions = store.is_writable().then(|| store.additions());
        BatchedStore {
            pending: SeenSet::new(keyer.clone()).with_memory_limit(memory_limit),
            store,
            keyer,
            memory_limit,
            additions,
            added: 0,
        }
    }

    /// The store.
    pub fn store(&self) -> &SeenStore {
        &self.store
    }

    /// True when nothing can be added (the store was opened read-only).
    pub fn is_read_only(&self) -> bool {
        self.additions.is_none()
    }

    /// Keys committed plus keys added since.
    pub fn len(&self) -> u64 {
        self.store.len() + self.added
    }

    /// True when the store holds no key and none was added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds fingerprints (as [`Keyer::fingerprint`] makes them), in order:
    /// `true` at each that neither the store nor an earlier one (of this
    /// batch or one added since the last commit) has. A read-only store
    /// answers the same, and holds the new keys in memory only.
    ///
    /// # Errors
    /// [`BatchError::OverLimit`] (nothing was added);
    /// [`BatchError::Store`] when the store cannot be read or the additions
    /// cannot be written: then the keys added since the last commit are
    /// forgotten, new again to later batches (never "seen" without being
    /// stored).
    pub fn add_fingerprints(&mut self, fps: &[u128]) -> Result<Vec<bool>, BatchError> {
        let first = self
            .pending
            .add_fingerprints(fps)
            .map_err(BatchError::OverLimit)?;
        let firsts: Vec<u128> = fps
            .iter()
            .zip(&first)
            .filter(|(_, f)| **f)
            .map(|(fp, _)| *fp)
            .collect();
        let known = match self.store.contains_each(&firsts) {
            Ok(known) => known,
            Err(e) => return Err(self.forget_pending(e)),
        };
        let new: Vec<u128> = firsts
            .iter()
            .zip(&known)
            .filter(|(_, k)| !**k)
            .map(|(fp, _)| *fp)
            .collect();
        if let Some(a) = self.additions.as_mut() {
            if let Err(e) = a.push(&new) {
                return Err(self.forget_pending(e));
            }
        }
        self.added += new.len() as u64;
        // Each first sighting in order, answered by the store.
        let mut answers = known.iter();
        Ok(first
            .iter()
            .map(|&f| f && answers.next().is_some_and(|k| !k))
            .collect())
    }

    /// After a batch failed half way: the keys added since the last commit
    /// are forgotten, so that none is "seen" that the next commit would not
    /// store (those already in the additions are still committed).
    fn forget_pending(&mut self, e: StoreError) -> BatchError {
        self.pending = SeenSet::new(self.keyer.clone()).with_memory_limit(self.memory_limit);
        BatchError::Store(e)
    }

    /// True at each fingerprint the store holds or that was added since the
    /// last commit; nothing is added.
    ///
    /// # Errors
    /// A run file that cannot be read or is damaged.
    pub fn contains_fingerprints(&self, fps: &[u128]) -> Result<Vec<bool>, StoreError> {
        let known = self.store.contains_each(fps)?;
        Ok(fps
            .iter()
            .zip(known)
            .map(|(fp, k)| k || self.pending.contains_fingerprint(*fp))
            .collect())
    }

    /// Makes the keys added since the last commit part of the store,
    /// durably (see [`SeenStore::commit`]); the next batches start afresh.
    ///
    /// # Errors
    /// [`StoreError::ReadOnly`] for a read-only store; else as
    /// [`SeenStore::commit`]. A commit that failed leaves the store at its
    /// last commit and forgets the keys added since, so that they are new
    /// again to the next batches (never "seen" without being stored).
    pub fn commit(&mut self) -> Result<CommitReport, StoreError> {
        let Some(additions) = self.additions.take() else {
            return Err(StoreError::ReadOnly {
                dir: self.store.dir().to_owned(),
            });
        };
        let next = self.store.additions();
        let report = self.store.commit(additions);
        self.additions = Some(next);
        self.pending = SeenSet::new(self.keyer.clone()).with_memory_limit(self.memory_limit);
        self.added = 0;
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::store::Access;
    use crate::uri::key::KeyConfig;

    #[test]
    fn batched_store_answers_for_pending_and_committed_keys() {
        let dir = tempfile::tempdir().unwrap();
        let config: KeyConfig = "rfc".parse().unwrap();
        let store = SeenStore::create(dir.path(), &config).unwrap();
        let mut b = BatchedStore::new(store, config.keyer(), None);
        assert_eq!(
            b.add_fingerprints(&[7, 8, 7, 9]).unwrap(),
            [true, true, false, true]
        );
        assert_eq!(b.len(), 3);
        assert_eq!(b.commit().unwrap().added, 3);
        // Committed keys are old; a key twice in a batch is new once.
        assert_eq!(
            b.add_fingerprints(&[8, 10, 10]).unwrap(),
            [false, true, false]
        );
        // A committed key twice, a pending one, a new one twice.
        assert_eq!(
            b.add_fingerprints(&[7, 7, 10, 12, 12]).unwrap(),
            [false, false, false, true, false]
        );
        assert_eq!(
            b.contains_fingerprints(&[7, 10, 11]).unwrap(),
            [true, true, false]
        );
        assert_eq!(b.len(), 5);
        drop(b);

        // Read-only: answers as a writer would, holds the new keys in
        // memory, commits nothing.
        let store = SeenStore::open(dir.path(), Access::ReadOnly).unwrap();
        let mut r = BatchedStore::new(store, config.keyer(), None);
        assert!(r.is_read_only());
        assert_eq!(
            r.add_fingerprints(&[7, 12, 12]).unwrap(),
            [false, true, false]
        );
        assert_eq!(r.len(), 4);
        assert!(matches!(r.commit(), Err(StoreError::ReadOnly { .. })));
    }

    #[test]
    fn batched_store_forgets_pending_keys_when_a_batch_fails_on_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let config: KeyConfig = "rfc".parse().unwrap();
        let store = SeenStore::create(dir.path(), &config).unwrap();
        let mut b = BatchedStore::new(store, config.keyer(), None);
        let fps: Vec<u128> = (1..=1000u128)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835))
            .collect();
        b.add_fingerprints(&fps).unwrap();
        b.commit().unwrap();
        drop(b);
        // Every stored key damaged: a lookup fails its block's checksum.
        let run = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "ukr"))
            .unwrap();
        let mut bytes = std::fs::read(&run).unwrap();
        for b in &mut bytes[64..64 + 16 * 1000] {
            *b ^= 0x5a;
        }
        std::fs::write(&run, bytes).unwrap();
        let store = SeenStore::open(dir.path(), Access::Write).unwrap();
        let mut b = BatchedStore::new(store, config.keyer(), None);
        let seven = 7u128.wrapping_mul(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        assert!(matches!(
            b.add_fingerprints(&[seven]),
            Err(BatchError::Store(StoreError::Corrupt { .. }))
        ));
        // Not "seen" without being stored: the next batch asks again.
        assert!(b.pending.is_empty());
        assert_eq!(b.len(), 1000);
    }

    #[test]
    fn batched_store_refuses_a_batch_over_its_memory_limit_whole() {
        let dir = tempfile::tempdir().unwrap();
        let config: KeyConfig = "rfc".parse().unwrap();
        let store = SeenStore::create(dir.path(), &config).unwrap();
        let mut b = BatchedStore::new(store, config.keyer(), Some(1));
        let fps: Vec<u128> = (1..=1000).collect();
        assert!(matches!(
            b.add_fingerprints(&fps),
            Err(BatchError::OverLimit(_))
        ));
        assert!(b.is_empty());
        assert_eq!(b.contains_fingerprints(&[1]).unwrap(), [false]);
    }
}
