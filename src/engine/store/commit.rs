//! Commits: a new run written and synced, small runs merged, the manifest
//! replaced (the commit point), the runs no longer listed removed.

use std::path::Path;
use std::sync::Arc;

use super::additions::{Additions, TMP_PREFIX};
use super::compact;
use super::durable::{pause, sync_dir, Step};
use super::error::StoreError;
use super::manifest::{is_run_name, run_name, Manifest, RunEntry, MANIFEST_TMP};
use super::open::open_runs;
use super::run_file::{self, RunFile, RunWriter};
use super::{file_name, CommitReport, Live, SeenStore};
use crate::uri::key::IdentityDiff;

impl SeenStore {
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
        self.swap(commit, live, Merging::SmallRuns, added)
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
        self.swap(commit, live, Merging::Done, 0)
            .map(|r| CommitReport {
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
            let d = o.identity.diff(&m.identity);
            return Err(StoreError::ConfigMismatch {
                dir: other.dir.clone(),
                store: format!("`{}` ({})", o.config, IdentityDiff::describe(&d.only_self)),
                asked: format!(
                    "`{}` ({}) of {}",
                    m.config,
                    IdentityDiff::describe(&d.only_other),
                    self.dir.display()
                ),
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
        self.swap(commit, live, Merging::SmallRuns, added)
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
                        keys: r.key_count(),
                        bytes: r.layout().file_bytes(),
                        header_sum: r.header_sum(),
                        content_sum: Some(r.content_sum()),
                    });
                // A format-1 entry: the sum of the file it was opened with.
                let entry = RunEntry {
                    content_sum: Some(entry.content_sum.unwrap_or(r.content_sum())),
                    ..entry
                };
                (entry, Arc::clone(r))
            })
            .collect()
    }

    /// Opens a run just written.
    fn opened(&self, path: &Path, meta: &run_file::RunMeta) -> Result<Live, StoreError> {
        let run = RunFile::open(path).inspect_err(|_| {
            let _ = std::fs::remove_file(path);
        })?;
        Ok((
            RunEntry {
                name: file_name(path),
                keys: meta.keys,
                bytes: meta.bytes,
                header_sum: meta.header_sum,
                content_sum: Some(meta.content_sum),
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
    /// first as `merging` says), then removes the files no longer listed. On
    /// failure, files the manifest on disk does not list are removed and
    /// the store is as the manifest on disk says.
    fn swap(
        &mut self,
        commit: u64,
        live: Vec<Live>,
        merging: Merging,
        added: u64,
    ) -> Result<CommitReport, StoreError> {
        let result = (|| {
            let (live, merged) = if merging == Merging::SmallRuns {
                let keys: Vec<u64> = live.iter().map(|(e, _)| e.keys).collect();
                let chosen = compact::plan(&keys);
                match self.merge_some(commit, live.clone(), &chosen, 1) {
                    Ok(done) => done,
                    // A nearly full disk may take the new run but not a
                    // merged one beside it (the merged file is gone again):
                    // commit unmerged; a later commit merges.
                    Err(StoreError::Io { .. }) => (live, 0),
                    Err(e) => return Err(e),
                }
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
                runs.sort_by_key(|r| std::cmp::Reverse(r.key_count()));
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
    pub(super) fn remove_orphans(&self, opening: bool) {
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

/// Whether a commit merges runs before it writes the manifest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Merging {
    /// Runs of like size merge, as a binary counter carries
    /// ([`compact::plan`]): what keeps lookups to a few runs.
    SmallRuns,
    /// The caller merged already (`compact`).
    Done,
}
