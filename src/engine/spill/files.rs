//! The spill directory and its files: writers that report failures as
//! [`Error::Spill`] naming the directory, and the partition writers of
//! phase 2.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::super::error::Error;
use super::{PARTITION_BITS, PARTITION_BUFFER, RECORD_BYTES};

/// Spill directories created by this process so far (for unique names).
static CREATED: AtomicU64 = AtomicU64::new(0);

/// A private directory for one run's spill files, removed with everything
/// in it when dropped.
#[derive(Debug)]
pub struct SpillDir {
    path: PathBuf,
    /// The temporary directory it was created in (named in errors).
    parent: PathBuf,
    /// Bytes written to spill files so far.
    written: AtomicU64,
    fail_after: Option<u64>,
    /// Files created so far (for unique names).
    files: AtomicU64,
}

impl SpillDir {
    /// Creates `urikey-spill-<pid>-<n>` in `parent`.
    ///
    /// # Errors
    /// [`Error::Spill`] when the directory cannot be created.
    pub fn create(parent: &Path, fail_after: Option<u64>) -> Result<Arc<Self>, Error> {
        let n = CREATED.fetch_add(1, Ordering::Relaxed);
        let path = parent.join(format!("urikey-spill-{}-{n}", std::process::id()));
        std::fs::create_dir(&path).map_err(|source| Error::Spill {
            dir: parent.to_owned(),
            source,
        })?;
        Ok(Arc::new(Self {
            path,
            parent: parent.to_owned(),
            written: AtomicU64::new(0),
            fail_after,
            files: AtomicU64::new(0),
        }))
    }

    /// The error for a failed spill file operation.
    pub fn error(&self, source: io::Error) -> Error {
        Error::Spill {
            dir: self.parent.clone(),
            source,
        }
    }

    /// A new file in the directory, written through a buffer of
    /// `buffer` bytes.
    ///
    /// # Errors
    /// [`Error::Spill`] when it cannot be created.
    pub fn create_file(self: &Arc<Self>, kind: &str, buffer: usize) -> Result<SpillWriter, Error> {
        let n = self.files.fetch_add(1, Ordering::Relaxed);
        let path = self.path.join(format!("{kind}-{n}"));
        let file = File::create(&path).map_err(|e| self.error(e))?;
        Ok(SpillWriter {
            out: BufWriter::with_capacity(
                buffer,
                Counted {
                    file,
                    dir: Arc::clone(self),
                },
            ),
            path,
        })
    }
}

impl Drop for SpillDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// A spill file under the directory's write count (and its injected
/// failure).
struct Counted {
    file: File,
    dir: Arc<SpillDir>,
}

impl Write for Counted {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let before = self
            .dir
            .written
            .fetch_add(buf.len() as u64, Ordering::Relaxed);
        if let Some(limit) = self.dir.fail_after {
            if before + buf.len() as u64 > limit {
                return Err(io::Error::from_raw_os_error(28)); // ENOSPC
            }
        }
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// A buffered spill file being written.
pub struct SpillWriter {
    out: BufWriter<Counted>,
    path: PathBuf,
}

impl SpillWriter {
    /// Appends `bytes`.
    ///
    /// # Errors
    /// [`Error::Spill`].
    #[inline]
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.out
            .write_all(bytes)
            .map_err(|e| self.out.get_ref().dir.error(e))
    }

    /// Flushes the file and returns its path.
    ///
    /// # Errors
    /// [`Error::Spill`].
    pub fn finish(self) -> Result<PathBuf, Error> {
        let dir = Arc::clone(&self.out.get_ref().dir);
        self.out
            .into_inner()
            .map_err(|e| dir.error(e.into_error()))?;
        Ok(self.path)
    }
}

/// Partition files: records of undecided lines, by fingerprint bits. A
/// file is created when its first record comes.
pub struct Partitions {
    dir: Arc<SpillDir>,
    files: Vec<Option<SpillWriter>>,
    /// Where the partition bits start (from the bottom of the fingerprint).
    shift: u32,
    mask: u128,
}

impl Partitions {
    /// `count` partitions (a power of two) chosen by the fingerprint bits
    /// below the top `skip` ones.
    pub fn new(dir: &Arc<SpillDir>, skip: u32, count: usize) -> Self {
        let bits = count.trailing_zeros();
        Self {
            dir: Arc::clone(dir),
            files: (0..count).map(|_| None).collect(),
            shift: 128 - skip - bits,
            mask: (1u128 << bits) - 1,
        }
    }

    /// The partitions of one shard of the top-level split.
    pub fn for_shard(dir: &Arc<SpillDir>, shard_bits: u32) -> Self {
        Self::new(dir, shard_bits, 1 << (PARTITION_BITS - shard_bits))
    }

    /// Appends the record of one undecided line; with `key` (`--exact`),
    /// the record carries the key too.
    ///
    /// # Errors
    /// [`Error::Spill`].
    #[inline]
    pub fn push(&mut self, fp: u128, seq: u64, key: Option<&[u8]>) -> Result<(), Error> {
        let p = ((fp >> self.shift) & self.mask) as usize;
        let mut rec = [0u8; RECORD_BYTES];
        rec[..8].copy_from_slice(&(fp as u64).to_le_bytes());
        rec[8..16].copy_from_slice(&((fp >> 64) as u64).to_le_bytes());
        rec[16..].copy_from_slice(&seq.to_le_bytes());
        let Some(slot) = self.files.get_mut(p) else {
            return Ok(());
        };
        if slot.is_none() {
            *slot = Some(self.dir.create_file("part", PARTITION_BUFFER)?);
        }
        let Some(f) = slot else {
            return Ok(());
        };
        f.write(&rec)?;
        if let Some(key) = key {
            // Keys are shorter than a chunk, whose offsets are u32.
            let len = u32::try_from(key.len()).unwrap_or(u32::MAX);
            f.write(&len.to_le_bytes())?;
            f.write(key)?;
        }
        Ok(())
    }

    /// Flushes every file; returns their paths, in partition order.
    ///
    /// # Errors
    /// [`Error::Spill`].
    pub fn finish(self) -> Result<Vec<PathBuf>, Error> {
        self.files
            .into_iter()
            .flatten()
            .map(SpillWriter::finish)
            .collect()
    }
}

/// Reads one partition record: the fingerprint and sequence number, and
/// with `key` (`--exact`), the key into it. `None` at the end of the file.
pub fn read_record(
    r: &mut impl io::Read,
    key: Option<&mut Vec<u8>>,
) -> io::Result<Option<(u128, u64)>> {
    let Some([lo, hi, seq]) = read_words::<3>(r)? else {
        return Ok(None);
    };
    if let Some(key) = key {
        let mut len = [0u8; 4];
        r.read_exact(&mut len)?;
        key.resize(u32::from_le_bytes(len) as usize, 0);
        r.read_exact(key)?;
    }
    Ok(Some(((u128::from(hi) << 64) | u128::from(lo), seq)))
}

/// Reads `u64` little-endian words from a spill file.
pub fn read_words<const N: usize>(r: &mut impl io::Read) -> io::Result<Option<[u64; N]>> {
    let mut buf = [0u8; 32];
    let bytes = buf.get_mut(..N * 8).unwrap_or_default();
    match r.read_exact(bytes) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let mut words = [0u64; N];
    for (w, b) in words.iter_mut().zip(bytes.chunks_exact(8)) {
        *w = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    }
    Ok(Some(words))
}
