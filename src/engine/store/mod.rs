//! A seen-store: a directory holding the 128-bit fingerprint of every key
//! ever added, for deduplication across runs (a crawler's frontier, fed
//! batch after batch, restarted at will), made for more keys than memory.
//!
//! # Layout
//!
//! ```text
//! DIR/MANIFEST             the live runs, the key configuration, the commit counter
//! DIR/run-<commit>-<n>.ukr immutable sorted runs of fingerprints (see `format.rs`)
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
//! `format.rs`). Lookups come in batches sorted by fingerprint.
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
//! and its [`KeyConfig::identity`], which decides fingerprints) and the
//! crate's [`KEY_VERSION`]. Opening a store for another configuration, or
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

mod compact;
mod durable;
mod error;
mod format;
/// Test hooks for the fuzz targets (feature `__internal-testing`); not a public API.
#[cfg(feature = "__internal-testing")]
#[doc(hidden)]
pub mod fuzzing;
mod lock;
mod lookup;
mod manifest;
mod pending;
mod session;
mod verify;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::uri::key::{KeyConfig, KEY_VERSION};

pub use compact::MAX_RUNS;
#[doc(hidden)]
pub use durable::PAUSE_ENV;
pub use error::StoreError;
pub use pending::{Additions, DEFAULT_BUFFER_BYTES};
pub use session::{SessionStats, StoreSession};
pub use verify::{verify, VerifyReport};

use durable::{pause, sync_dir, Step};
use format::{RunFile, RunWriter};
use lock::WriterLock;
use lookup::{contains_each, contains_in};
use manifest::{is_run_name, run_name, Manifest, RunEntry, MANIFEST, MANIFEST_TMP};
use pending::TMP_PREFIX;

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
    pub identity: String,
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

/// True when `dir`, which has no manifest but a writer's lock, gets its
/// manifest within a second: a writer making the store takes its lock
/// first, so a second process that looks in between waits for it.
fn manifest_while_created(dir: &Path) -> bool {
    for _ in 0..50 {
        if !dir.join(lock::LOCK).exists() {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        if dir.join(MANIFEST).exists() {
            return true;
        }
    }
    false
}

/// Times a reader re-reads the manifest when a run it lists is gone (a
/// writer replaced it meanwhile).
const OPEN_RETRIES: usize = 8;

impl SeenStore {
    /// Makes a new, empty store for `config` in `dir` (created if missing;
    /// it must be empty otherwise), open for writing.
    ///
    /// # Errors
    /// [`StoreError::Exists`] when `dir` holds files, [`StoreError::Io`].
    pub fn create(dir: &Path, config: &KeyConfig) -> Result<Self, StoreError> {
        if !is_empty_or_missing(dir)? {
            return Err(StoreError::Exists {
                dir: dir.to_owned(),
            });
        }
        std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
        let lock = WriterLock::take(dir)?;
        if dir.join(MANIFEST).exists() {
            // Another process made it meanwhile.
            return Err(StoreError::Exists {
                dir: dir.to_owned(),
            });
        }
        let manifest = Manifest {
            key_version: KEY_VERSION,
            identity: config.identity(),
            config: config.to_string(),
            key_format: config.format.to_string(),
            commit: 0,
            runs: Vec::new(),
        };
        manifest.write(dir)?;
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent)?;
        }
        Ok(Self {
            dir: dir.to_owned(),
            manifest,
            runs: Vec::new(),
            lock: Some(lock),
            buffer_bytes: DEFAULT_BUFFER_BYTES,
        })
    }

    /// Opens the store in `dir`, whatever its configuration and key version
    /// (for `info`, `verify`, `export`, `compact`).
    ///
    /// # Errors
    /// [`StoreError::NotAStore`], [`StoreError::Locked`] (for writing),
    /// [`StoreError::Corrupt`], [`StoreError::Io`],
    /// [`StoreError::NewerFormat`].
    pub fn open(dir: &Path, access: Access) -> Result<Self, StoreError> {
        if !dir.is_dir() {
            return Err(StoreError::NotAStore {
                dir: dir.to_owned(),
                why: "no such directory (`urikey state init` makes one)".to_owned(),
            });
        }
        if !dir.join(MANIFEST).exists() && !manifest_while_created(dir) {
            if access == Access::Write && dir.join(lock::LOCK).exists() {
                // A live writer that holds the lock is the answer (it may
                // still be making the store); a stale lock says nothing.
                drop(WriterLock::take(dir)?);
            }
            // Otherwise before the lock, which would leave a LOCK file behind.
            return Err(Manifest::read(dir).err().unwrap_or(StoreError::NotAStore {
                dir: dir.to_owned(),
                why: format!("it has no {MANIFEST}"),
            }));
        }
        let lock = match access {
            Access::Write => Some(WriterLock::take(dir)?),
            Access::ReadOnly => None,
        };
        let mut tries = 0;
        let (manifest, runs) = loop {
            let manifest = Manifest::read(dir)?;
            match open_runs(dir, &manifest) {
                Ok(runs) => break (manifest, runs),
                Err(Missing(name)) => {
                    tries += 1;
                    if lock.is_some() || tries >= OPEN_RETRIES {
                        return Err(StoreError::corrupt(
                            &dir.join(&name),
                            "missing, though the manifest lists it",
                        ));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(Other(e)) => return Err(e),
            }
        };
        let store = Self {
            dir: dir.to_owned(),
            manifest,
            runs,
            lock,
            buffer_bytes: DEFAULT_BUFFER_BYTES,
        };
        store.remove_orphans(true);
        Ok(store)
    }

    /// Opens the store in `dir` to be fed keys of `config`: as
    /// [`open`](Self::open), then checks the key version and the
    /// configuration.
    ///
    /// # Errors
    /// As [`open`](Self::open), and [`StoreError::KeyVersion`],
    /// [`StoreError::ConfigMismatch`].
    pub fn open_for(dir: &Path, config: &KeyConfig, access: Access) -> Result<Self, StoreError> {
        let store = Self::open(dir, access)?;
        store.check_config(config)?;
        Ok(store)
    }

    /// Opens the store in `dir` for writing keys of `config`, or makes it
    /// when `dir` is missing or an empty directory.
    ///
    /// # Errors
    /// As [`create`](Self::create) and [`open_for`](Self::open_for).
    pub fn open_or_create(dir: &Path, config: &KeyConfig) -> Result<Self, StoreError> {
        if is_empty_or_missing(dir)? {
            match Self::create(dir, config) {
                // Made by another process meanwhile: open it.
                Err(StoreError::Exists { .. }) => {}
                other => return other,
            }
        }
        Self::open_for(dir, config, Access::Write)
    }

    /// Checks that keys of `config`, computed by this build, belong in this
    /// store.
    ///
    /// # Errors
    /// [`StoreError::KeyVersion`], [`StoreError::ConfigMismatch`].
    pub fn check_config(&self, config: &KeyConfig) -> Result<(), StoreError> {
        let m = &self.manifest;
        if m.key_version != KEY_VERSION {
            return Err(StoreError::KeyVersion {
                dir: self.dir.clone(),
                store: m.key_version,
                current: KEY_VERSION,
                config: m.config.clone(),
            });
        }
        let identity = config.identity();
        if m.identity != identity {
            let (only_store, only_asked) = identity_diff(&m.identity, &identity);
            return Err(StoreError::ConfigMismatch {
                dir: self.dir.clone(),
                store: format!("`{}` ({only_store})", m.config),
                asked: format!("`{config}` ({only_asked})"),
            });
        }
        Ok(())
    }

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
                    keys: r.len(),
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

    fn writable(&self) -> Result<(), StoreError> {
        if self.lock.is_none() {
            return Err(StoreError::ReadOnly {
                dir: self.dir.clone(),
            });
        }
        Ok(())
    }

    /// Adds `additions` (keys the store does not hold, as a run's session
    /// collects them) as one commit, merging small runs as they accumulate.
    /// A failed commit leaves the store at its last commit.
    ///
    /// # Errors
    /// [`StoreError::ReadOnly`], [`StoreError::Io`] (a full disk...).
    pub fn commit(&mut self, additions: Additions) -> Result<CommitReport, StoreError> {
        self.writable()?;
        if additions.is_empty() {
            return Ok(self.report(0, 0));
        }
        let commit = self.manifest.commit + 1;
        let path = self.dir.join(run_name(commit, 0));
        let written = (|| {
            let mut sorted = additions.into_sorted()?;
            let mut w = RunWriter::create(&path, sorted.upper_bound())?;
            while let Some(fp) = sorted.next_fp()? {
                w.push(fp)?;
            }
            drop(sorted);
            w.finish()
        })();
        let meta = match written {
            Ok(meta) => meta,
            Err(e) => {
                let _ = std::fs::remove_file(&path);
                return Err(e);
            }
        };
        pause(Step::RunWritten);
        let added = meta.keys;
        let mut live = self.live();
        live.push(self.opened(&path, &meta)?);
        self.swap(commit, live, true, added)
    }

    /// Merges every run into one.
    ///
    /// # Errors
    /// As [`commit`](Self::commit), and [`StoreError::Corrupt`] when a block
    /// fails its checksum.
    pub fn compact(&mut self) -> Result<CommitReport, StoreError> {
        self.writable()?;
        if self.runs.len() < 2 {
            return Ok(self.report(0, 0));
        }
        let commit = self.manifest.commit + 1;
        let live = self.live();
        let all: Vec<usize> = (0..live.len()).collect();
        let (live, merged) = self.merge_some(commit, live, &all, 0)?;
        self.swap(commit, live, false, 0).map(|r| CommitReport {
            merged_runs: merged,
            ..r
        })
    }

    /// Adds the keys of `other` (a store of the same configuration and key
    /// version, from a parallel crawler) that this store lacks, as one
    /// commit.
    ///
    /// # Errors
    /// [`StoreError::ConfigMismatch`], [`StoreError::KeyVersion`], as
    /// [`compact`](Self::compact).
    pub fn merge_from(&mut self, other: &SeenStore) -> Result<CommitReport, StoreError> {
        self.writable()?;
        let (m, o) = (&self.manifest, &other.manifest);
        if m.key_version != o.key_version {
            return Err(StoreError::KeyVersion {
                dir: other.dir.clone(),
                store: o.key_version,
                current: m.key_version,
                config: o.config.clone(),
            });
        }
        if m.identity != o.identity {
            return Err(StoreError::ConfigMismatch {
                dir: other.dir.clone(),
                store: format!("`{}` ({})", o.config, o.identity),
                asked: format!("`{}` ({}) of {}", m.config, m.identity, self.dir.display()),
            });
        }
        let commit = self.manifest.commit + 1;
        let path = self.dir.join(run_name(commit, 0));
        let mut runs: Vec<&RunFile> = self.runs.iter().map(|r| &**r).collect();
        let split = runs.len();
        runs.extend(other.runs.iter().map(|r| &**r));
        let meta = compact::write_selected(&path, &runs, split, |a, b| b && !a)?;
        if meta.keys == 0 {
            let _ = std::fs::remove_file(&path);
            return Ok(self.report(0, 0));
        }
        pause(Step::RunWritten);
        let added = meta.keys;
        let mut live = self.live();
        live.push(self.opened(&path, &meta)?);
        self.swap(commit, live, true, added)
    }

    /// The live runs with their manifest entries.
    fn live(&self) -> Vec<Live> {
        self.runs
            .iter()
            .map(|r| {
                let name = file_name(r.path());
                let entry = self
                    .manifest
                    .runs
                    .iter()
                    .find(|e| e.name == name)
                    .cloned()
                    .unwrap_or(RunEntry {
                        name,
                        keys: r.len(),
                        bytes: r.layout().file_bytes(),
                        header_sum: r.header_sum(),
                    });
                (entry, Arc::clone(r))
            })
            .collect()
    }

    /// Opens a run just written.
    fn opened(&self, path: &Path, meta: &format::RunMeta) -> Result<Live, StoreError> {
        let run = RunFile::open(path).inspect_err(|_| {
            let _ = std::fs::remove_file(path);
        })?;
        Ok((
            RunEntry {
                name: file_name(path),
                keys: meta.keys,
                bytes: meta.bytes,
                header_sum: meta.header_sum,
            },
            Arc::new(run),
        ))
    }

    /// Merges the runs `chosen` of `live` into one new run named for
    /// `commit` (the `n`-th file of the commit); returns the new live set
    /// and how many runs were merged.
    fn merge_some(
        &self,
        commit: u64,
        mut live: Vec<Live>,
        chosen: &[usize],
        n: usize,
    ) -> Result<(Vec<Live>, usize), StoreError> {
        if chosen.len() < 2 {
            return Ok((live, 0));
        }
        let path = self.dir.join(run_name(commit, n));
        let inputs: Vec<&RunFile> = chosen.iter().map(|&i| &*live[i].1).collect();
        let meta = compact::merge_into(&path, &inputs)?;
        let merged = self.opened(&path, &meta)?;
        let mut i = 0;
        live.retain(|_| {
            let keep = !chosen.contains(&i);
            i += 1;
            keep
        });
        live.push(merged);
        Ok((live, chosen.len()))
    }

    /// Makes `live` the store's runs as commit `commit` (merging small runs
    /// first when `tier`), then removes the files no longer listed. On
    /// failure, files the manifest on disk does not list are removed and
    /// the store is as the manifest on disk says.
    fn swap(
        &mut self,
        commit: u64,
        live: Vec<Live>,
        tier: bool,
        added: u64,
    ) -> Result<CommitReport, StoreError> {
        let result = (|| {
            let (live, merged) = if tier {
                let keys: Vec<u64> = live.iter().map(|(e, _)| e.keys).collect();
                let chosen = compact::plan(&keys);
                self.merge_some(commit, live, &chosen, 1)?
            } else {
                (live, 0)
            };
            sync_dir(&self.dir)?;
            pause(Step::RunsSynced);
            let manifest = Manifest {
                commit,
                runs: live.iter().map(|(e, _)| e.clone()).collect(),
                ..self.manifest.clone()
            };
            manifest.write(&self.dir)?;
            Ok((manifest, live, merged))
        })();
        match result {
            Ok((manifest, live, merged)) => {
                self.manifest = manifest;
                let mut runs: Vec<Arc<RunFile>> = live.into_iter().map(|(_, r)| r).collect();
                runs.sort_by_key(|r| std::cmp::Reverse(r.len()));
                self.runs = runs;
                pause(Step::Removing);
                self.remove_orphans(false);
                let _ = sync_dir(&self.dir);
                Ok(self.report(added, merged))
            }
            Err(e) => {
                // The manifest on disk says what the store is.
                if let Ok(m) = Manifest::read(&self.dir) {
                    if m != self.manifest {
                        if let Ok(runs) = open_runs(&self.dir, &m) {
                            self.manifest = m;
                            self.runs = runs;
                        }
                    }
                }
                self.remove_orphans(false);
                Err(e)
            }
        }
    }

    fn report(&self, added: u64, merged_runs: usize) -> CommitReport {
        CommitReport {
            added,
            merged_runs,
            commit: self.manifest.commit,
            keys: self.len(),
        }
    }

    /// Removes what an interrupted writer left: run files the manifest on
    /// disk does not list, a half-written manifest and temporary files
    /// (writers only; best effort; nothing when the manifest cannot be
    /// read). This process's own temporary files are kept unless
    /// `opening`.
    fn remove_orphans(&self, opening: bool) {
        if self.lock.is_none() {
            return;
        }
        let Ok(manifest) = Manifest::read(&self.dir) else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mine = format!("{TMP_PREFIX}{}-", std::process::id());
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let listed = manifest.runs.iter().any(|r| r.name == name);
            let orphan = (is_run_name(&name) && !listed)
                || (name.starts_with(TMP_PREFIX) && (opening || !name.starts_with(&mine)))
                || name == MANIFEST_TMP;
            if orphan {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// What two identities (see [`KeyConfig::identity`]) do not share, each
/// side as `flags a, b; params ...; lenient` (or `nothing else`).
fn identity_diff(a: &str, b: &str) -> (String, String) {
    fn parts(id: &str) -> Vec<String> {
        let mut out = Vec::new();
        for word in id.split(' ') {
            match word.strip_prefix("flags=") {
                Some(flags) => out.extend(
                    flags
                        .split(',')
                        .filter(|f| !f.is_empty())
                        .map(|f| format!("+{f}")),
                ),
                None => out.push(word.to_owned()),
            }
        }
        out
    }
    let (pa, pb) = (parts(a), parts(b));
    let only = |x: &[String], y: &[String]| {
        let v: Vec<&str> = x
            .iter()
            .filter(|w| !y.contains(w))
            .map(String::as_str)
            .collect();
        if v.is_empty() {
            "nothing the other lacks".to_owned()
        } else {
            v.join(" ")
        }
    };
    (only(&pa, &pb), only(&pb, &pa))
}

/// Why the runs of a manifest could not be opened.
enum OpenRuns {
    /// A listed run is missing (a writer may have replaced it).
    Missing(String),
    Other(StoreError),
}
use OpenRuns::{Missing, Other};

/// Opens the runs `m` lists, checking each against its entry; largest
/// first.
fn open_runs(dir: &Path, m: &Manifest) -> Result<Vec<Arc<RunFile>>, OpenRuns> {
    let mut runs = Vec::with_capacity(m.runs.len());
    for e in &m.runs {
        let path = dir.join(&e.name);
        let run = match RunFile::open(&path) {
            Ok(r) => r,
            Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Err(Missing(e.name.clone()))
            }
            Err(e) => return Err(Other(e)),
        };
        if run.header_sum() != e.header_sum || run.len() != e.keys {
            return Err(Other(StoreError::corrupt(
                &path,
                "not the file the manifest lists (other header)",
            )));
        }
        runs.push(Arc::new(run));
    }
    runs.sort_by_key(|r| std::cmp::Reverse(r.len()));
    Ok(runs)
}

fn is_empty_or_missing(dir: &Path) -> Result<bool, StoreError> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => Ok(entries.next().is_none()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(StoreError::io(dir, e)),
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

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
