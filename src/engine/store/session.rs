//! The store as a run's prior set: lookups on a snapshot of the live runs,
//! the run's new keys collected for the commit that follows it, and the
//! figures `--stats` shows.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::additions::Additions;
use super::error::StoreError;
use super::run_file::RunFile;

/// What a run asked of the store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Keys looked up (the run's first-seen keys).
    pub lookups: u64,
    /// Of those, keys the store held.
    pub known: u64,
    /// Keys handed over for the commit.
    pub added: u64,
    /// Time spent in lookups, summed over threads.
    pub lookup_time: Duration,
}

/// A run's view of a store: see [`SeenStore::session`](super::SeenStore::session).
#[derive(Debug)]
pub struct StoreSession {
    runs: Vec<Arc<RunFile>>,
    additions: Option<Mutex<Option<Additions>>>,
    lookups: AtomicU64,
    known: AtomicU64,
    added: AtomicU64,
    nanos: AtomicU64,
}

impl StoreSession {
    pub(super) fn new(runs: Vec<Arc<RunFile>>, additions: Option<Additions>) -> Self {
        Self {
            runs,
            additions: additions.map(|a| Mutex::new(Some(a))),
            lookups: AtomicU64::new(0),
            known: AtomicU64::new(0),
            added: AtomicU64::new(0),
            nanos: AtomicU64::new(0),
        }
    }

    /// The keys collected for the commit (once; `None` for a read-only
    /// session).
    pub fn take_additions(&self) -> Option<Additions> {
        self.additions
            .as_ref()
            .and_then(|m| m.lock().unwrap_or_else(PoisonError::into_inner).take())
    }

    /// What the run asked so far.
    pub fn stats(&self) -> SessionStats {
        SessionStats {
            lookups: self.lookups.load(Ordering::Relaxed),
            known: self.known.load(Ordering::Relaxed),
            added: self.added.load(Ordering::Relaxed),
            lookup_time: Duration::from_nanos(self.nanos.load(Ordering::Relaxed)),
        }
    }
}

impl StoreSession {
    /// Sets `found[i]` when the store holds `fps[i]` (`fps` ascending),
    /// counting the lookups for [`stats`](Self::stats).
    ///
    /// # Errors
    /// A run file that cannot be read or is damaged.
    pub fn lookup_sorted(&self, fps: &[u128], found: &mut [bool]) -> Result<(), StoreError> {
        let started = Instant::now();
        super::contains_in(&self.runs, fps, found)?;
        let known = found.iter().filter(|&&f| f).count() as u64;
        self.lookups.fetch_add(fps.len() as u64, Ordering::Relaxed);
        self.known.fetch_add(known, Ordering::Relaxed);
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.nanos.fetch_add(nanos, Ordering::Relaxed);
        Ok(())
    }

    /// Collects keys the store does not hold for the commit (nothing for a
    /// read-only session).
    ///
    /// # Errors
    /// The spill file of the additions cannot be written.
    pub fn collect(&self, fps: &[u128]) -> Result<(), StoreError> {
        let Some(additions) = &self.additions else {
            return Ok(());
        };
        self.added.fetch_add(fps.len() as u64, Ordering::Relaxed);
        let mut guard = additions.lock().unwrap_or_else(PoisonError::into_inner);
        match guard.as_mut() {
            Some(a) => a.push(fps),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Access, SeenStore};
    use crate::engine::PriorKeys;

    #[test]
    fn session_looks_up_counts_and_collects() {
        let dir = tempfile::tempdir().unwrap();
        let config = "rfc".parse().unwrap();
        let mut store = SeenStore::create(dir.path(), &config).unwrap();
        let mut a = store.additions();
        a.push(&[10, 20, 30]).unwrap();
        store.commit(a).unwrap();
        let session = store.session(true);
        let mut found = vec![false; 4];
        session
            .contains_sorted(&[5, 10, 25, 30], &mut found)
            .unwrap();
        assert_eq!(found, [false, true, false, true]);
        session.add_new(&[5, 25]).unwrap();
        let s = session.stats();
        assert_eq!((s.lookups, s.known, s.added), (4, 2, 2));
        let additions = session.take_additions().unwrap();
        assert!(session.take_additions().is_none());
        store.commit(additions).unwrap();
        assert_eq!(store.len(), 5);
        // Read-only: nothing is collected.
        let reader = SeenStore::open(dir.path(), Access::ReadOnly).unwrap();
        let session = reader.session(true);
        session.add_new(&[1]).unwrap();
        assert!(session.take_additions().is_none());
    }
}
