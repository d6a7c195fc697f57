//! The three phases that turn a batch of chunks into output, one file
//! each: `scan.rs` (phase 1), `insert.rs` (phase 2), `emit.rs` (phase 3).
//!
//! 1. [`ChunkState::scan`] (parallel over chunks): every line becomes a key and a
//!    fingerprint, or an [`Invalid`] record; fingerprints are bucketed by
//!    shard.
//! 2. [`ShardState::insert_batch`] (parallel over shards): each shard inserts its
//!    buckets in chunk order and flags the lines that were new.
//! 3. The writer thread gathers the selected lines of each chunk, in chunk
//!    order, from the chunk and the key arena into its output buffer
//!    ([`ChunkState::gather_selected`]), and writes that buffer in large pieces.
//!    Only `surt` and `hash` keys, which are not in memory as printed, are
//!    formatted first, in parallel over chunks ([`ChunkState::render`]). With
//!    counts, [`ChunkState::collect_uniques`] runs instead, serially.
//!
//! Because every shard sees its lines in input order, which line of a key
//! is "first" never depends on threads, chunk size or batch boundaries.

use std::sync::atomic::{AtomicU32, Ordering};

use crate::uri::key::Keyer;

use super::prefetch::prefetch_item;
use super::Problem;
use crate::engine::input::chunk::Chunk;
use crate::engine::seen::shard::Pending;

/// Flag bit of a line whose key had not been seen before.
const NEW: u32 = 1 << 31;

/// Where a piece of output lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Src {
    /// The chunk's bytes.
    Chunk,
    /// The key arena.
    Arena,
}

/// A run of output bytes: consecutive selected lines that lie back to
/// back in the same place are written as one piece.
#[derive(Clone, Copy, Debug)]
struct Run {
    src: Src,
    start: u32,
    end: u32,
}

/// A valid line: its place in the chunk and where its key is.
#[derive(Clone, Copy, Debug)]
struct LineRec {
    /// Line start within the chunk.
    start: u32,
    /// Line length, without `\n` and `\r`.
    len: u32,
    /// Key start within the chunk, or within the arena.
    key_start: u32,
    /// Key length.
    key_len: u32,
    /// The key is in the arena (it differs from the input bytes).
    key_in_arena: bool,
    /// A `\n` follows the line in the chunk (no `\r`, not the end), so
    /// the writer can print the line with it without reading the chunk.
    newline_follows: bool,
    /// The shard of the key's fingerprint.
    shard: u8,
}

/// An invalid line.
#[derive(Clone, Copy, Debug)]
pub struct Invalid {
    /// Index of the line in its chunk (0-based, blank lines counted).
    pub ordinal: u32,
    /// Line start within the chunk.
    pub start: u32,
    /// Line length, without `\n` and `\r`.
    pub len: u32,
    /// Offset of the offending byte within the line.
    pub index: u32,
    /// What was wrong.
    pub problem: Problem,
}

/// What phase 1 needs besides the chunk.
pub struct ScanConfig<'a> {
    /// Turns lines into keys.
    pub keyer: &'a Keyer,
    /// Longest accepted line.
    pub max_line_bytes: usize,
    /// Keep the key bytes of every valid line (needed to print keys and
    /// for exact mode).
    pub keep_keys: bool,
}

/// One chunk and everything the phases compute about it. Reused from batch
/// to batch so its buffers keep their capacity.
#[derive(Default)]
pub struct ChunkState {
    /// The chunk being processed.
    pub chunk: Option<Chunk>,
    recs: Vec<LineRec>,
    arena: Vec<u8>,
    buckets: Vec<Vec<Pending>>,
    flags: Vec<AtomicU32>,
    /// Invalid lines, in order.
    pub invalid: Vec<Invalid>,
    /// Lines in the chunk (blank and invalid included).
    pub lines: u64,
    /// Blank lines in the chunk.
    pub blank: u64,
    /// Valid lines of the run before this chunk: the sequence number of
    /// its first valid line once the run spills.
    pub seq_base: u64,
    /// Rendered output (after phase 3, `surt`/`hash` keys only).
    pub out: Vec<u8>,
    /// The unquoted column of a `--csv` line.
    field_buf: Vec<u8>,
}

impl ChunkState {
    /// The chunk's bytes (empty when there is no chunk).
    pub fn bytes(&self) -> &[u8] {
        self.chunk.as_ref().map_or(&[], |c| c.bytes())
    }

    /// Entries of shard `s` (valid lines whose key falls in it).
    pub fn bucket_len(&self, s: usize) -> usize {
        self.buckets.get(s).map_or(0, Vec::len)
    }

    /// Number of valid lines.
    pub fn valid(&self) -> u64 {
        self.recs.len() as u64
    }

    /// The bytes of a valid line.
    fn line(&self, rec: &LineRec) -> &[u8] {
        let start = rec.start as usize;
        self.bytes()
            .get(start..start + rec.len as usize)
            .unwrap_or_default()
    }

    /// The key of a valid line (empty unless keys were kept).
    fn key(&self, rec: &LineRec) -> &[u8] {
        let start = rec.key_start as usize;
        let range = start..start + rec.key_len as usize;
        let src = if rec.key_in_arena {
            &self.arena[..]
        } else {
            self.bytes()
        };
        src.get(range).unwrap_or_default()
    }

    /// The key of bucket entry `e`'s line (empty unless keys were kept).
    fn entry_key(&self, e: &Pending) -> &[u8] {
        self.recs
            .get(e.at as usize)
            .map_or(&[], |rec| self.key(rec))
    }

    /// Asks for the record of bucket entry `e`'s line, which
    /// [`entry_key`](Self::entry_key) reads.
    fn prefetch_entry(&self, e: &Pending) {
        prefetch_item(&self.recs, e.at as usize);
    }

    /// The bytes of an invalid line (cut to the line limit).
    pub fn invalid_line(&self, inv: &Invalid) -> &[u8] {
        let start = inv.start as usize;
        self.bytes()
            .get(start..start + inv.len as usize)
            .unwrap_or_default()
    }

    /// Whether valid line `i` was new, and its id in its shard.
    fn flag(&self, i: usize) -> (bool, u32) {
        let f = self.flags[i].load(Ordering::Relaxed);
        (f & NEW != 0, f & !NEW)
    }
}

mod emit;
mod insert;
mod scan;

pub use emit::{Render, UniqueSpan, Uniques, OWNED};
pub use insert::{ShardState, KNOWN};
