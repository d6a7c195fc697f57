//! `urikey state verify`: every check a store's files can be put to, all of
//! them, reporting every problem rather than stopping at the first.

use std::path::Path;

use super::additions::TMP_PREFIX;
use super::compact::Union;
use super::error::StoreError;
use super::lock;
use super::manifest::{is_run_name, Manifest, MANIFEST_TMP};
use super::run_file::{RunFile, BLOCK_KEYS};

/// What [`verify`] found.
#[derive(Clone, Debug, Default)]
pub struct VerifyReport {
    /// Fingerprints in the runs that passed.
    pub keys: u64,
    /// Runs the manifest lists.
    pub runs: usize,
    /// Blocks checked against their checksums.
    pub blocks: u64,
    /// What is wrong: damaged or missing files, keys out of order, runs
    /// that overlap. Empty when the store is sound.
    pub problems: Vec<String>,
    /// What is harmless: files an interrupted writer left (the next writer
    /// removes them), the lock's holder.
    pub notes: Vec<String>,
}

impl VerifyReport {
    /// True when no problem was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks the store in `dir`: the manifest's checksum; each run's size,
/// header, index, and every block against its checksum; that each run is
/// ascending, matches its directory and its manifest entry; that runs are
/// disjoint. Takes no lock.
pub fn verify(dir: &Path) -> VerifyReport {
    let mut report = VerifyReport::default();
    let manifest = match Manifest::read(dir) {
        Ok(m) => m,
        Err(e) => {
            report.problems.push(e.to_string());
            return report;
        }
    };
    report.runs = manifest.runs.len();
    let mut opened = Vec::new();
    for entry in &manifest.runs {
        let path = dir.join(&entry.name);
        let run = match RunFile::open(&path) {
            Ok(r) => r,
            Err(StoreError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                report.problems.push(format!(
                    "{}: missing, though the manifest lists it",
                    path.display()
                ));
                continue;
            }
            Err(e) => {
                report.problems.push(e.to_string());
                continue;
            }
        };
        if run.header_sum() != entry.header_sum
            || entry.content_sum.is_some_and(|c| c != run.content_sum())
            || run.key_count() != entry.keys
            || run.layout().file_bytes() != entry.bytes
        {
            report.problems.push(format!(
                "{}: not the file the manifest lists (it lists {} keys, {} bytes)",
                path.display(),
                entry.keys,
                entry.bytes
            ));
            continue;
        }
        match check_run(&run) {
            Ok(()) => {
                report.keys += run.key_count();
                report.blocks += run.key_count().div_ceil(BLOCK_KEYS);
                opened.push(run);
            }
            Err(e) => report.problems.push(e),
        }
    }
    if opened.len() > 1 {
        let runs: Vec<&RunFile> = opened.iter().collect();
        let mut distinct = 0u64;
        let overlap = Union::new(&runs, runs.len()).and_then(|mut u| {
            while u.next_fp()?.is_some() {
                distinct += 1;
            }
            Ok(())
        });
        match overlap {
            Err(e) => report.problems.push(e.to_string()),
            Ok(()) if distinct != report.keys => report.problems.push(format!(
                "runs overlap: {} fingerprints are in more than one run",
                report.keys - distinct
            )),
            Ok(()) => {}
        }
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let listed = manifest.runs.iter().any(|r| r.name == name);
            if (is_run_name(&name) && !listed)
                || name.starts_with(TMP_PREFIX)
                || name == MANIFEST_TMP
            {
                report.notes.push(format!(
                    "{name}: left by an interrupted writer, not part of the store (the next \
                     writer removes it)"
                ));
            }
        }
    }
    if let Some(holder) = lock::holder(dir) {
        report
            .notes
            .push(format!("a writer holds the lock: {holder}"));
    }
    report
}

/// Every block of `run` against its checksum, the keys strictly ascending,
/// each within its directory entry.
fn check_run(run: &RunFile) -> Result<(), String> {
    let layout = run.layout();
    let dir = run.directory();
    let mut last: Option<u128> = None;
    for (i, fp) in run.iter().enumerate() {
        let fp = fp.map_err(|e| e.to_string())?;
        if last.is_some_and(|l| l >= fp) {
            return Err(format!(
                "{}: keys out of order at key {i}",
                run.path().display()
            ));
        }
        last = Some(fp);
        let e = layout.entry_of(fp);
        let i = i as u64;
        if !(dir[e] <= i && i < dir[e + 1]) {
            return Err(format!(
                "{}: directory does not match key {i}",
                run.path().display()
            ));
        }
    }
    Ok(())
}
