//! An output file that appears whole or not at all ([`OutputFile`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use super::direct::{self, DirectWriter, BLOCK, DIRECT_FROM};

/// An output file that appears whole or not at all.
///
/// The output is written under a temporary name in the target's directory
/// and renamed over the target only by [`commit`](Self::commit); dropping it
/// uncommitted removes the temporary file, so a failed or interrupted run
/// never leaves a truncated file under the name the user gave. It behaves
/// like `sort -o` or `cp` otherwise: a new file gets mode `0666` minus the
/// umask, an existing file keeps its mode, and a symbolic link is written
/// through to its target (the rename happens in the target's directory).
/// A target that exists and is not a regular file (`/dev/null`, a named
/// pipe, a terminal) is written in place: renaming over it would replace
/// the device or pipe itself.
///
/// Writing through its [`Write`] implementation starts the disk write of
/// the data every 8 MiB as it goes, so that the flush that
/// [`commit`](Self::commit) waits for is left with little to do. Past
/// 64 MiB, the rest of a large output is written around the page cache
/// where the file system allows it (`O_DIRECT`, Linux): it is then not
/// cached after the run.
#[derive(Debug)]
pub struct OutputFile {
    file: File,
    /// The temporary file and the final path, until committed.
    pending: Option<(PathBuf, PathBuf)>,
    /// Bytes written through [`Write`] since the last write-back started.
    unsent: u64,
    /// Bytes written through [`Write`] so far.
    written: u64,
    /// Writes past `DIRECT_FROM`, while the file system takes them.
    direct: Option<DirectWriter>,
    /// Direct writing was tried (it is tried once).
    direct_tried: bool,
}

/// How many bytes written to an [`OutputFile`] start a write-back of what
/// is in the page cache. The commit waits until the data is on disk: left
/// to the end, that wait is an eighth of a run with both cores idle;
/// started as the output grows, the disk writes it while the run goes on.
const WRITE_BACK_BYTES: u64 = 8 << 20;

impl OutputFile {
    /// Opens the output for `target`.
    ///
    /// # Errors
    /// The target is a directory (`IsADirectory`), or the temporary file
    /// (or the device) cannot be created. The error does not name the
    /// path: the caller does.
    pub fn create(target: &Path) -> io::Result<Self> {
        let target = resolve_links(target);
        match fs::metadata(&target) {
            Ok(m) if m.is_dir() => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "it is a directory",
                ))
            }
            Ok(m) if !m.is_file() => {
                let file = OpenOptions::new().write(true).open(&target)?;
                return Ok(Self::new(file, None));
            }
            _ => {}
        }
        let existing = fs::metadata(&target).ok().map(|m| m.permissions());
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        };
        let (file, temp) = create_temp(&dir)?;
        if let Some(permissions) = existing {
            // Keep the mode of the file we replace.
            file.set_permissions(permissions)?;
        }
        Ok(Self::new(file, Some((temp, target))))
    }

    fn new(file: File, pending: Option<(PathBuf, PathBuf)>) -> Self {
        Self {
            file,
            pending,
            unsent: 0,
            written: 0,
            direct: None,
            direct_tried: false,
        }
    }

    /// The temporary file, while it exists (for a signal handler that
    /// removes it).
    pub fn temp_path(&self) -> Option<&Path> {
        self.pending.as_ref().map(|(temp, _)| temp.as_path())
    }

    /// A second handle on the same file, for a separate buffered writer
    /// (which then writes all of the output: the two do not mix).
    ///
    /// # Errors
    /// The operating system's.
    pub fn try_clone(&self) -> io::Result<File> {
        self.file.try_clone()
    }

    /// Flushes the data to disk and renames the file to its target.
    ///
    /// # Errors
    /// The flush or the rename failed; the temporary file is removed and
    /// the target is left as it was.
    pub fn commit(mut self) -> io::Result<()> {
        self.flush()?;
        if let Some(mut d) = self.direct.take() {
            // The last partial block, through the page cache.
            let (at, tail) = d.take_staged();
            direct::write_all_at(&self.file, &tail, at)?;
        }
        let Some((temp, target)) = self.pending.take() else {
            return Ok(());
        };
        let result = self
            .file
            .sync_data()
            .and_then(|()| fs::rename(&temp, &target));
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result
    }
}

impl OutputFile {
    /// Writes `buf` through the page cache; a write that crosses
    /// `DIRECT_FROM` stops at a block boundary, where direct writing may
    /// start.
    fn write_buffered(&mut self, buf: &[u8]) -> io::Result<usize> {
        let buf = if self.written < DIRECT_FROM && !self.direct_tried {
            let to_block = (DIRECT_FROM - self.written) as usize;
            buf.get(..to_block).unwrap_or(buf)
        } else {
            buf
        };
        let n = self.file.write(buf)?;
        self.written += n as u64;
        self.unsent += n as u64;
        // Only a file committed by renaming is flushed at the end; a
        // device or pipe written in place is left alone.
        if self.unsent >= WRITE_BACK_BYTES && self.pending.is_some() {
            self.unsent = 0;
            start_write_back(&self.file);
        }
        Ok(n)
    }

    /// Starts direct writing once the output has reached `DIRECT_FROM`.
    fn try_direct(&mut self) {
        self.direct_tried = true;
        let Some((temp, _)) = &self.pending else {
            return;
        };
        debug_assert_eq!(self.written % BLOCK as u64, 0);
        self.direct = DirectWriter::open(temp, self.written);
    }

    /// Direct writing is refused here: the staged bytes and everything
    /// after them go through the page cache.
    fn leave_direct(&mut self) -> io::Result<()> {
        if let Some(mut d) = self.direct.take() {
            let (at, staged) = d.take_staged();
            direct::write_all_at(&self.file, &staged, at)?;
            self.file.seek(SeekFrom::Start(at + staged.len() as u64))?;
        }
        Ok(())
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written >= DIRECT_FROM && !self.direct_tried {
            self.try_direct();
        }
        let Some(d) = &mut self.direct else {
            return self.write_buffered(buf);
        };
        match d.write(buf) {
            Ok(n) => {
                self.written += n as u64;
                Ok(n)
            }
            // The file system takes no direct write (nothing of `buf` was
            // taken).
            Err(e) if e.kind() == io::ErrorKind::Unsupported => {
                self.leave_direct()?;
                self.write_buffered(buf)
            }
            Err(e) => Err(e),
        }
    }

    /// Writes what the page cache holds and the staged whole blocks; less
    /// than one block may stay staged until [`commit`](Self::commit).
    fn flush(&mut self) -> io::Result<()> {
        if let Some(d) = &mut self.direct {
            match d.write_blocks() {
                Err(e) if e.kind() == io::ErrorKind::Unsupported => self.leave_direct()?,
                r => r?,
            }
        }
        self.file.flush()
    }
}

/// Asks the kernel to start writing the file's dirty pages to disk without
/// waiting for them. Only a hint: an error changes nothing, as the commit's
/// flush writes and checks everything.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn start_write_back(file: &File) {
    use std::os::fd::AsRawFd;
    // SAFETY: `sync_file_range` reads no memory of ours; the descriptor is
    // open for as long as `file` is borrowed. Offset 0 and length 0 cover
    // the whole file; pages already being written are skipped.
    let _ = unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
}

#[cfg(not(target_os = "linux"))]
fn start_write_back(_: &File) {}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Some((temp, _)) = self.pending.take() {
            let _ = fs::remove_file(temp);
        }
    }
}

/// Follows symbolic links at `target` to the file they name (a dangling
/// link names the file it would create).
fn resolve_links(target: &Path) -> PathBuf {
    let mut path = target.to_owned();
    // A bound keeps a link cycle from looping; the open then fails.
    for _ in 0..40 {
        match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => match fs::read_link(&path) {
                Ok(next) if next.is_absolute() => path = next,
                Ok(next) => {
                    path = match path.parent() {
                        Some(parent) => parent.join(next),
                        None => next,
                    }
                }
                Err(_) => break,
            },
            _ => break,
        }
    }
    path
}

/// Creates a new, empty temporary file in `dir` (mode `0666` minus the
/// umask on Unix).
fn create_temp(dir: &Path) -> io::Result<(File, PathBuf)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut last = None;
    for _ in 0..16 {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!(".urikey-{}-{n}-{nanos:08x}.tmp", std::process::id());
        let path = dir.join(name);
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o666);
        }
        match options.open(&path) {
            Ok(file) => return Ok((file, path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("cannot create a temporary file")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("urikey-out-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn output_written_past_the_write_back_size_is_whole() {
        let dir = scratch_dir("write-back");
        let target = dir.join("out.txt");
        let mut out = OutputFile::create(&target).unwrap();
        let piece: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
        let pieces = (WRITE_BACK_BYTES >> 20) * 2 + 1;
        for _ in 0..pieces {
            out.write_all(&piece).unwrap();
        }
        assert!(!target.exists(), "nothing under the target before commit");
        out.commit().unwrap();
        let written = fs::read(&target).unwrap();
        assert_eq!(written.len() as u64, pieces << 20);
        assert!(written.chunks(1 << 20).all(|c| c == piece.as_slice()));
        fs::remove_dir_all(dir).unwrap();
    }

    /// Pieces of 1 MiB and 13 bytes, numbered, up to `total` bytes.
    fn pieces(total: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut n = 0usize;
        while n < total {
            let len = ((1 << 20) + 13).min(total - n);
            out.push((0..len).map(|i| ((n + i) % 253) as u8).collect());
            n += len;
        }
        out
    }

    #[test]
    fn a_large_output_written_around_the_page_cache_is_whole() {
        let dir = scratch_dir("direct");
        let target = dir.join("out.txt");
        let mut out = OutputFile::create(&target).unwrap();
        let total = DIRECT_FROM as usize + (9 << 20) + 777;
        let pieces = pieces(total);
        for (k, p) in pieces.iter().enumerate() {
            out.write_all(p).unwrap();
            if k == 70 {
                // A flush in the middle leaves the block grid intact.
                out.flush().unwrap();
            }
        }
        let direct_ok = DirectWriter::open(out.temp_path().unwrap(), 0).is_some();
        assert_eq!(
            out.direct.is_some(),
            direct_ok,
            "direct writing where it is available"
        );
        out.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), pieces.concat());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_refused_direct_write_goes_through_the_page_cache() {
        let dir = scratch_dir("refused");
        if !direct::refuses_misaligned_writes_in(&dir) {
            eprintln!(
                "skipped: the temporary directory's file system does not refuse a misaligned direct write"
            );
            fs::remove_dir_all(dir).unwrap();
            return;
        }
        let target = dir.join("out.txt");
        let mut out = OutputFile::create(&target).unwrap();
        let total = DIRECT_FROM as usize + (6 << 20) + 5;
        let pieces = pieces(total);
        let mut refused = false;
        for p in &pieces {
            out.write_all(p).unwrap();
            if let (Some(d), false) = (&mut out.direct, refused) {
                // From here on the kernel refuses the direct writes.
                d.misalign();
                refused = true;
            }
        }
        assert!(out.direct.is_none(), "direct writing stopped when refused");
        out.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), pieces.concat());
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn output_appears_only_when_committed() {
        let dir = scratch_dir("commit");
        let target = dir.join("out.txt");
        let mut out = OutputFile::create(&target).unwrap();
        out.write_all(b"x\n").unwrap();
        assert!(!target.exists());
        out.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"x\n");
        let mut dropped = OutputFile::create(&target).unwrap();
        dropped.write_all(b"partial").unwrap();
        drop(dropped);
        assert_eq!(fs::read(&target).unwrap(), b"x\n");
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file left"
        );
        fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn output_keeps_modes_and_writes_through_links() {
        use std::os::unix::fs::{symlink, PermissionsExt};
        let dir = scratch_dir("modes");
        let target = dir.join("kept.txt");
        fs::write(&target, b"old").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
        OutputFile::create(&target).unwrap().commit().unwrap();
        let mode = fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);

        let link = dir.join("link.txt");
        symlink("kept.txt", &link).unwrap();
        let mut out = OutputFile::create(&link).unwrap();
        out.write_all(b"new").unwrap();
        out.commit().unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&target).unwrap(), b"new");

        let fresh = dir.join("fresh.txt");
        OutputFile::create(&fresh).unwrap().commit().unwrap();
        let mode = fs::metadata(&fresh).unwrap().permissions().mode() & 0o777;
        // Linux reports the umask in /proc/self/status.
        let umask = fs::read_to_string("/proc/self/status").ok().and_then(|s| {
            let line = s.lines().find(|l| l.starts_with("Umask:"))?.to_owned();
            u32::from_str_radix(line.trim_start_matches("Umask:").trim(), 8).ok()
        });
        if let Some(umask) = umask {
            assert_eq!(mode, 0o666 & !umask, "a new file gets 0666 minus the umask");
        }
        fs::remove_dir_all(dir).unwrap();
    }
}
