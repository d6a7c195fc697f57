//! Larger than memory: when the seen-set would pass the memory limit, the
//! rest of the input is decided on disk.
//!
//! At the batch where the limit would be passed the in-memory set stops
//! growing ("frozen"): it holds every key of the input before that point,
//! and a later line whose key it holds is a duplicate, decided at once.
//! Every other later line is undecided. For each one, phase 2 appends a
//! 24-byte record (fingerprint, sequence number) to one of 256 partition
//! files chosen by the fingerprint's top 8 bits, and the writer thread
//! appends an entry for it to the lines file, in input order (see
//! [`entries`]). When the input is a mapped file (or bytes in memory)
//! and the line prints as a slice of it (the line itself, or a `uri` key
//! that is its own bytes), the entry only says where that slice is,
//! about 4 bytes; otherwise (streams, stdin, formatted keys) it carries
//! the printed bytes. The input is never read twice, but a mapped input
//! stays mapped until the end. Sequence numbers count valid lines from
//! the start of the run.
//!
//! At the end (see [`resolve`]) each partition is read back in order,
//! which is sequence order, into a small table of its own, on every worker
//! thread at once: the first record of a fingerprint is that key's first
//! line, the later ones are duplicates. A partition whose distinct keys do
//! not fit the memory budget is split by the next 8 bits of the
//! fingerprint first. The selected lines are marked in a bitmap, one bit
//! per line since the run spilled (10 MB for 80 M lines, counted against
//! the budget). With `--count`, each partition yields instead a count file
//! of selected sequence numbers with their counts, sorted, and the count files
//! are merged. Then the lines file is read once more, and the selected
//! entries are copied to the output (from the mapped input for slice
//! entries, whose pages are mapped ahead and released behind), written
//! by a thread of its own. The output is byte for byte the in-memory one:
//! the frozen set answers exactly as the full set would for the keys it
//! holds, and for the other keys "first" is decided among the records of
//! one fingerprint, which are in input order.
//!
//! With `--exact` a record also carries the key (its length, a `u32`, and
//! its bytes after the 24 bytes), the frozen set is asked by key, and
//! partitions are resolved by key; fingerprints still choose partitions.
//!
//! Everything lives in one directory created under the temporary
//! directory and removed when the run ends, however it ends.

mod entries;
mod files;
mod resolve;

pub use entries::EntryWriter;
pub use files::{Partitions, SpillDir, SpillWriter};
pub use resolve::{bitmap_bytes, finish, Spilled};

/// Bits of the fingerprint that choose a top-level partition (256
/// partitions: 16 per shard).
pub const PARTITION_BITS: u32 = 8;

/// Size of one record in a partition file: fingerprint (low, high) and
/// sequence number, little-endian `u64`s.
pub const RECORD_BYTES: usize = 24;

/// Buffer of each partition writer: 256 of them take 8 MiB.
pub const PARTITION_BUFFER: usize = 32 << 10;

/// Tuning of the spill, fixed by the memory limit (and by tests).
#[derive(Clone, Copy, Debug)]
pub struct SpillTuning {
    /// Most distinct keys a partition may hold in memory while it is
    /// resolved (each worker thread resolves one at a time, so this is the
    /// budget's share of one thread); beyond it the partition is split.
    pub partition_keys: usize,
    /// Injected failure (tests): writes fail with "no space left on
    /// device" once this many bytes were written to spill files.
    pub fail_after_bytes: Option<u64>,
    /// Records carry the full key (`--exact`), and partitions are resolved
    /// by key.
    pub exact: bool,
}

/// Bytes a key takes while its partition is resolved, with room to spare:
/// its 12.8-byte slot and 4-byte id at a load of at least 67 % (25 bytes),
/// its first sequence number and its count (16).
pub const RESOLVE_BYTES_PER_KEY: usize = 64;
