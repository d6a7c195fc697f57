//! Making and opening a store: a new directory made durable up to an
//! existing parent, a manifest read and its runs opened and checked, a key
//! configuration compared.

use std::path::Path;
use std::sync::Arc;

use super::additions::DEFAULT_BUFFER_BYTES;
use super::durable::sync_dir;
use super::error::StoreError;
use super::lock::{self, WriterLock};
use super::manifest::{is_run_name, Manifest, MANIFEST, MANIFEST_TMP};
use super::run_file::RunFile;
use super::{Access, SeenStore};
use crate::uri::key::{IdentityDiff, KeyConfig, KEY_VERSION};

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
        if place(dir)? == Place::Occupied {
            return Err(StoreError::Exists {
                dir: dir.to_owned(),
            });
        }
        let made = make_dirs(dir)?;
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
        // Syncs `dir` too.
        manifest.write(dir)?;
        // Each new directory's name is durable only once its parent is
        // synced: up to the first that existed.
        for new in made.iter().rev() {
            sync_dir(&parent_of(new))?;
        }
        if made.is_empty() {
            sync_dir(&parent_of(dir))?;
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
        if !dir.join(MANIFEST).exists() && !manifest_while_created(dir) {
            if access == Access::Write && dir.join(lock::LOCK).exists() {
                // A live writer that holds the lock is the answer (it may
                // still be making the store); a stale lock says nothing.
                drop(WriterLock::take(dir)?);
            }
            // Otherwise before the lock, which would leave a LOCK file behind.
            return Err(Manifest::read(dir)
                .err()
                .unwrap_or_else(|| missing_manifest(dir)));
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
        if place(dir)? != Place::Occupied {
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
            let d = m.identity.diff(&identity);
            return Err(StoreError::ConfigMismatch {
                dir: self.dir.clone(),
                store: format!("`{}` ({})", m.config, IdentityDiff::describe(&d.only_self)),
                asked: format!("`{config}` ({})", IdentityDiff::describe(&d.only_other)),
            });
        }
        Ok(())
    }
}

/// Why the runs of a manifest could not be opened.
pub(super) enum OpenRuns {
    /// A listed run is missing (a writer may have replaced it).
    Missing(String),
    Other(StoreError),
}
use OpenRuns::{Missing, Other};

/// Opens the runs `m` lists, checking each against its entry; largest
/// first.
pub(super) fn open_runs(dir: &Path, m: &Manifest) -> Result<Vec<Arc<RunFile>>, OpenRuns> {
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
        if run.header_sum() != e.header_sum || run.key_count() != e.keys {
            return Err(Other(StoreError::corrupt(
                &path,
                "not the file the manifest lists (other header)",
            )));
        }
        if e.content_sum.is_some_and(|c| c != run.content_sum()) {
            return Err(Other(StoreError::corrupt(
                &path,
                "not the file the manifest lists (other keys: a run of another store?)",
            )));
        }
        runs.push(Arc::new(run));
    }
    runs.sort_by_key(|r| std::cmp::Reverse(r.key_count()));
    Ok(runs)
}

/// What a directory is to a store about to be made in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    Missing,
    /// Empty, or holding only what the making of a store leaves before its
    /// manifest (`LOCK`, `MANIFEST.tmp`): a writer killed then.
    Vacant,
    Occupied,
}

fn place(dir: &Path) -> Result<Place, StoreError> {
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            for entry in entries {
                let entry = entry.map_err(|e| StoreError::io(dir, e))?;
                let name = entry.file_name();
                if name != lock::LOCK && name != MANIFEST_TMP {
                    return Ok(Place::Occupied);
                }
            }
            Ok(Place::Vacant)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Place::Missing),
        Err(_) if dir.is_file() => Err(not_a_directory(dir)),
        Err(e) => Err(StoreError::io(dir, e)),
    }
}

/// `dir` is a file.
fn not_a_directory(dir: &Path) -> StoreError {
    StoreError::NotAStore {
        dir: dir.to_owned(),
        why: "it is a file, not a directory".to_owned(),
        can_make: false,
    }
}

/// The directory that holds `path` (`.` for a bare name).
fn parent_of(path: &Path) -> std::path::PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => Path::new(".").to_owned(),
    }
}

/// Makes `dir` and its missing parents; returns those it made, outermost
/// first.
fn make_dirs(dir: &Path) -> Result<Vec<std::path::PathBuf>, StoreError> {
    let mut missing = Vec::new();
    for a in dir.ancestors().filter(|a| !a.as_os_str().is_empty()) {
        if a.exists() {
            break;
        }
        missing.push(a.to_owned());
    }
    missing.reverse();
    std::fs::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
    Ok(missing)
}

/// Fails when `dir` is no store at all (missing, a file, empty, no
/// manifest and no runs); a store that lost its manifest, or any damage,
/// is left to [`verify`](super::verify) to report.
///
/// # Errors
/// [`StoreError::NotAStore`], [`StoreError::Io`].
pub fn check_is_store(dir: &Path) -> Result<(), StoreError> {
    if dir.join(MANIFEST).exists() {
        return Ok(());
    }
    match missing_manifest(dir) {
        e @ (StoreError::NotAStore { .. } | StoreError::Io { .. }) => Err(e),
        _ => Ok(()),
    }
}

/// Why `dir`, which has no manifest, is no store: missing, a file, empty
/// or left by a writer killed while making it (which `init` or a `--state`
/// run makes again), or a store that lost its manifest (damaged).
pub(super) fn missing_manifest(dir: &Path) -> StoreError {
    let not_a_store = |why: &str, can_make| StoreError::NotAStore {
        dir: dir.to_owned(),
        why: why.to_owned(),
        can_make,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(_) if dir.is_file() => return not_a_directory(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return not_a_store("no such directory", true)
        }
        Err(e) => return StoreError::io(dir, e),
    };
    let names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if names.iter().any(|n| is_run_name(n)) {
        return StoreError::corrupt(
            &dir.join(MANIFEST),
            "missing, though the directory holds the store's runs",
        );
    }
    if names.is_empty() {
        not_a_store("it is empty", true)
    } else if names.iter().all(|n| n == lock::LOCK || n == MANIFEST_TMP) {
        not_a_store(
            &format!("it has no {MANIFEST}: a writer was stopped while making the store"),
            true,
        )
    } else {
        not_a_store(
            &format!("it has no {MANIFEST}, and holds other files"),
            false,
        )
    }
}
