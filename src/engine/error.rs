//! Errors that stop a dedup run (bad lines never do: they are data).

use std::fmt;
use std::io;

use super::input::Compression;

/// Why a run stopped before its output was complete.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An input could not be opened (missing, unreadable, a directory...).
    Open {
        /// The input as the user named it.
        path: String,
        /// What the operating system said.
        source: io::Error,
    },
    /// An input failed while being read or decompressed.
    Read {
        /// The input as the user named it.
        path: String,
        /// `Some(Compression::Gzip)` or `Some("zstd")` when the input was compressed.
        compression: Option<Compression>,
        /// Bytes of (decompressed) input read before the failure.
        offset: u64,
        /// What the reader or decoder said.
        source: io::Error,
    },
    /// An input's content cannot be read in its format from some point on
    /// (a WARC record cut short, a Parquet file that does not parse or has
    /// no such column, ...).
    Format {
        /// The input as the user named it.
        path: String,
        /// The format it was read as.
        format: &'static str,
        /// 1-based record (or row) number, 0 when the fault is the file's.
        record: u64,
        /// Byte offset of the record (decompressed).
        byte: u64,
        /// What is wrong.
        message: String,
    },
    /// The output could not be written (a closed pipe is reported as this
    /// too, with [`io::ErrorKind::BrokenPipe`]).
    Write(io::Error),
    /// A temporary file of a run larger than its memory limit could not be
    /// written or read (a full disk, for example).
    Spill {
        /// The temporary directory the files were in.
        dir: std::path::PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
    /// The seen-store of [`Config::prior`](super::Config::prior) failed
    /// (a damaged block, a full disk for the new keys...).
    Store(super::store::StoreError),
    /// The Redis set of [`Config::prior`](super::Config::prior) failed
    /// (unreachable, out of memory...).
    #[cfg(feature = "redis")]
    Redis(super::redis::RedisSetError),
    /// The configuration is unusable (zero chunk size, ...).
    Config(String),
    /// The input needs what this build leaves out (a Parquet input
    /// without the feature `parquet`).
    Unsupported(String),
    /// A thread of the run could not be started.
    Thread {
        /// Which thread (or pool of threads).
        what: String,
        /// What the operating system said.
        source: io::Error,
    },
    /// The observer asked the run to stop
    /// ([`Observer::should_stop`](super::Observer::should_stop)).
    Interrupted,
}

impl Error {
    /// True when the output went to a reader that has gone away.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Write(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Open { path, .. } => write!(f, "cannot open {path}"),
            Error::Read {
                path,
                compression: Some(c),
                offset,
                ..
            } => write!(
                f,
                "cannot decompress {path} (corrupt or truncated {c} data after {offset} \
                 decompressed bytes)"
            ),
            Error::Read {
                path,
                compression: None,
                offset,
                ..
            } => {
                write!(f, "cannot read {path} after {offset} bytes")
            }
            Error::Format {
                path,
                format,
                record: 0,
                message,
                ..
            } => write!(f, "cannot read {path} as {format}: {message}"),
            Error::Format {
                path,
                format,
                record,
                byte,
                message,
            } => write!(
                f,
                "cannot read {path} as {format}: record {record} (byte {byte}): {message}"
            ),
            Error::Write(_) => f.write_str("cannot write output"),
            Error::Spill { dir, .. } => {
                write!(f, "cannot use temporary files in {}", dir.display())
            }
            Error::Store(e) => write!(f, "{e}"),
            #[cfg(feature = "redis")]
            Error::Redis(e) => write!(f, "{e}"),
            Error::Config(msg) | Error::Unsupported(msg) => f.write_str(msg),
            Error::Thread { what, .. } => write!(f, "cannot start {what}"),
            Error::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Open { source, .. }
            | Error::Read { source, .. }
            | Error::Spill { source, .. }
            | Error::Thread { source, .. }
            | Error::Write(source) => Some(source),
            Error::Store(e) => e.source(),
            #[cfg(feature = "redis")]
            Error::Redis(e) => e.source(),
            Error::Config(_)
            | Error::Unsupported(_)
            | Error::Format { .. }
            | Error::Interrupted => None,
        }
    }
}
