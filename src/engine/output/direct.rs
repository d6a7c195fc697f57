//! Writing a large output around the page cache (`O_DIRECT`, Linux).
//!
//! A buffered write copies every byte into a page-cache page the kernel
//! must first allocate, and the commit then waits for all those pages to
//! reach the disk. With the page cache full, a multi-GB output costs a
//! fifth of the run's CPU in that copy alone; written around the cache,
//! the run is about a fifth faster. Past [`DIRECT_FROM`] bytes,
//! [`OutputFile`](crate::engine::OutputFile) hands its data to a [`DirectWriter`],
//! which writes whole blocks straight to the disk through a second handle
//! opened with `O_DIRECT`: from the caller's memory when they start a block
//! there (the engine's writer places its bytes so), else gathered into a
//! block-aligned buffer first. The last partial block goes through the page
//! cache at commit. Where the file system refuses direct writes, the data
//! is written the ordinary way and direct writing stops.

use std::fs::File;
use std::io;
#[cfg(unix)]
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes written the ordinary way before the rest goes around the page
/// cache: a small output stays cached for whatever reads it next.
pub const DIRECT_FROM: u64 = 64 << 20;

/// Offsets, lengths and the buffer's address are multiples of this: the
/// largest logical block size of common disks.
pub const BLOCK: usize = 4096;

/// Bytes gathered before one direct write (4 ms of disk time at 1 GB/s).
const STAGE: usize = 4 << 20;

/// Writes whole blocks with `O_DIRECT` at increasing offsets, from the
/// caller's memory or gathered into an aligned buffer.
#[derive(Debug)]
pub struct DirectWriter {
    file: File,
    /// `STAGE + BLOCK` bytes; the stage starts at the first aligned address.
    buf: Vec<u8>,
    /// Where the aligned stage starts in `buf`.
    start: usize,
    /// Bytes staged.
    len: usize,
    /// The file offset of the first staged byte (a multiple of `BLOCK`).
    at: u64,
}

impl DirectWriter {
    /// A direct writer for `path` from offset `at` (a multiple of
    /// [`BLOCK`]); `None` where direct writing is not available.
    pub fn open(path: &Path, at: u64) -> Option<Self> {
        if !at.is_multiple_of(BLOCK as u64) {
            return None;
        }
        let file = open_direct(path)?;
        let buf = vec![0u8; STAGE + BLOCK];
        let start = buf.as_ptr().align_offset(BLOCK);
        (start < BLOCK).then_some(Self {
            file,
            buf,
            start,
            len: 0,
            at,
        })
    }

    /// Stages as much of `data` as fits, after writing the stage if it is
    /// full. Returns how many bytes were taken.
    ///
    /// # Errors
    /// The direct write failed, and nothing of `data` was taken:
    /// `Unsupported` when the file system refuses direct writes (write the
    /// staged bytes from [`take_staged`](Self::take_staged) instead), else
    /// the operating system's error.
    pub fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if self.len == STAGE {
            self.write_blocks()?;
        }
        // Whole blocks that start a block in memory, where nothing is
        // staged (so they start one in the file too), go to the disk from
        // where they are: no copy ([`OutBuf`](super::out_buf::OutBuf)
        // places its bytes so).
        if self.len == 0 && data.len() >= BLOCK && data.as_ptr().addr().is_multiple_of(BLOCK) {
            let whole = data.get(..data.len() / BLOCK * BLOCK).unwrap_or_default();
            write_direct(&self.file, whole, self.at)?;
            self.at += whole.len() as u64;
            return Ok(whole.len());
        }
        let n = (STAGE - self.len).min(data.len());
        let from = self.start + self.len;
        if let (Some(to), Some(src)) = (self.buf.get_mut(from..from + n), data.get(..n)) {
            to.copy_from_slice(src);
        }
        self.len += n;
        Ok(n)
    }

    /// Writes the staged whole blocks; the rest (less than a block) stays
    /// staged. Nothing changes when it fails.
    ///
    /// # Errors
    /// As for [`write`](Self::write).
    pub fn write_blocks(&mut self) -> io::Result<()> {
        let whole = self.len / BLOCK * BLOCK;
        if whole == 0 {
            return Ok(());
        }
        let stage = self
            .buf
            .get(self.start..self.start + whole)
            .unwrap_or_default();
        write_direct(&self.file, stage, self.at)?;
        self.buf
            .copy_within(self.start + whole..self.start + self.len, self.start);
        self.len -= whole;
        self.at += whole as u64;
        Ok(())
    }

    /// The staged bytes and their file offset, handed over to be written
    /// the ordinary way; the writer is empty after.
    pub fn take_staged(&mut self) -> (u64, Vec<u8>) {
        let staged = self
            .buf
            .get(self.start..self.start + self.len)
            .unwrap_or_default()
            .to_vec();
        let at = self.at;
        self.at += self.len as u64;
        self.len = 0;
        (at, staged)
    }

    /// Moves the staged bytes one byte off their aligned address, so that
    /// the kernel refuses the next direct write as a file system without
    /// direct writes would.
    #[cfg(test)]
    pub fn misalign(&mut self) {
        self.buf
            .copy_within(self.start..self.start + self.len, self.start + 1);
        self.start += 1;
    }
}

/// True when the file system holding `dir` refuses a misaligned direct
/// write, which is how the tests make the kernel refuse one. Not all do:
/// tmpfs (Linux 6.6 and later) takes direct writes at any alignment.
#[cfg(all(test, target_os = "linux"))]
pub fn refuses_misaligned_writes_in(dir: &Path) -> bool {
    let path = dir.join(format!("urikey-misaligned-{}", std::process::id()));
    if std::fs::write(&path, b"").is_err() {
        return false;
    }
    // Two blocks staged (never written straight from a block-aligned
    // address), moved off their alignment, then written.
    let bytes = vec![1u8; 2 * BLOCK + 1];
    let skip = usize::from(bytes.as_ptr().addr().is_multiple_of(BLOCK));
    let data = &bytes[skip..skip + 2 * BLOCK];
    let refused = DirectWriter::open(&path, 0).is_some_and(|mut w| {
        w.write(data).ok() == Some(data.len()) && {
            w.misalign();
            w.write_blocks().is_err()
        }
    });
    let _ = std::fs::remove_file(&path);
    refused
}

/// Writes `data` (whole blocks, at a block-aligned address) at `offset`
/// of a file opened for direct writing.
///
/// # Errors
/// `Unsupported` when the file system (or this alignment) takes no direct
/// writes (EINVAL): whatever part was written is written again the
/// ordinary way. Else the operating system's error.
fn write_direct(file: &File, data: &[u8], offset: u64) -> io::Result<()> {
    match write_all_at(file, data, offset) {
        Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
            Err(io::Error::new(io::ErrorKind::Unsupported, e))
        }
        r => r,
    }
}

#[cfg(target_os = "linux")]
fn open_direct(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .ok()
}

#[cfg(not(target_os = "linux"))]
fn open_direct(_: &Path) -> Option<File> {
    None
}

/// Writes all of `data` at `offset`.
#[cfg(unix)]
pub fn write_all_at(file: &File, data: &[u8], offset: u64) -> io::Result<()> {
    file.write_all_at(data, offset)
}

#[cfg(not(unix))]
pub fn write_all_at(_: &File, _: &[u8], _: u64) -> io::Result<()> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A temporary file holding `initial` and a direct writer on it from
    /// offset `at`; `None` (the file removed) where the file system takes
    /// no direct writes (not this one): nothing to check there.
    fn direct_file(
        name: &str,
        initial: &[u8],
        at: u64,
    ) -> Option<(std::path::PathBuf, DirectWriter)> {
        let path = std::env::temp_dir().join(format!("urikey-{name}-{}", std::process::id()));
        std::fs::write(&path, initial).unwrap();
        match DirectWriter::open(&path, at) {
            Some(w) => Some((path, w)),
            None => {
                std::fs::remove_file(&path).unwrap();
                None
            }
        }
    }

    #[test]
    fn direct_writes_land_at_their_offsets() {
        let Some((path, mut w)) = direct_file("direct", &[b'a'; BLOCK], BLOCK as u64) else {
            return;
        };
        let data: Vec<u8> = (0..STAGE + 3 * BLOCK + 5)
            .map(|i| (i % 251) as u8)
            .collect();
        let mut taken = 0;
        while taken < data.len() {
            taken += w.write(&data[taken..]).unwrap();
        }
        w.write_blocks().unwrap();
        let (at, tail) = w.take_staged();
        assert_eq!(at, (BLOCK + STAGE + 3 * BLOCK) as u64);
        assert_eq!(tail, &data[data.len() - 5..]);
        write_all_at(&File::options().write(true).open(&path).unwrap(), &tail, at).unwrap();
        let got = std::fs::read(&path).unwrap();
        assert_eq!(&got[..BLOCK], vec![b'a'; BLOCK].as_slice());
        assert_eq!(&got[BLOCK..], data.as_slice());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn aligned_blocks_are_written_from_where_they_are() {
        let Some((path, mut w)) = direct_file("aligned", b"", 0) else {
            return;
        };
        let mut buf = vec![0u8; 4 * BLOCK];
        let at = buf.as_ptr().align_offset(BLOCK);
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i % 253) as u8;
        }
        let data = &buf[at..at + 2 * BLOCK + 100];
        // Two whole blocks taken without staging, then the rest staged.
        assert_eq!(w.write(data).unwrap(), 2 * BLOCK);
        assert_eq!(w.take_staged(), (2 * BLOCK as u64, Vec::new()));
        assert_eq!(w.write(&data[2 * BLOCK..]).unwrap(), 100);
        let (offset, tail) = w.take_staged();
        assert_eq!(
            (offset, tail.as_slice()),
            (2 * BLOCK as u64, &data[2 * BLOCK..])
        );
        assert_eq!(std::fs::read(&path).unwrap(), &data[..2 * BLOCK]);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_refused_direct_write_keeps_its_bytes() {
        if !refuses_misaligned_writes_in(&std::env::temp_dir()) {
            eprintln!(
                "skipped: the temporary directory's file system does not refuse a misaligned direct write"
            );
            return;
        }
        let Some((path, mut w)) = direct_file("refused", b"", 0) else {
            return;
        };
        let data = vec![7u8; 2 * BLOCK + 9];
        assert_eq!(w.write(&data).unwrap(), data.len());
        w.misalign();
        let e = w.write_blocks().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Unsupported);
        let (at, staged) = w.take_staged();
        assert_eq!((at, staged.as_slice()), (0, data.as_slice()));
        std::fs::remove_file(&path).unwrap();
    }
}
