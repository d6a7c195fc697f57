//! A Redis set as a run's prior keys (`dedup --state redis://...`), with
//! the disk store's contract: lookups during the run, the run's new keys
//! kept in memory and added only by [`RedisSession::commit`], once the
//! output is complete. A run killed before adds nothing.
//!
//! Each keying thread looks its batches up on a connection of its own when
//! it finds one free (one a thread): while one thread's batch is with Redis,
//! another's is encoded or read.
//!
//! Two runs at once on one set: each prints the lines new to the set as it
//! was when the run looked them up, so a key new to both is printed by
//! both; the second commit finds it added and counts it in
//! [`RedisCommit::taken_meanwhile`]. (A claim per line, as `add_each` makes,
//! would print it once, but would add keys whose output a killed run never
//! wrote.)

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use super::super::error::Error;
use super::super::prior::PriorKeys;
use super::error::RedisSetError;
use super::RedisSeenSet;

/// What a run asked of the set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedisSessionStats {
    /// Keys looked up (the run's first-seen keys).
    pub lookups: u64,
    /// Of those, keys the set held.
    pub known: u64,
    /// Keys kept for the commit.
    pub added: u64,
    /// Time spent in lookups, summed over threads.
    pub lookup_time: Duration,
}

/// What a commit did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedisCommit {
    /// Keys the commit added.
    pub added: u64,
    /// Keys of the run that another client added between this run's lookup
    /// and its commit (printed by both).
    pub taken_meanwhile: u64,
    /// The set's size after the commit.
    pub keys: u64,
}

/// A run's view of a set. See the module docs.
#[derive(Debug)]
pub struct RedisSession {
    /// Connections to the set; the first makes the commit.
    sets: Vec<Mutex<RedisSeenSet>>,
    /// Where a lookup starts looking for a free connection.
    next: AtomicUsize,
    collect: bool,
    new: Mutex<Vec<u128>>,
    lookups: AtomicU64,
    known: AtomicU64,
    nanos: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl RedisSession {
    /// A session on `set`; `collect` keeps the new keys for a commit.
    pub fn new(set: RedisSeenSet, collect: bool) -> Self {
        Self {
            sets: vec![Mutex::new(set)],
            next: AtomicUsize::new(0),
            collect,
            new: Mutex::new(Vec::new()),
            lookups: AtomicU64::new(0),
            known: AtomicU64::new(0),
            nanos: AtomicU64::new(0),
        }
    }

    /// A session on `set` and up to `connections - 1` more connections to
    /// it (fewer when its transport cannot make them).
    ///
    /// # Errors
    /// A failure to connect.
    pub fn with_connections(
        set: RedisSeenSet,
        collect: bool,
        connections: usize,
    ) -> Result<Self, RedisSetError> {
        let mut more = Vec::new();
        for _ in 1..connections {
            match set.another() {
                Some(other) => more.push(Mutex::new(other?)),
                None => break,
            }
        }
        let mut me = Self::new(set, collect);
        me.sets.extend(more);
        Ok(me)
    }

    /// Connections the session holds.
    pub fn connections(&self) -> usize {
        self.sets.len()
    }

    /// A free connection, or the next one to be freed.
    fn any_set(&self) -> MutexGuard<'_, RedisSeenSet> {
        let n = self.sets.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        for k in 0..n {
            match self.sets[(start + k) % n].try_lock() {
                Ok(set) => return set,
                Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        lock(&self.sets[start % n])
    }

    /// What the run asked so far.
    pub fn stats(&self) -> RedisSessionStats {
        RedisSessionStats {
            lookups: self.lookups.load(Ordering::Relaxed),
            known: self.known.load(Ordering::Relaxed),
            added: lock(&self.new).len() as u64,
            lookup_time: Duration::from_nanos(self.nanos.load(Ordering::Relaxed)),
        }
    }

    /// Bytes the kept keys take.
    pub fn buffer_bytes(&self) -> u64 {
        (lock(&self.new).capacity() * 16) as u64
    }

    /// Adds the run's new keys to the set.
    ///
    /// # Errors
    /// [`RedisSetError::OutOfMemory`] and connection failures (some of the
    /// keys may be added: a next run prints the others again).
    pub fn commit(&self) -> Result<RedisCommit, RedisSetError> {
        let fps = std::mem::take(&mut *lock(&self.new));
        let mut set = lock(&self.sets[0]);
        let added = set.add_all(&fps)?;
        let keys = set.key_count()?;
        Ok(RedisCommit {
            added,
            taken_meanwhile: fps.len() as u64 - added.min(fps.len() as u64),
            keys,
        })
    }

    /// The set's size.
    ///
    /// # Errors
    /// Connection failures.
    pub fn key_count(&self) -> Result<u64, RedisSetError> {
        lock(&self.sets[0]).key_count()
    }

    /// The set's URL without the password.
    pub fn url(&self) -> String {
        lock(&self.sets[0]).url().to_owned()
    }
}

impl PriorKeys for RedisSession {
    fn contains_sorted(&self, fps: &[u128], found: &mut [bool]) -> Result<(), Error> {
        let started = Instant::now();
        self.any_set()
            .contains_sorted(fps, found)
            .map_err(Error::Redis)?;
        self.lookups.fetch_add(fps.len() as u64, Ordering::Relaxed);
        let known = found.iter().filter(|&&f| f).count() as u64;
        self.known.fetch_add(known, Ordering::Relaxed);
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.nanos.fetch_add(nanos, Ordering::Relaxed);
        Ok(())
    }

    fn add_new(&self, fps: &[u128]) -> Result<(), Error> {
        if self.collect {
            lock(&self.new).extend_from_slice(fps);
        }
        Ok(())
    }
}
