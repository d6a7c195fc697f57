//! The dedup engine: many-GB newline-delimited URL dumps in, the first line
//! of every canonical key out, in input order.
//!
//! ```text
//!  inputs ──► reader thread ──► chunks ──► batch ──► phase 1 (rayon, per chunk)
//!  (mmap,      (cut at \n,                           line → uri key → XXH3-128,
//!   stdin, gz,  BOM, long                            bucket by shard
//!   zst, xz,    lines)                                  │
//!   bz2)                                                │
//!                                                       ▼
//!                                          phase 2 (rayon, per shard)
//!                                          insert in chunk order, flag new lines
//!                                                       │
//!                                                       ▼
//!                                          writer thread (batch by batch, in order)
//!                                          selected lines gathered from the chunk
//!                                          and key arena into 1 MiB writes, then
//!                                          the batch is handed back for reuse
//! ```
//!
//! While the writer writes one batch, the workers process the next and the
//! reader cuts the one after: at most three batches exist at a time, each
//! of four chunks per thread (at least eight).
//! `surt` and `hash` keys, which are not in memory as printed, are
//! formatted on the workers after phase 2.
//!
//! Inputs that are regular files are memory-mapped when the caller chose
//! [`MmapChoice::auto`]; everything else, and compressed inputs (gzip, zstd,
//! xz and bzip2, recognised by their magic bytes), is streamed;
//! multi-member gzip is decoded on the run's threads. A batch holds a bounded number of chunks, so memory grows with
//! the number of distinct keys only, never with the input size.
//!
//! # Output does not depend on threads or chunking
//!
//! Every shard of the seen-set inserts its fingerprints batch by batch and,
//! inside a batch, chunk by chunk in input order. The line that is "first"
//! for a key is therefore the first one in the input, whatever the number of
//! threads, the chunk size or where batches fall.
//!
//! # Collision bound
//!
//! By default the seen-set keeps only the 128-bit XXH3 fingerprint of each
//! `uri` key, and of that, 105 bits: a 12-byte slot and its share of the
//! bucket header hold the low 101 bits, and the table that holds it implies
//! the top 4 (the shard; 16.7 bytes per distinct key on average, see
//! `engine/seen/fpset/`). Two different keys are merged only if those 105 bits
//! collide. For `n` distinct keys the birthday bound gives a probability of
//! at most about `n² / 2¹⁰⁶` that any collision happens at all: about
//! 1.2 × 10⁻¹⁴ for 10⁹ keys, 1.2 × 10⁻¹² for 10¹⁰ keys, 1.2 × 10⁻⁸ for
//! 10¹² keys. When that is not good enough, [`Config::exact`] keeps the
//! full keys (memory then grows with their total length) and never merges
//! different keys.
//!
//! # Larger than memory
//!
//! [`Config::memory_limit`] (by default [`memory::default_limit`]) bounds
//! the seen-set: before phase 2 of each batch the engine checks whether the
//! set, grown by every fingerprint of the batch, could pass the limit less
//! the fixed working set. At the first batch where it could, the set stops
//! growing and the rest of the run is decided on disk, in a directory under
//! [`Config::temp_dir`] removed when the run ends: keys the set holds are
//! duplicates at once; every other line gets a 24-byte record in one of
//! 256 partition files (by the fingerprint's top 8 bits) and an entry in a
//! lines file: where its output lies in a mapped input, or its output
//! bytes. At the end each partition is resolved in input order, the
//! selected lines are marked in a bitmap, and they are copied to the
//! output as the lines file is read back, so the
//! output is the in-memory one, byte for byte, with any thread count and
//! for every [`Select`]. A failure of the temporary files is
//! [`Error::Spill`], naming the directory. With [`Config::exact`] the
//! records carry the full keys, and partitions are resolved by key.
//!
//! # Across runs
//!
//! [`Config::prior`] makes a run consult a set of keys known before it, a
//! [`store::SeenStore`] on disk, for every key the run finds first (see
//! [`PriorKeys`]): the output is then what one run over everything the
//! store was fed, then this input, writes for this input.
//!
//! # Counts
//!
//! With [`Select::Counts`] nothing can be written before the whole input is
//! read: the engine keeps, per distinct key, its output line (or, for a
//! mapped input, where the line lies), an 8-byte count and a 4-byte id
//! next to its fingerprint.

// Unsafe code only where a module allows it, saying why (maps, madvise,
// FFI, prefetch): each `allow(unsafe_code)` below marks one.
#![deny(unsafe_code)]

// The rooms, along the data's way: bytes in (`input`: opening, mapping,
// decompression, chunks of lines, the formats' readers), keys and their
// insertion (`batch`), the seen-sets (`seen`), bytes out (`output`); the
// pipeline of a run that drives them (`pipeline`), its spill past memory
// (`spill`) and the seen-store across runs (`store`, consulted through
// `prior`, fed batch by batch through `batched_store`; `redis`, a seen-set
// in Redis shared by many clients, one too).
mod batch;
mod batched_store;
mod config;
mod error;
pub mod input;
pub mod line_keys;
pub mod memory;
mod observe;
mod output;
mod pipeline;
mod prefetch;
mod prior;
#[cfg(feature = "redis")]
pub mod redis;
mod rss;
pub(crate) mod seen;
mod share;
mod spill;
mod stats;
pub mod store;

pub use input::{formats, gzip, lines};

use core::fmt;

use crate::uri::key::KeyErrorKind;

pub use batched_store::{BatchError, BatchedStore};
#[cfg(feature = "__internal-testing")]
pub use config::SpillHooks;
pub use config::{
    parse_format, worker_threads, Config, ConfigBuilder, ConfigError, DEFAULT_CHUNK_BYTES,
    MAX_CHUNK_BYTES, MAX_THREADS,
};
pub use error::Error;
pub use input::{rejects_would_replace, Input, MmapChoice, SharedBytes};
pub use observe::{Observer, Progress, Warning};
pub use output::file::OutputFile;
pub use pipeline::run;
pub use prior::PriorKeys;
pub use rss::peak_rss_bytes;
pub use seen::{OverLimit, SeenSet, Verdict};
pub use stats::{Phases, Stats};

/// What is printed for a selected line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Emit {
    /// The canonical key, in the keyer's format.
    #[default]
    Key,
    /// The first-seen line as it was (without `\r`).
    Original,
}

/// Take the URL from one column of each line; the whole line is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Field {
    /// 0-based column index.
    pub index: usize,
    /// Column separator.
    pub delimiter: u8,
    /// Read columns with RFC 4180 quoting (`"http://a/?x=1,2"`, `""` for a
    /// quote inside quotes) instead of splitting at every delimiter.
    pub csv: bool,
}

impl Field {
    /// Column `index` (0-based) of lines split at `delimiter`, without
    /// quoting.
    pub fn new(index: usize, delimiter: u8) -> Self {
        Self {
            index,
            delimiter,
            csv: false,
        }
    }

    /// The same column, read with RFC 4180 quoting.
    pub fn with_csv(mut self, csv: bool) -> Self {
        self.csv = csv;
        self
    }
}

/// Which lines are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Select {
    /// The first line of every key, in input order.
    #[default]
    Unique,
    /// Every line whose key was seen before, in input order.
    Duplicates,
    /// The first line of every key prefixed with the number of lines that
    /// had the key and a TAB (written at the end of the run). Ids inside a
    /// shard are 31-bit, so counts are exact up to 2³¹ distinct keys per
    /// shard (about 3.4 × 10¹⁰ in all).
    Counts,
}

/// Why a line is invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// The URL has no key (it did not parse, for example).
    Key(KeyErrorKind),
    /// The line is longer than [`Config::max_line_bytes`].
    LineTooLong,
    /// The line has fewer columns than [`Config::field`] asks for.
    MissingField,
    /// The column [`Config::field`] names is empty (or, under lenient
    /// reading, only whitespace); a record's URL is empty.
    EmptyField,
    /// A CDXJ line's or WAT record's JSON does not parse.
    BadJson,
    /// A URL value a format decoded (a CDXJ string's escapes, a Parquet
    /// value, a WARC header, a WAT page or link) holds a CR, LF or TAB.
    LineBreak,
}

impl Problem {
    /// A stable machine-readable name: the key error's name,
    /// `line-too-long`, `missing-field`, `empty-field`, `bad-json` or
    /// `line-break`.
    pub fn name(self) -> &'static str {
        match self {
            Problem::Key(kind) => kind.name(),
            Problem::LineTooLong => "line-too-long",
            Problem::MissingField => "missing-field",
            Problem::EmptyField => "empty-field",
            Problem::BadJson => "bad-json",
            Problem::LineBreak => "line-break",
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Key(kind) => write!(f, "{kind}"),
            Problem::LineTooLong => f.write_str("line too long"),
            Problem::MissingField => f.write_str("missing field"),
            Problem::EmptyField => f.write_str("empty field"),
            Problem::BadJson => f.write_str("JSON does not parse"),
            Problem::LineBreak => f.write_str("line break in value"),
        }
    }
}

/// An invalid line, as reported to the caller (in input order).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct InvalidLine<'a> {
    /// The input's name (`-` for stdin).
    pub source: &'a str,
    /// 1-based line number within that input (for record formats, the
    /// record number; for Parquet, the row number).
    pub line: u64,
    /// Offset of the offending byte within that (decompressed) input (for
    /// record formats, of the record; for Parquet, of the row group's
    /// column chunk).
    pub byte: u64,
    /// What was wrong.
    pub problem: Problem,
    /// The line, without `\n`/`\r`, cut to the line limit.
    pub text: &'a [u8],
}

impl fmt::Display for InvalidLine<'_> {
    /// The report format of every command: `<source>:<line>: byte <offset>: <reason>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: byte {}: {}",
            self.source, self.line, self.byte, self.problem
        )
    }
}

impl<'a> InvalidLine<'a> {
    /// The report of line `line` of `source`, whose `problem` is at byte
    /// `byte` of the input; `text` is the line.
    pub fn new(source: &'a str, line: u64, byte: u64, problem: Problem, text: &'a [u8]) -> Self {
        Self {
            source,
            line,
            byte,
            problem,
            text,
        }
    }

    /// Writes the `--rejects` record: `<source>:<line>:<byte>:<reason-name><TAB><line>\n`.
    ///
    /// # Errors
    /// The writer's error.
    pub fn write_record(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        write!(
            w,
            "{}:{}:{}:{}\t",
            self.source,
            self.line,
            self.byte,
            self.problem.name()
        )?;
        w.write_all(self.text)?;
        w.write_all(b"\n")
    }
}
