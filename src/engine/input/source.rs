//! Opening inputs: memory maps for regular files, streams for everything
//! else, and decompression chosen by magic bytes.

// Memory maps of inputs: `MmapChoice::auto` is the caller's promise that
// nobody changes a file while it is mapped, and `map_file` relies on it.
#![allow(unsafe_code)]

use std::fmt;
use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::bytes::SharedBytes;
use super::compression::{decoder, sniff, Compression, SNIFF_BYTES};
use crate::engine::error::Error;

/// One input of a dedup run. Several inputs form one logical stream, in
/// the order given.
pub enum Input {
    /// A file: memory-mapped under [`MmapChoice::auto`] when it is a
    /// regular file (falling back to reads when mapping fails), streamed
    /// otherwise.
    Path(PathBuf),
    /// Standard input, streamed. Reported as `-`.
    Stdin,
    /// Bytes already in memory (tests, benchmarks, embedding programs).
    Bytes {
        /// Name used in reports.
        name: String,
        /// The content (compressed content is recognised too).
        bytes: Arc<[u8]>,
    },
    /// Any reader, streamed (compressed content is recognised too).
    Reader {
        /// Name used in reports.
        name: String,
        /// The reader.
        reader: Box<dyn Read + Send>,
    },
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Path(p) => f.debug_tuple("Path").field(p).finish(),
            Input::Stdin => f.write_str("Stdin"),
            Input::Bytes { name, bytes } => f
                .debug_struct("Bytes")
                .field("name", name)
                .field("len", &bytes.len())
                .finish(),
            Input::Reader { name, .. } => f
                .debug_struct("Reader")
                .field("name", name)
                .finish_non_exhaustive(),
        }
    }
}

impl Input {
    /// The name used in reports: the path as given, `-` for stdin.
    pub fn name(&self) -> String {
        match self {
            Input::Path(p) => p.display().to_string(),
            Input::Stdin => "-".to_owned(),
            Input::Bytes { name, .. } | Input::Reader { name, .. } => name.clone(),
        }
    }

    /// The on-disk size when it is known up front (for progress).
    pub fn size_hint(&self) -> Option<u64> {
        match self {
            Input::Path(p) => std::fs::metadata(p)
                .ok()
                .filter(std::fs::Metadata::is_file)
                .map(|m| m.len()),
            Input::Bytes { bytes, .. } => Some(bytes.len() as u64),
            Input::Stdin | Input::Reader { .. } => None,
        }
    }
}

impl core::fmt::Debug for Source {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Source::Slice(_) => "Source::Slice",
            Source::Stream { .. } => "Source::Stream",
            Source::Members(_) => "Source::Members",
        })
    }
}

/// An opened input, ready to be cut into chunks.
pub enum Source {
    /// All bytes are addressable at once (mmap or memory).
    Slice(SharedBytes),
    /// Bytes arrive in order from a reader.
    Stream {
        /// The (decompressing) reader.
        reader: Box<dyn Read + Send>,
        /// `Some(Compression::Gzip)`, `"zstd"`, `"xz"` or `"bzip2"` when decompressing.
        compression: Option<Compression>,
    },
    /// Gzip members decoded in parallel (a mapped file, or a pipe), read a
    /// decoded segment at a time (or as a stream).
    Members(Box<dyn super::blocks::MemberBlocks>),
}

impl Source {
    /// The content as a stream, and its compression.
    pub fn into_reader(self) -> (Box<dyn Read + Send>, Option<Compression>) {
        match self {
            Source::Slice(bytes) => (Box::new(Cursor::new(bytes)), None),
            Source::Stream {
                reader,
                compression,
            } => (reader, compression),
            Source::Members(reader) => (reader, Some(Compression::Gzip)),
        }
    }
}

/// Checks that a path input can be opened and is not a directory, so a
/// bad name fails the run before any output is written. A named pipe,
/// socket or device is only looked up: opening a FIFO waits for its
/// writer, and closing it again could end the writer (`SIGPIPE`) or leave
/// the run's own open waiting for a writer that has gone.
///
/// # Errors
/// [`Error::Open`] naming the path.
pub fn check_path(path: &Path) -> Result<(), Error> {
    let open_err = |source| Error::Open {
        path: path.display().to_string(),
        source,
    };
    let kind = std::fs::metadata(path).map_err(open_err)?.file_type();
    if !kind.is_file() && !kind.is_dir() {
        return Ok(());
    }
    let file = File::open(path).map_err(open_err)?;
    let meta = file.metadata().map_err(open_err)?;
    if meta.is_dir() {
        return Err(open_err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        )));
    }
    Ok(())
}

/// True when the rejects file `rejects` names one of the file `inputs` or
/// the `output` (the same regular file, by device and inode, or the same
/// absolute path where one does not exist yet): written to a temporary
/// file and renamed at the end of the run, it would replace that file.
pub fn rejects_would_replace(rejects: &Path, inputs: &[Input], output: Option<&Path>) -> bool {
    let named = inputs.iter().filter_map(|i| match i {
        Input::Path(p) => Some(p.as_path()),
        _ => None,
    });
    named.chain(output).any(|other| same_file(rejects, other))
}

/// True when `a` and `b` name the same regular file: the same existing
/// file (on Unix, the same device and inode, so links and other spellings
/// count), or the same absolute path where one does not exist yet. A
/// device such as `/dev/null` is written in place, never replaced.
fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return matches!(
            (std::path::absolute(a), std::path::absolute(b)),
            (Ok(x), Ok(y)) if x == y
        );
    };
    if !ma.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        ma.dev() == mb.dev() && ma.ino() == mb.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (ma, mb);
        matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
    }
}

/// Whether the engine may memory-map inputs that are regular files (and
/// stdin when it is one). Mapping is faster than reading (no copy, no
/// read calls), but only sound while no other process changes the file:
/// so the safe default reads, and mapping is a choice the caller makes
/// with [`MmapChoice::auto`], which is `unsafe`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MmapChoice(bool);

impl MmapChoice {
    /// Never map: every input is read as a stream (the default).
    pub const fn never() -> Self {
        Self(false)
    }

    /// Map inputs that are non-empty regular files; fall back to reading
    /// when a map fails. The `urikey` command uses this.
    ///
    /// # Safety
    /// The caller promises that no other process truncates or modifies an
    /// input file while a run reads it. A truncated mapped file makes a
    /// read of its lost pages raise SIGBUS, which kills the process, and a
    /// file changed in place may change lines between the moment they are
    /// keyed and the moment they are written: undefined behaviour in Rust
    /// terms either way.
    pub const unsafe fn auto() -> Self {
        Self(true)
    }

    /// True when inputs may be mapped.
    pub const fn is_auto(self) -> bool {
        self.0
    }
}

/// Opens `input`; raw bytes consumed are added to `raw_read` as they are
/// read (for progress), except for slices, whose chunks are counted by the
/// caller. Regular files (and stdin when it is one) are mapped only under
/// [`MmapChoice::auto`]. A multi-member gzip input decompresses on
/// `threads` threads (0: one per core).
///
/// # Errors
/// [`Error::Open`] when the input cannot be opened, [`Error::Read`] when its
/// first bytes cannot be read.
pub fn open(
    input: Input,
    mmap: MmapChoice,
    threads: usize,
    raw_read: &Arc<AtomicU64>,
) -> Result<Source, Error> {
    let name = input.name();
    let open_err = |source| Error::Open {
        path: name.clone(),
        source,
    };
    match input {
        Input::Path(path) => {
            let file = File::open(&path).map_err(open_err)?;
            let meta = file.metadata().map_err(open_err)?;
            if meta.is_dir() {
                return Err(open_err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    "is a directory",
                )));
            }
            // A file of size 0 is read as a stream: files of `/proc` and
            // `/sys` say 0 and have content.
            if mmap.0 && meta.is_file() && meta.len() > 0 {
                // SAFETY: whoever made `mmap` with `MmapChoice::auto`
                // promised that no other process changes the inputs while
                // the run reads them (see `map_file`).
                if let Ok(map) = unsafe { map_file(&file) } {
                    return Ok(slice_source(SharedBytes::from_map(map), threads, raw_read));
                }
            }
            stream_source(
                &name,
                Box::new(CountingReader::new(file, raw_read)),
                threads,
            )
        }
        Input::Stdin => {
            if let Some(map) = mmap.0.then(map_stdin).flatten() {
                return Ok(slice_source(SharedBytes::from_map(map), threads, raw_read));
            }
            stream_source(
                &name,
                Box::new(CountingReader::new(io::stdin(), raw_read)),
                threads,
            )
        }
        Input::Bytes { bytes, .. } => Ok(slice_source(
            SharedBytes::from_memory(bytes),
            threads,
            raw_read,
        )),
        Input::Reader { reader, .. } => stream_source(
            &name,
            Box::new(CountingReader::new(reader, raw_read)),
            threads,
        ),
    }
}

/// Maps stdin when it is a non-empty regular file read from its start
/// (`urikey dedup < file`), like a named file.
#[cfg(unix)]
fn map_stdin() -> Option<memmap2::Mmap> {
    use std::io::Seek;
    use std::os::fd::AsFd;
    let mut file = File::from(io::stdin().as_fd().try_clone_to_owned().ok()?);
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() == 0 || file.stream_position().ok()? != 0 {
        return None;
    }
    // SAFETY: only called under `MmapChoice::auto`, whose caller promised
    // what `map_file` asks for.
    unsafe { map_file(&file) }.ok()
}

#[cfg(not(unix))]
fn map_stdin() -> Option<memmap2::Mmap> {
    None
}

/// Maps `file` read-only and advises the kernel of sequential access.
///
/// # Safety
/// A memory map is only sound while nobody changes the file under it. If
/// another process truncates the file while it is mapped, reading the lost
/// pages raises SIGBUS and the process dies; if it rewrites bytes in place,
/// lines may change between the moment they are read and the moment they
/// are written. Both are the same trade-off `grep`-like tools make; callers
/// who cannot rule them out should stream the input instead (pipe it in).
unsafe fn map_file(file: &File) -> io::Result<memmap2::Mmap> {
    // SAFETY: the caller accepts the truncation/modification risk above.
    let map = unsafe { memmap2::Mmap::map(file)? };
    #[cfg(unix)]
    {
        // Only a hint: failing to give it changes nothing but speed.
        let _ = map.advise(memmap2::Advice::Sequential);
    }
    Ok(map)
}

/// A slice source, or a decompressing stream over it when its magic bytes
/// say it is compressed.
fn slice_source(bytes: SharedBytes, threads: usize, raw_read: &Arc<AtomicU64>) -> Source {
    let compression = sniff(bytes.as_slice());
    match compression {
        None => Source::Slice(bytes),
        // Members decompressed on the run's threads (see `gzip.rs`).
        Some(Compression::Gzip) => Source::Members(Box::new(super::gzip::MemberReader::new(
            bytes,
            gzip_threads(threads),
            raw_read,
        ))),
        Some(kind) => {
            let reader = CountingReader::new(SharedReader { bytes, pos: 0 }, raw_read);
            Source::Stream {
                reader: decoder(kind, Box::new(reader)),
                compression,
            }
        }
    }
}

/// The gzip workers for a run on `threads` threads (0: one per core).
fn gzip_threads(threads: usize) -> usize {
    if threads == 0 {
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
    } else {
        threads
    }
}

/// A stream source: peeks at the first bytes to recognise compression.
/// gzip is decoded member-parallel on `threads` threads (0: one per core)
/// when there are more than one (`gzip_pipe.rs`).
fn stream_source(
    name: &str,
    mut reader: Box<dyn Read + Send>,
    threads: usize,
) -> Result<Source, Error> {
    let mut prefix = Vec::with_capacity(SNIFF_BYTES as usize);
    read_prefix(&mut reader, &mut prefix).map_err(|source| Error::Read {
        path: name.to_owned(),
        compression: None,
        offset: 0,
        source,
    })?;
    let compression = sniff(&prefix);
    let whole: Box<dyn Read + Send> = Box::new(Cursor::new(prefix).chain(reader));
    let threads = gzip_threads(threads);
    Ok(match compression {
        None => Source::Stream {
            reader: whole,
            compression,
        },
        Some(Compression::Gzip) if threads > 1 => Source::Members(Box::new(
            super::gzip_pipe::PipeMembers::new(whole, threads).map_err(|source| Error::Read {
                path: name.to_owned(),
                compression,
                offset: 0,
                source,
            })?,
        )),
        Some(kind) => Source::Stream {
            reader: decoder(kind, whole),
            compression,
        },
    })
}

/// Reads up to [`SNIFF_BYTES`] into `prefix`: a pipe may deliver them in
/// several reads.
fn read_prefix(reader: &mut Box<dyn Read + Send>, prefix: &mut Vec<u8>) -> io::Result<()> {
    reader.take(SNIFF_BYTES).read_to_end(prefix).map(drop)
}

/// Reads a shared byte slice from a position.
struct SharedReader {
    bytes: SharedBytes,
    pos: usize,
}

impl Read for SharedReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let all = self.bytes.as_slice();
        let rest = all.get(self.pos..).unwrap_or_default();
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Ok(n)
    }
}

/// Adds the bytes read to a shared counter.
struct CountingReader<R> {
    inner: R,
    counter: Arc<AtomicU64>,
}

impl<R> CountingReader<R> {
    fn new(inner: R, counter: &Arc<AtomicU64>) -> Self {
        Self {
            inner,
            counter: Arc::clone(counter),
        }
    }
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_files_are_mapped_only_when_the_caller_chose_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("urls.txt");
        std::fs::write(&path, b"http://a.example/\n").unwrap();
        let raw = Arc::new(AtomicU64::new(0));
        let read = open(Input::Path(path.clone()), MmapChoice::default(), 0, &raw).unwrap();
        assert!(matches!(read, Source::Stream { .. }));
        // SAFETY: nothing changes the test's own file while it is mapped.
        let auto = unsafe { MmapChoice::auto() };
        let mapped = open(Input::Path(path), auto, 0, &raw).unwrap();
        assert!(matches!(mapped, Source::Slice(_)));
    }

    #[test]
    fn input_sniff_by_magic_only() {
        assert_eq!(sniff(b"\x1f\x8b\x08\x00"), Some(Compression::Gzip));
        assert_eq!(sniff(b"\x28\xb5\x2f\xfd"), Some(Compression::Zstd));
        assert_eq!(sniff(b"\xfd7zXZ\x00\x00\x04"), Some(Compression::Xz));
        assert_eq!(sniff(b"BZh91AY&SY"), Some(Compression::Bzip2));
        assert_eq!(
            sniff(b"BZh9\x17\x72\x45\x38\x50\x90"),
            Some(Compression::Bzip2)
        );
        assert_eq!(sniff(b"BZh1 is a word\n"), None);
        assert_eq!(sniff(b"BZh9"), None);
        assert_eq!(sniff(b"http"), None);
        assert_eq!(sniff(b"\x1f"), None);
        assert_eq!(sniff(b""), None);
    }
}
