//! A seen-store: a directory holding the 128-bit fingerprint of every key
//! ever added, for deduplication across runs (a crawler's frontier, fed
//! batch after batch, restarted at will), made for more keys than memory.
//!
//! # Layout
//!
//! ```text
//! DIR/MANIFEST             the live runs, the key configuration, the commit counter
//! DIR/run-<commit>-<n>.ukr immutable sorted runs of fingerprints (see `run_file.rs`)
//! DIR/LOCK                 the writer lock (see `lock.rs`)
//! DIR/MANIFEST.tmp, DIR/tmp-*   left only by an interrupted writer
//! ```
//!
//! A store is a set of sorted, disjoint, immutable runs (after the sieve and
//! DRUM crawlers' sorted batches and LSM trees' runs): each commit writes
//! the new keys as one more run, and small runs are merged as they
//! accumulate (`compact.rs`), so a store has a handful of runs. Each run
//! keeps a directory of its keys' top bits and a checksum per 1 KiB block
//! in memory (about 0.4 bytes per key), and its keys mapped from disk: a
//! lookup reads one entry of the directory and 512 bytes of keys (see
//! `run_file.rs`). Lookups come in batches sorted by fingerprint.
//!
//! # Commits
//!
//! [`SeenStore::commit`]:
//! 1. writes the new run file (and any merged one) and syncs it;
//! 2. syncs the directory, so that the new files' names are on disk;
//! 3. writes the new manifest to `MANIFEST.tmp` and syncs it;
//! 4. renames it over `MANIFEST` (the commit point) and syncs the directory;
//! 5. removes the run files the new manifest no longer lists.
//!
//! A crash (a `SIGKILL`, a power loss) before step 4 leaves the old
//! manifest, which names only old, complete files: the store is at its last
//! commit, and the new files are orphans that the next writer removes. A
//! crash after it leaves the new manifest, whose files were synced before it
//! was written. A reader sees one manifest or the other, never a mix.
//!
//! # Key configuration
//!
//! The manifest records the configuration the store was made with (as given,
//! and its [`KeyConfig::identity`](crate::uri::key::KeyConfig::identity), which decides fingerprints) and the
//! crate's [`KEY_VERSION`](crate::uri::key::KEY_VERSION). Opening a store for another configuration, or
//! with another key version, is an error naming both: keys of two
//! configurations in one store would silently break deduplication.
//!
//! # Collisions
//!
//! The full 128-bit XXH3 fingerprint is stored: two different keys are taken
//! for one only if their fingerprints collide, with probability at most about
//! n²/2¹²⁹ over a store of n keys (1.5 × 10⁻¹⁹ for 10¹⁰ keys). A run's own
//! seen-set keeps 105 bits (see the `engine` docs), which bounds the whole at
//! n²/2¹⁰⁶ for the keys of one run.

mod additions;
mod commit;
mod compact;
mod durable;
mod error;
/// Test hooks for the fuzz targets (feature `__internal-testing`); not a public API.
#[cfg(feature = "__internal-testing")]
#[doc(hidden)]
pub mod fuzzing;
mod lock;
mod lookup;
mod manifest;
mod open;
mod run_file;
mod session;
mod verify;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use additions::{Additions, DEFAULT_BUFFER_BYTES};
pub use compact::MAX_RUNS;
#[doc(hidden)]
#[cfg(feature = "__internal-testing")]
#[doc(hidden)]
pub use durable::PAUSE_ENV;
pub use error::StoreError;
pub use open::check_is_store;
pub use session::{SessionStats, StoreSession};
pub use verify::{verify, VerifyReport};

use crate::uri::key::Identity;
use lock::WriterLock;
use lookup::{contains_each, contains_in};
use manifest::{Manifest, RunEntry};
use run_file::RunFile;

/// How a store is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Lookups and commits; takes the writer lock.
    Write,
    /// Lookups only; takes no lock, and may run beside a writer.
    ReadOnly,
}

/// One run of a store, for [`StoreInfo`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunInfo {
    /// The file name.
    pub name: String,
    /// Its fingerprints.
    pub keys: u64,
    /// Its size in bytes.
    pub bytes: u64,
}

/// What a store holds (`urikey state info`).
#[derive(Clone, Debug)]
pub struct StoreInfo {
    /// Distinct fingerprints.
    pub keys: u64,
    /// Bytes of run files.
    pub bytes: u64,
    /// Number of commits so far.
    pub commits: u64,
    /// The key configuration as given when the store was made.
    pub config: String,
    /// Its identity (what decides fingerprints).
    pub identity: Identity,
    /// The key format recorded with it.
    pub key_format: String,
    /// The key version of the fingerprints.
    pub key_version: u32,
    /// The runs, largest first.
    pub runs: Vec<RunInfo>,
    /// Bytes the open store keeps in memory (directories, checksums).
    pub index_bytes: u64,
    /// The writer lock's holder, when it is held by another open store.
    pub locked_by: Option<String>,
}

/// What a commit did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommitReport {
    /// Fingerprints added.
    pub added: u64,
    /// Runs merged into one (0 when none were).
    pub merged_runs: usize,
    /// The commit number (unchanged when nothing was committed).
    pub commit: u64,
    /// Distinct fingerprints after the commit.
    pub keys: u64,
}

/// A seen-store. See the module docs.
#[derive(Debug)]
pub struct SeenStore {
    dir: PathBuf,
    manifest: Manifest,
    /// The live runs, largest first (most lookups end in the first).
    runs: Vec<Arc<RunFile>>,
    lock: Option<WriterLock>,
    buffer_bytes: usize,
}

/// A live run: its manifest entry and the open file.
type Live = (RunEntry, Arc<RunFile>);

impl SeenStore {
    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Distinct fingerprints in the store.
    pub fn len(&self) -> u64 {
        self.manifest.keys()
    }

    /// True when the store holds no fingerprint.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The key configuration the store was made with, as given.
    pub fn config(&self) -> &str {
        &self.manifest.config
    }

    /// True when opened for writing.
    pub fn is_writable(&self) -> bool {
        self.lock.is_some()
    }

    /// What the store holds.
    pub fn info(&self) -> StoreInfo {
        let m = &self.manifest;
        StoreInfo {
            keys: m.keys(),
            bytes: m.bytes(),
            commits: m.commit,
            config: m.config.clone(),
            identity: m.identity.clone(),
            key_format: m.key_format.clone(),
            key_version: m.key_version,
            runs: self
                .runs
                .iter()
                .map(|r| RunInfo {
                    name: file_name(r.path()),
                    keys: r.key_count(),
                    bytes: r.layout().file_bytes(),
                })
                .collect(),
            index_bytes: self.runs.iter().map(|r| r.index_bytes()).sum(),
            locked_by: if self.lock.is_some() {
                None
            } else {
                lock::holder(&self.dir)
            },
        }
    }

    /// Sets `found[i]` when the store holds `fps[i]` (`fps` sorted
    /// ascending: each run is then read in order).
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] when a block read fails its checksum.
    pub fn contains_sorted(&self, fps: &[u128], found: &mut [bool]) -> Result<(), StoreError> {
        contains_in(&self.runs, fps, found)
    }

    /// Whether the store holds each of `fps` (in any order), in their
    /// order: they are sorted and looked up on rayon's threads, so a large
    /// batch in any order costs about what a sorted one does.
    ///
    /// # Errors
    /// As [`contains_sorted`](Self::contains_sorted).
    pub fn contains_each(&self, fps: &[u128]) -> Result<Vec<bool>, StoreError> {
        contains_each(&self.runs, fps)
    }

    /// Whether the store holds `fp`.
    ///
    /// # Errors
    /// As [`contains_sorted`](Self::contains_sorted).
    pub fn contains(&self, fp: u128) -> Result<bool, StoreError> {
        for r in &self.runs {
            if r.contains(fp)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Sets the memory additions take before they go to temporary files.
    pub fn set_buffer_bytes(&mut self, bytes: usize) {
        self.buffer_bytes = bytes;
    }

    /// An empty set of additions for the next commit.
    pub fn additions(&self) -> Additions {
        Additions::new(&self.dir, self.buffer_bytes)
    }

    /// The store as a run's prior set (see [`PriorKeys`]): a snapshot of
    /// the live runs; `collect` keeps the new keys for a commit (a store
    /// opened for writing only).
    ///
    /// [`PriorKeys`]: super::PriorKeys
    pub fn session(&self, collect: bool) -> Arc<StoreSession> {
        let additions = (collect && self.lock.is_some()).then(|| self.additions());
        Arc::new(StoreSession::new(self.runs.clone(), additions))
    }

    /// Every fingerprint, ascending, passed to `each`; returns how many.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] when a block fails its checksum; the first
    /// error of `each` is returned as [`StoreError::Io`] of `what`.
    pub fn for_each(
        &self,
        what: &Path,
        mut each: impl FnMut(u128) -> std::io::Result<()>,
    ) -> Result<u64, StoreError> {
        let runs: Vec<&RunFile> = self.runs.iter().map(|r| &**r).collect();
        let mut u = compact::Union::new(&runs, runs.len())?;
        let mut n = 0u64;
        while let Some((fp, _, _)) = u.next_fp()? {
            each(fp).map_err(|e| StoreError::io(what, e))?;
            n += 1;
        }
        Ok(n)
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::manifest::{run_name, MANIFEST, MANIFEST_TMP};
    use super::*;
    use crate::uri::key::{KeyConfig, KEY_VERSION};

    fn config() -> KeyConfig {
        "crawl".parse().unwrap()
    }

    fn fps(range: std::ops::Range<u64>) -> Vec<u128> {
        range
            .map(|i| crate::uri::key::fingerprint(&i.to_le_bytes()))
            .collect()
    }

    fn commit(store: &mut SeenStore, keys: &[u128]) -> CommitReport {
        let mut a = store.additions();
        a.push(keys).unwrap();
        store.commit(a).unwrap()
    }

    fn holds(store: &SeenStore, keys: &[u128]) -> Vec<bool> {
        let mut sorted: Vec<(u128, usize)> = keys.iter().copied().zip(0..).collect();
        sorted.sort_unstable();
        let fps: Vec<u128> = sorted.iter().map(|p| p.0).collect();
        let mut found = vec![false; fps.len()];
        store.contains_sorted(&fps, &mut found).unwrap();
        let mut out = vec![false; keys.len()];
        for ((_, i), f) in sorted.iter().zip(found) {
            out[*i] = f;
        }
        out
    }

    #[test]
    fn store_commits_accumulate_and_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let mut s = SeenStore::create(&path, &config()).unwrap();
        assert!(s.is_empty());
        let r = commit(&mut s, &fps(0..1000));
        assert_eq!((r.added, r.commit, r.keys), (1000, 1, 1000));
        let r = commit(&mut s, &fps(1000..1100));
        assert_eq!((r.added, r.commit, r.keys), (100, 2, 1100));
        assert!(holds(&s, &fps(0..1100)).iter().all(|&f| f));
        assert!(holds(&s, &fps(1100..2000)).iter().all(|&f| !f));
        // Nothing to add: no commit.
        let r = s.commit(s.additions()).unwrap();
        assert_eq!(r.commit, 2);
        drop(s);
        let s = SeenStore::open_for(&path, &config(), Access::ReadOnly).unwrap();
        assert_eq!(s.len(), 1100);
        assert!(s.contains(fps(5..6)[0]).unwrap());
        assert_eq!(s.info().commits, 2);
        let mut all = Vec::new();
        s.for_each(Path::new("-"), |fp| {
            all.push(fp);
            Ok(())
        })
        .unwrap();
        let mut want = fps(0..1100);
        want.sort_unstable();
        assert_eq!(all, want);
    }

    #[test]
    fn store_contains_each_answers_in_any_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = SeenStore::create(dir.path(), &config()).unwrap();
        assert_eq!(s.contains_each(&fps(0..3)).unwrap(), [false; 3]);
        commit(&mut s, &fps(0..30_000));
        commit(&mut s, &fps(30_000..40_000));
        // Unsorted, repeated, more than one piece, half of them held.
        let mut asked = fps(20_000..60_000);
        asked.extend(fps(39_999..40_001));
        let got = s.contains_each(&asked).unwrap();
        assert_eq!(got, holds(&s, &asked));
        assert_eq!(got.iter().filter(|&&f| f).count(), 20_001);
    }

    #[test]
    fn store_runs_stay_few_and_compact_to_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = SeenStore::create(dir.path(), &config()).unwrap();
        for i in 0..40u64 {
            commit(&mut s, &fps(i * 50..(i + 1) * 50));
            assert!(s.runs.len() <= 7, "{}", s.runs.len());
        }
        assert_eq!(s.len(), 2000);
        let r = s.compact().unwrap();
        assert!(r.merged_runs >= 2);
        assert_eq!(s.runs.len(), 1);
        assert_eq!(s.len(), 2000);
        assert!(holds(&s, &fps(0..2000)).iter().all(|&f| f));
        // Only the manifest's files are left.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".ukr"))
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(verify(dir.path()).is_ok());
    }

    #[test]
    fn store_refuses_another_configuration_and_key_version() {
        let dir = tempfile::tempdir().unwrap();
        drop(SeenStore::create(dir.path(), &config()).unwrap());
        let rfc: KeyConfig = "rfc".parse().unwrap();
        let e = SeenStore::open_for(dir.path(), &rfc, Access::ReadOnly).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, StoreError::ConfigMismatch { .. }), "{msg}");
        assert!(msg.contains("`crawl`") && msg.contains("`rfc`"), "{msg}");
        // The same identity in another spelling, or another key format: fine.
        let same: KeyConfig = "crawl +remove-fragment key=surt".parse().unwrap();
        SeenStore::open_for(dir.path(), &same, Access::Write).unwrap();
        // An older key version.
        let mut m = Manifest::read(dir.path()).unwrap();
        m.key_version = KEY_VERSION - 1;
        m.write(dir.path()).unwrap();
        let e = SeenStore::open_for(dir.path(), &config(), Access::ReadOnly).unwrap_err();
        assert!(e.to_string().contains("rebuild"), "{e}");
        // Info still opens it.
        let s = SeenStore::open(dir.path(), Access::ReadOnly).unwrap();
        assert_eq!(s.info().key_version, KEY_VERSION - 1);
    }

    #[test]
    fn store_create_needs_an_empty_place_and_open_needs_a_store() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x"), b"x").unwrap();
        assert!(matches!(
            SeenStore::create(dir.path(), &config()),
            Err(StoreError::Exists { .. })
        ));
        let e = SeenStore::open(dir.path(), Access::ReadOnly).unwrap_err();
        assert!(matches!(e, StoreError::NotAStore { .. }), "{e}");
        let e = SeenStore::open(dir.path(), Access::Write).unwrap_err();
        assert!(matches!(e, StoreError::NotAStore { .. }), "{e}");
        assert!(
            !dir.path().join(lock::LOCK).exists(),
            "no lock left in a foreign directory"
        );
        let e = SeenStore::open(&dir.path().join("nope"), Access::ReadOnly).unwrap_err();
        assert!(matches!(e, StoreError::NotAStore { .. }), "{e}");
        // open_or_create makes one in an empty or missing directory.
        let s = SeenStore::open_or_create(&dir.path().join("new"), &config()).unwrap();
        assert!(s.is_writable());
    }

    #[test]
    fn store_left_by_a_writer_killed_while_making_it_is_made_again() {
        let dir = tempfile::tempdir().unwrap();
        // What a writer killed between its lock and its manifest leaves.
        std::fs::write(dir.path().join(lock::LOCK), b"pid 1 on host h\n").unwrap();
        std::fs::write(dir.path().join(MANIFEST_TMP), b"half").unwrap();
        let e = SeenStore::open(dir.path(), Access::ReadOnly).unwrap_err();
        assert!(
            e.to_string().contains("opening it to write makes one"),
            "{e}"
        );
        let s = SeenStore::create(dir.path(), &config()).unwrap();
        assert!(s.is_empty());
        drop(s);
        assert_eq!(SeenStore::open(dir.path(), Access::Write).unwrap().len(), 0);
        let other = tempfile::tempdir().unwrap();
        std::fs::write(other.path().join(lock::LOCK), b"").unwrap();
        assert!(SeenStore::open_or_create(other.path(), &config()).is_ok());
        // A store whose manifest is gone is damaged, not to be made again.
        let mut s = SeenStore::create(&other.path().join("s"), &config()).unwrap();
        commit(&mut s, &fps(0..10));
        drop(s);
        std::fs::remove_file(other.path().join("s").join(MANIFEST)).unwrap();
        let e = SeenStore::open_or_create(&other.path().join("s"), &config()).unwrap_err();
        assert!(e.is_corrupt(), "{e}");
        assert!(matches!(
            SeenStore::create(&other.path().join("s"), &config()),
            Err(StoreError::Exists { .. })
        ));
    }

    #[test]
    fn store_one_writer_readers_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = SeenStore::create(dir.path(), &config()).unwrap();
        let e = SeenStore::open(dir.path(), Access::Write).unwrap_err();
        assert!(matches!(e, StoreError::Locked { .. }), "{e}");
        let r = SeenStore::open(dir.path(), Access::ReadOnly).unwrap();
        assert!(r.info().locked_by.is_some());
        commit(&mut w, &fps(0..10));
        // The reader keeps its snapshot; a new one sees the commit.
        assert_eq!(r.len(), 0);
        assert_eq!(
            SeenStore::open(dir.path(), Access::ReadOnly).unwrap().len(),
            10
        );
        let mut r = r;
        assert!(matches!(
            r.commit(Additions::new(dir.path(), 0)),
            Err(StoreError::ReadOnly { .. })
        ));
        drop(w);
        SeenStore::open(dir.path(), Access::Write).unwrap();
    }

    #[test]
    fn store_merge_adds_what_the_other_lacks() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = SeenStore::create(&dir.path().join("a"), &config()).unwrap();
        let mut b = SeenStore::create(&dir.path().join("b"), &config()).unwrap();
        commit(&mut a, &fps(0..600));
        commit(&mut b, &fps(400..1000));
        commit(&mut b, &fps(1000..1200));
        let r = a.merge_from(&b).unwrap();
        assert_eq!(r.added, 600);
        assert_eq!(a.len(), 1200);
        assert!(holds(&a, &fps(0..1200)).iter().all(|&f| f));
        assert!(verify(&dir.path().join("a")).is_ok());
        let c = SeenStore::create(&dir.path().join("c"), &"rfc".parse().unwrap()).unwrap();
        assert!(matches!(
            a.merge_from(&c),
            Err(StoreError::ConfigMismatch { .. })
        ));
    }

    #[test]
    fn store_orphans_of_a_crashed_writer_are_removed_and_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = SeenStore::create(dir.path(), &config()).unwrap();
        commit(&mut s, &fps(0..100));
        drop(s);
        // What a writer killed before its commit point leaves.
        std::fs::write(dir.path().join(run_name(2, 0)), b"half a run").unwrap();
        std::fs::write(dir.path().join(MANIFEST_TMP), b"half a manifest").unwrap();
        std::fs::write(dir.path().join("tmp-1-0.add"), b"x").unwrap();
        let r = SeenStore::open(dir.path(), Access::ReadOnly).unwrap();
        assert_eq!(r.len(), 100);
        let report = verify(dir.path());
        assert!(report.is_ok(), "{report:?}");
        assert!(!report.notes.is_empty());
        let w = SeenStore::open(dir.path(), Access::Write).unwrap();
        assert_eq!(w.len(), 100);
        let left = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(left, 3, "MANIFEST, LOCK and one run");
    }

    #[test]
    fn store_refuses_a_run_of_another_store_with_as_many_keys() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let mut sa = SeenStore::create(&a, &config()).unwrap();
        commit(&mut sa, &fps(0..100));
        let mut sb = SeenStore::create(&b, &config()).unwrap();
        commit(&mut sb, &fps(100..200));
        drop((sa, sb));
        std::fs::copy(b.join(run_name(1, 0)), a.join(run_name(1, 0))).unwrap();
        let e = SeenStore::open(&a, Access::ReadOnly).unwrap_err();
        assert!(
            e.is_corrupt() && e.to_string().contains("another store"),
            "{e}"
        );
        let report = verify(&a);
        assert!(!report.is_ok(), "{report:?}");
    }

    #[test]
    fn store_damage_is_an_error_never_an_answer() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = SeenStore::create(dir.path(), &config()).unwrap();
        commit(&mut s, &fps(0..5000));
        drop(s);
        let run = dir.path().join(run_name(1, 0));
        let good = std::fs::read(&run).unwrap();
        // Truncated.
        std::fs::write(&run, &good[..good.len() / 2]).unwrap();
        let e = SeenStore::open(dir.path(), Access::ReadOnly).unwrap_err();
        assert!(e.is_corrupt(), "{e}");
        assert!(!verify(dir.path()).is_ok());
        // Missing.
        std::fs::remove_file(&run).unwrap();
        let e = SeenStore::open(dir.path(), Access::ReadOnly).unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
        // A bit flipped in the keys: lookups there fail, verify says where.
        let mut bad = good.clone();
        bad[64 + 16 * 2500 + 3] ^= 4;
        std::fs::write(&run, &bad).unwrap();
        let s = SeenStore::open(dir.path(), Access::ReadOnly).unwrap();
        let keys = fps(0..5000);
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        let e = s.contains(sorted[2500]).unwrap_err();
        assert!(e.is_corrupt(), "{e}");
        let report = verify(dir.path());
        assert!(!report.is_ok());
        assert!(report.problems[0].contains("block 39"), "{report:?}");
        // Another run file in its place.
        std::fs::write(&run, &good).unwrap();
        let mut m = Manifest::read(dir.path()).unwrap();
        m.runs[0].header_sum ^= 1;
        m.write(dir.path()).unwrap();
        assert!(SeenStore::open(dir.path(), Access::ReadOnly)
            .unwrap_err()
            .is_corrupt());
        // A damaged manifest.
        std::fs::write(dir.path().join(MANIFEST), b"urikey-seen-store\nformat 1\n").unwrap();
        assert!(SeenStore::open(dir.path(), Access::ReadOnly)
            .unwrap_err()
            .is_corrupt());
    }
}
