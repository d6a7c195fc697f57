//! Fingerprints waiting for a commit: collected in any order, in a bounded
//! buffer that is sorted and written to a temporary file in the store's
//! directory whenever it fills, then merged into one ascending stream
//! without repeats when the commit writes its run.
//!
//! Nothing here is durable: the temporary files are removed when the
//! additions are dropped, and a writer that opens the store removes any a
//! crashed process left behind.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::error::StoreError;

/// Prefix of the names of temporary files in a store's directory.
pub const TMP_PREFIX: &str = "tmp-";

/// The default buffer: 4 Mi fingerprints, 64 MiB.
pub const DEFAULT_BUFFER_BYTES: usize = 64 << 20;

/// Fingerprints added since the last commit.
#[derive(Debug)]
pub struct Additions {
    dir: PathBuf,
    buf: Vec<u128>,
    cap: usize,
    /// Sorted files written so far, with their number of fingerprints.
    files: Vec<(PathBuf, u64)>,
    /// Fingerprints pushed (repeats included).
    pushed: u64,
}

impl Additions {
    /// Additions whose buffer holds `buffer_bytes` (at least 64 KiB) before
    /// it is written to a temporary file in `dir`.
    pub fn new(dir: &Path, buffer_bytes: usize) -> Self {
        Self {
            dir: dir.to_owned(),
            buf: Vec::new(),
            cap: (buffer_bytes / 16).max(4096),
            files: Vec::new(),
            pushed: 0,
        }
    }

    /// Adds `fps` (any order; repeats are dropped when merged).
    ///
    /// # Errors
    /// [`StoreError::Io`] when a temporary file cannot be written.
    pub fn push(&mut self, fps: &[u128]) -> Result<(), StoreError> {
        self.pushed += fps.len() as u64;
        let mut rest = fps;
        while !rest.is_empty() {
            let room = self.cap - self.buf.len();
            let (now, later) = rest.split_at(room.min(rest.len()));
            self.buf.extend_from_slice(now);
            rest = later;
            if self.buf.len() >= self.cap {
                self.write_buffer()?;
            }
        }
        Ok(())
    }

    /// Fingerprints pushed so far (repeats included): an upper bound of
    /// the distinct ones.
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// True when nothing was pushed.
    pub fn is_empty(&self) -> bool {
        self.pushed == 0
    }

    /// Bytes of temporary files written so far.
    pub fn spilled_bytes(&self) -> u64 {
        self.files.iter().map(|f| 16 * f.1).sum()
    }

    fn write_buffer(&mut self) -> Result<(), StoreError> {
        self.buf.par_sort_unstable();
        self.buf.dedup();
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "{TMP_PREFIX}{}-{}.add",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = self.dir.join(name);
        let written = (|| {
            let mut w = BufWriter::with_capacity(1 << 20, File::create(&path)?);
            for fp in &self.buf {
                w.write_all(&fp.to_be_bytes())?;
            }
            w.flush()
        })();
        if let Err(e) = written {
            // A full disk: what was written of it goes too.
            let _ = std::fs::remove_file(&path);
            return Err(StoreError::io(&path, e));
        }
        self.files.push((path, self.buf.len() as u64));
        self.buf.clear();
        Ok(())
    }

    /// The fingerprints, ascending, without repeats.
    ///
    /// # Errors
    /// [`StoreError::Io`] when a temporary file cannot be read back.
    pub fn into_sorted(mut self) -> Result<Sorted, StoreError> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.par_sort_unstable();
        buf.dedup();
        let files = std::mem::take(&mut self.files);
        let mut readers = Vec::with_capacity(files.len());
        let mut heap = BinaryHeap::with_capacity(files.len() + 1);
        for (i, (path, _)) in files.iter().enumerate() {
            let f = File::open(path).map_err(|e| StoreError::io(path, e))?;
            let mut r = BufReader::with_capacity(1 << 18, f);
            if let Some(fp) = read_fp(&mut r, path)? {
                heap.push(Reverse((fp, i)));
            }
            readers.push(r);
        }
        let mem = files.len();
        if let Some(&fp) = buf.first() {
            heap.push(Reverse((fp, mem)));
        }
        Ok(Sorted {
            files,
            readers,
            buf,
            at: 1,
            heap,
            last: None,
        })
    }
}

impl Drop for Additions {
    fn drop(&mut self) {
        for (path, _) in &self.files {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn read_fp(r: &mut impl Read, path: &Path) -> Result<Option<u128>, StoreError> {
    let mut b = [0u8; 16];
    match r.read_exact(&mut b) {
        Ok(()) => Ok(Some(u128::from_be_bytes(b))),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

/// The additions in ascending order without repeats; removes the
/// temporary files when dropped.
#[derive(Debug)]
pub struct Sorted {
    files: Vec<(PathBuf, u64)>,
    readers: Vec<BufReader<File>>,
    buf: Vec<u128>,
    /// The next index of `buf` to put on the heap.
    at: usize,
    heap: BinaryHeap<Reverse<(u128, usize)>>,
    last: Option<u128>,
}

impl Sorted {
    /// At most this many fingerprints follow.
    pub fn upper_bound(&self) -> u64 {
        self.files.iter().map(|f| f.1).sum::<u64>() + self.buf.len() as u64
    }

    /// The next fingerprint.
    ///
    /// # Errors
    /// [`StoreError::Io`] when a temporary file cannot be read.
    pub fn next_fp(&mut self) -> Result<Option<u128>, StoreError> {
        loop {
            let Some(Reverse((fp, i))) = self.heap.pop() else {
                return Ok(None);
            };
            if i == self.readers.len() {
                if let Some(&next) = self.buf.get(self.at) {
                    self.heap.push(Reverse((next, i)));
                    self.at += 1;
                }
            } else if let Some(r) = self.readers.get_mut(i) {
                if let Some(next) = read_fp(r, &self.files[i].0)? {
                    self.heap.push(Reverse((next, i)));
                }
            }
            if self.last == Some(fp) {
                continue;
            }
            self.last = Some(fp);
            return Ok(Some(fp));
        }
    }
}

impl Drop for Sorted {
    fn drop(&mut self) {
        for (path, _) in &self.files {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_sorted_without_repeats_across_files() {
        let dir = tempfile::tempdir().unwrap();
        // A tiny buffer: several files.
        let mut a = Additions::new(dir.path(), 0);
        let mut all = Vec::new();
        for i in 0..20_000u64 {
            let fp = u128::from(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) % 7000) << 64 | 3;
            all.push(fp);
        }
        for part in all.chunks(333) {
            a.push(part).unwrap();
        }
        assert!(a.spilled_bytes() > 0);
        assert_eq!(a.pushed(), 20_000);
        let files_there = std::fs::read_dir(dir.path()).unwrap().count();
        assert!(files_there >= 4, "{files_there}");
        let mut s = a.into_sorted().unwrap();
        assert!(s.upper_bound() >= 7000);
        let mut got = Vec::new();
        while let Some(fp) = s.next_fp().unwrap() {
            got.push(fp);
        }
        all.sort_unstable();
        all.dedup();
        assert_eq!(got, all);
        drop(s);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn pending_dropped_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = Additions::new(dir.path(), 0);
        a.push(&(0..10_000u128).collect::<Vec<_>>()).unwrap();
        drop(a);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
