//! One run file: a sorted, immutable set of 128-bit fingerprints, written
//! once and never changed.
//!
//! ```text
//!  offset              bytes            what
//!  0                   64               header: magic "UKSEENRN", format version (u32),
//!                                       keys per block (u32, 64), key count (u64),
//!                                       directory bits P (u32), zeros, XXH3-64 of bytes 0..56
//!  64                  W × n            the fingerprints, ascending, each big-endian
//!                                       without its top ⌊P/8⌋ bytes (W = 16 − ⌊P/8⌋)
//!  64 + Wn             8 × ⌈n/64⌉       XXH3-64 of each block of 64 keys, seeded with
//!                                       the block's index
//!  …                   8 × (2^P + 1)    directory: entry p = number of keys whose top P
//!                                       bits are below p (the last entry is n)
//!  …                   16               trailer: XXH3-64 of the two sections above,
//!                                       magic "UKSEENED"
//! ```
//!
//! Integers are little-endian. The top P bits of every key are those of its
//! directory entry, so its top ⌊P/8⌋ bytes are not stored: 15 bytes a key
//! from 8 Ki keys on, 14 from 2 Mi keys on. The file's size follows from
//! its header, so a truncated file is found at open. The header, the block checksums and the
//! directory are checked when the run is opened; they stay in memory (P is
//! chosen so that there are 32 to 64 keys per directory entry: 0.19 to 0.38
//! bytes per key in all). The fingerprints are memory-mapped and read only
//! where a lookup falls: the directory entry of a fingerprint's top P bits
//! gives the range of keys that share them (about 32, 512 bytes), searched
//! by bisection (on the stored bytes: the range shares the rest). The blocks that range covers are checked against their
//! checksums the first time any lookup touches them (a bit per block
//! remembers it), so damaged data is an error, never a wrong answer.

// Run files are memory-mapped read-only (see `RunFile`).
#![allow(unsafe_code)]

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed, Xxh3};

use super::super::prefetch::{prefetch, prefetch_item};
use super::error::StoreError;

/// First bytes of a run file.
pub const RUN_MAGIC: [u8; 8] = *b"UKSEENRN";
/// Last bytes of a run file.
pub const RUN_END: [u8; 8] = *b"UKSEENED";
/// The run format this build writes and reads.
pub const RUN_VERSION: u32 = 1;
/// Bytes of the header.
pub const HEADER_BYTES: u64 = 64;
/// Fingerprints per checksummed block (at most 1 KiB).
pub const BLOCK_KEYS: u64 = 64;
/// Bytes of the trailer.
const TRAILER_BYTES: u64 = 16;
/// Keys per directory entry the writer aims at (at least this many, fewer
/// than twice as many).
const KEYS_PER_ENTRY: u64 = 32;
/// How many lookups ahead [`RunFile::contains_sorted`] asks for the key a
/// lookup will read (its directory entry: twice as far).
const AHEAD: usize = 16;
/// Keys either side of where a key is expected that a lookup's prefetch
/// covers: the walk from there is rarely longer.
const NEAR: u64 = 4;
/// Most directory bits (2³² entries: 32 GiB of directory, for 2³⁷ keys).
const MAX_DIR_BITS: u32 = 32;

/// Directory bits for a run of about `keys` keys.
pub fn dir_bits_for(keys: u64) -> u32 {
    let entries = keys / KEYS_PER_ENTRY;
    if entries < 2 {
        0
    } else {
        (63 - entries.leading_zeros()).min(MAX_DIR_BITS)
    }
}

/// Where everything lies in a run of `keys` keys with `dir_bits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Number of fingerprints.
    pub keys: u64,
    /// Directory bits P.
    pub dir_bits: u32,
}

impl Layout {
    /// Number of checksummed blocks.
    pub fn blocks(&self) -> u64 {
        self.keys.div_ceil(BLOCK_KEYS)
    }

    /// Bytes of a stored key: 16 less the whole bytes the directory
    /// implies.
    pub fn key_bytes(&self) -> u64 {
        16 - u64::from(self.dir_bits / 8)
    }

    /// Offset of the block checksums.
    pub fn sums_offset(&self) -> u64 {
        HEADER_BYTES + self.key_bytes() * self.keys
    }

    /// The bits of a fingerprint below its directory bits: all a lookup
    /// compares within a directory entry, and all that is read of a stored
    /// key. A stored key keeps whole bytes, so with directory bits that are
    /// not a multiple of 8 it also holds a few of the directory's bits;
    /// those are not read, so that iteration and lookup agree on every
    /// file, even one whose stored bits and directory disagree.
    #[inline]
    pub fn low_mask(&self) -> u128 {
        u128::MAX >> self.dir_bits
    }

    /// Entries of the directory.
    pub fn dir_entries(&self) -> u64 {
        (1u64 << self.dir_bits) + 1
    }

    /// Offset of the directory.
    pub fn dir_offset(&self) -> u64 {
        self.sums_offset() + 8 * self.blocks()
    }

    /// Offset of the trailer.
    pub fn trailer_offset(&self) -> u64 {
        self.dir_offset() + 8 * self.dir_entries()
    }

    /// Size of the whole file.
    pub fn file_bytes(&self) -> u64 {
        self.trailer_offset() + TRAILER_BYTES
    }

    /// The directory entry of `fp`.
    #[inline]
    pub fn entry_of(&self, fp: u128) -> usize {
        if self.dir_bits == 0 {
            0
        } else {
            (fp >> (128 - self.dir_bits)) as usize
        }
    }
}

/// The header's bytes.
fn encode_header(layout: Layout) -> [u8; HEADER_BYTES as usize] {
    let mut h = [0u8; HEADER_BYTES as usize];
    h[0..8].copy_from_slice(&RUN_MAGIC);
    h[8..12].copy_from_slice(&RUN_VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&(BLOCK_KEYS as u32).to_le_bytes());
    h[16..24].copy_from_slice(&layout.keys.to_le_bytes());
    h[24..28].copy_from_slice(&layout.dir_bits.to_le_bytes());
    let sum = xxh3_64(&h[..56]);
    h[56..64].copy_from_slice(&sum.to_le_bytes());
    h
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Reads a header: the layout and the header's checksum.
fn decode_header(path: &Path, h: &[u8]) -> Result<(Layout, u64), StoreError> {
    if h.len() < HEADER_BYTES as usize || h[0..8] != RUN_MAGIC {
        return Err(StoreError::corrupt(path, "not a run file (bad magic)"));
    }
    let sum = u64_at(h, 56);
    if xxh3_64(&h[..56]) != sum {
        return Err(StoreError::corrupt(path, "header checksum mismatch"));
    }
    let version = u32_at(h, 8);
    if version > RUN_VERSION {
        return Err(StoreError::NewerFormat {
            path: path.to_owned(),
            found: version,
            supported: RUN_VERSION,
        });
    }
    if u32_at(h, 12) != BLOCK_KEYS as u32 {
        return Err(StoreError::corrupt(path, "unexpected block size"));
    }
    let layout = Layout {
        keys: u64_at(h, 16),
        dir_bits: u32_at(h, 24),
    };
    if layout.dir_bits > MAX_DIR_BITS || layout.keys > u64::MAX / 64 {
        return Err(StoreError::corrupt(path, "header out of range"));
    }
    Ok((layout, sum))
}

/// What a finished run file is, as the manifest records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunMeta {
    /// Number of fingerprints.
    pub keys: u64,
    /// Size of the file.
    pub bytes: u64,
    /// The header's checksum.
    pub header_sum: u64,
    /// The trailer's checksum of the block checksums and the directory:
    /// it covers every key, so it ties the manifest to this very content.
    pub content_sum: u64,
}

/// Writes a run file from fingerprints given in ascending order.
pub struct RunWriter {
    path: PathBuf,
    out: BufWriter<File>,
    dir_bits: u32,
    keys: u64,
    last: Option<u128>,
    block: Vec<u8>,
    sums: Vec<u64>,
    dir: Vec<u64>,
    /// The next directory entry not filled yet.
    next_entry: usize,
}

impl RunWriter {
    /// Creates (or truncates) `path` for a run of about `expected` keys (an
    /// upper bound: it sets the directory's size).
    ///
    /// # Errors
    /// [`StoreError::Io`].
    pub fn create(path: &Path, expected: u64) -> Result<Self, StoreError> {
        let file = File::create(path).map_err(|e| StoreError::io(path, e))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        // The header is written last, over these zeros.
        out.write_all(&[0u8; HEADER_BYTES as usize])
            .map_err(|e| StoreError::io(path, e))?;
        let dir_bits = dir_bits_for(expected);
        let entries = (1usize << dir_bits) + 1;
        Ok(Self {
            path: path.to_owned(),
            out,
            dir_bits,
            keys: 0,
            last: None,
            block: Vec::with_capacity((BLOCK_KEYS * 16) as usize),
            sums: Vec::with_capacity(usize::try_from(expected.div_ceil(BLOCK_KEYS)).unwrap_or(0)),
            dir: vec![0; entries],
            next_entry: 1,
        })
    }

    /// Appends `fp`, which must not be below the last one (an equal one is
    /// skipped).
    ///
    /// # Errors
    /// [`StoreError::Io`]; a fingerprint below the last one is a bug of the
    /// caller, reported as [`StoreError::Corrupt`] of the file being
    /// written.
    pub fn push(&mut self, fp: u128) -> Result<(), StoreError> {
        match self.last {
            Some(last) if fp == last => return Ok(()),
            Some(last) if fp < last => {
                return Err(StoreError::corrupt(
                    &self.path,
                    "fingerprints given out of order while writing",
                ))
            }
            _ => {}
        }
        self.last = Some(fp);
        let entry = Layout {
            keys: 0,
            dir_bits: self.dir_bits,
        }
        .entry_of(fp);
        while self.next_entry <= entry {
            self.dir[self.next_entry] = self.keys;
            self.next_entry += 1;
        }
        let width = Layout {
            keys: 0,
            dir_bits: self.dir_bits,
        }
        .key_bytes() as usize;
        self.block
            .extend_from_slice(&fp.to_be_bytes()[16 - width..]);
        self.keys += 1;
        if self.block.len() == BLOCK_KEYS as usize * width {
            self.end_block()?;
        }
        Ok(())
    }

    /// Number of fingerprints written so far.
    #[cfg(test)]
    pub(crate) fn len(&self) -> u64 {
        self.keys
    }

    fn end_block(&mut self) -> Result<(), StoreError> {
        let index = self.sums.len() as u64;
        self.sums.push(xxh3_64_with_seed(&self.block, index));
        self.out
            .write_all(&self.block)
            .map_err(|e| StoreError::io(&self.path, e))?;
        self.block.clear();
        Ok(())
    }

    /// Writes the checksums, the directory, the trailer and the header,
    /// and syncs the file to disk.
    ///
    /// # Errors
    /// [`StoreError::Io`].
    pub fn finish(mut self) -> Result<RunMeta, StoreError> {
        if !self.block.is_empty() {
            self.end_block()?;
        }
        while self.next_entry < self.dir.len() {
            self.dir[self.next_entry] = self.keys;
            self.next_entry += 1;
        }
        let layout = Layout {
            keys: self.keys,
            dir_bits: self.dir_bits,
        };
        let path = self.path.clone();
        let io = |e: io::Error| StoreError::io(&path, e);
        let mut hasher = Xxh3::new();
        let mut buf = Vec::with_capacity(1 << 16);
        for words in [&self.sums[..], &self.dir[..]] {
            for chunk in words.chunks(8192) {
                buf.clear();
                for w in chunk {
                    buf.extend_from_slice(&w.to_le_bytes());
                }
                hasher.update(&buf);
                self.out.write_all(&buf).map_err(io)?;
            }
        }
        let content_sum = hasher.digest();
        self.out.write_all(&content_sum.to_le_bytes()).map_err(io)?;
        self.out.write_all(&RUN_END).map_err(io)?;
        let file = self.out.into_inner().map_err(|e| io(e.into_error()))?;
        let header = encode_header(layout);
        file.write_all_at(&header, 0).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(RunMeta {
            keys: layout.keys,
            bytes: layout.file_bytes(),
            header_sum: u64_at(&header, 56),
            content_sum,
        })
    }
}

/// An open run file: its directory and block checksums in memory, its
/// fingerprints mapped.
#[derive(Debug)]
pub struct RunFile {
    path: PathBuf,
    layout: Layout,
    header_sum: u64,
    content_sum: u64,
    map: memmap2::Mmap,
    sums: Box<[u64]>,
    dir: Box<[u64]>,
    /// One bit per block: checked against its checksum already.
    checked: Box<[AtomicU64]>,
}

impl RunFile {
    /// Opens `path`, checking its size, header, checksums section,
    /// directory and trailer.
    ///
    /// # Errors
    /// [`StoreError::Io`] (a missing file is `NotFound`),
    /// [`StoreError::Corrupt`], [`StoreError::NewerFormat`].
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let file = File::open(path).map_err(|e| StoreError::io(path, e))?;
        let size = file.metadata().map_err(|e| StoreError::io(path, e))?.len();
        let mut header = [0u8; HEADER_BYTES as usize];
        if size < HEADER_BYTES + TRAILER_BYTES {
            return Err(StoreError::corrupt(
                path,
                format!("truncated: {size} bytes, less than a header and a trailer"),
            ));
        }
        file.read_exact_at(&mut header, 0)
            .map_err(|e| StoreError::io(path, e))?;
        let (layout, header_sum) = decode_header(path, &header)?;
        if size != layout.file_bytes() {
            return Err(StoreError::corrupt(
                path,
                format!(
                    "{size} bytes where its header says {} (truncated or extended)",
                    layout.file_bytes()
                ),
            ));
        }
        let meta_len = layout.file_bytes() - layout.sums_offset();
        let mut meta = vec![0u8; usize::try_from(meta_len).unwrap_or(usize::MAX)];
        file.read_exact_at(&mut meta, layout.sums_offset())
            .map_err(|e| StoreError::io(path, e))?;
        let body = meta.len() - TRAILER_BYTES as usize;
        if meta[body + 8..] != RUN_END {
            return Err(StoreError::corrupt(path, "bad end magic"));
        }
        let content_sum = u64_at(&meta, body);
        if xxh3_64(&meta[..body]) != content_sum {
            return Err(StoreError::corrupt(
                path,
                "checksum of the block checksums and directory mismatch",
            ));
        }
        let words = |from: usize, n: u64| -> Box<[u64]> {
            (0..n as usize)
                .map(|i| u64_at(&meta, from + 8 * i))
                .collect()
        };
        let sums = words(0, layout.blocks());
        let dir = words(8 * layout.blocks() as usize, layout.dir_entries());
        let sorted = dir.windows(2).all(|w| w[0] <= w[1]);
        if dir.first() != Some(&0) || dir.last() != Some(&layout.keys) || !sorted {
            return Err(StoreError::corrupt(path, "directory out of order"));
        }
        // SAFETY: run files are immutable once written (a new file is
        // written for every change and renamed only into a new name; see
        // the module docs of `store`), so the mapped bytes do not change
        // under us. A file truncated by another program would raise
        // SIGBUS: the store's directory belongs to urikey.
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| StoreError::io(path, e))?;
        let checked = (0..layout.blocks().div_ceil(64))
            .map(|_| AtomicU64::new(0))
            .collect();
        Ok(Self {
            path: path.to_owned(),
            layout,
            header_sum,
            content_sum,
            map,
            sums,
            dir,
            checked,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of fingerprints.
    pub fn key_count(&self) -> u64 {
        self.layout.keys
    }

    /// The header's checksum.
    pub fn header_sum(&self) -> u64 {
        self.header_sum
    }

    /// The checksum of its block checksums and directory (see
    /// [`RunMeta::content_sum`]).
    pub fn content_sum(&self) -> u64 {
        self.content_sum
    }

    /// The layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Bytes held in memory for this run (directory, checksums, bits).
    pub fn index_bytes(&self) -> u64 {
        8 * (self.sums.len() + self.dir.len() + self.checked.len()) as u64
    }

    /// The stored low bits of the `i`-th fingerprint (not checked).
    #[inline]
    fn low(&self, i: u64) -> u128 {
        // The 16 bytes that end with the key (the header lies before the
        // first one): one fixed-size load, then the key's bytes kept.
        let end = (HEADER_BYTES + self.layout.key_bytes() * (i + 1)) as usize;
        let mut b = [0u8; 16];
        if let Some(s) = self.map.get(end.wrapping_sub(16)..end) {
            b.copy_from_slice(s);
        }
        u128::from_be_bytes(b) & self.layout.low_mask()
    }

    /// The `i`-th fingerprint, which lies in directory entry `e` (not
    /// checked).
    #[inline]
    fn key(&self, e: usize, i: u64) -> u128 {
        let top = if self.layout.dir_bits == 0 {
            0
        } else {
            (e as u128) << (128 - self.layout.dir_bits)
        };
        top | self.low(i)
    }

    /// The bytes of block `b`.
    fn block_bytes(&self, b: u64) -> &[u8] {
        let block = self.layout.key_bytes() * BLOCK_KEYS;
        let start = HEADER_BYTES + block * b;
        let end = (start + block).min(self.layout.sums_offset());
        self.map
            .get(start as usize..end as usize)
            .unwrap_or_default()
    }

    /// Checks block `b` against its checksum, once.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] naming the block.
    #[inline]
    pub fn check_block(&self, b: u64) -> Result<(), StoreError> {
        let (word, bit) = ((b / 64) as usize, 1u64 << (b % 64));
        let Some(w) = self.checked.get(word) else {
            return Err(StoreError::corrupt(&self.path, "block out of range"));
        };
        if w.load(Ordering::Relaxed) & bit != 0 {
            return Ok(());
        }
        let want = self.sums.get(b as usize).copied().unwrap_or(0);
        if xxh3_64_with_seed(self.block_bytes(b), b) != want {
            return Err(StoreError::corrupt(
                &self.path,
                format!(
                    "checksum mismatch in block {b} (keys {} on)",
                    b * BLOCK_KEYS
                ),
            ));
        }
        w.fetch_or(bit, Ordering::Relaxed);
        Ok(())
    }

    /// Sets `found[i]` for every `fps[i]` this run holds; `fps` is sorted
    /// ascending, and entries already found are skipped.
    ///
    /// Each lookup is a random read of the mapped keys: what the lookup
    /// [`AHEAD`] places on reads (its directory entry twice as far ahead,
    /// then the keys around where it is expected, or the blocks its first
    /// check hashes) is asked for early, so that several reads are in
    /// flight at once.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] when a block read fails its checksum.
    pub fn contains_sorted(&self, fps: &[u128], found: &mut [bool]) -> Result<(), StoreError> {
        if self.layout.keys == 0 {
            return Ok(());
        }
        for i in 0..fps.len().min(found.len()) {
            if let Some(&fp) = fps.get(i + 2 * AHEAD) {
                prefetch_item(&self.dir, self.layout.entry_of(fp));
            }
            if let Some(&fp) = fps.get(i + AHEAD) {
                self.prefetch_lookup(fp);
            }
            if !found[i] {
                found[i] = self.contains(fps[i])?;
            }
        }
        Ok(())
    }

    /// Asks for the bytes a lookup of `fp` will read: the blocks of its
    /// directory entry not checked yet (the check hashes them whole), or
    /// else the keys around where it is expected (the walk from there
    /// crosses a cache line about every other lookup).
    #[inline]
    fn prefetch_lookup(&self, fp: u128) {
        let e = self.layout.entry_of(fp);
        let (Some(&lo), Some(&hi)) = (self.dir.get(e), self.dir.get(e + 1)) else {
            return;
        };
        if lo >= hi {
            return;
        }
        let width = self.layout.key_bytes();
        let (mut from, mut to) = {
            let at = self.guess(fp, lo, hi);
            let near = at.saturating_sub(NEAR).max(lo)..(at + NEAR + 1).min(hi);
            (near.start, near.end)
        };
        for b in lo / BLOCK_KEYS..=(hi - 1) / BLOCK_KEYS {
            if !self.is_checked(b) {
                from = from.min(b * BLOCK_KEYS);
                to = to.max(((b + 1) * BLOCK_KEYS).min(self.layout.keys));
            }
        }
        // A key is read as the 16 bytes that end with it.
        let start = HEADER_BYTES + width * from - (16 - width);
        let end = HEADER_BYTES + width * to;
        let mut line = start & !63;
        while line < end {
            prefetch(&self.map, line as usize);
            line += 64;
        }
    }

    /// Whether block `b` was checked already.
    #[inline]
    fn is_checked(&self, b: u64) -> bool {
        self.checked
            .get((b / 64) as usize)
            .is_some_and(|w| w.load(Ordering::Relaxed) & (1 << (b % 64)) != 0)
    }

    /// Where `fp` is expected among the keys `lo..hi` of its directory
    /// entry: fingerprints are uniform, so the keys of an entry are spread
    /// evenly over the entry's share of them.
    #[inline]
    fn guess(&self, fp: u128, lo: u64, hi: u64) -> u64 {
        let rest = if self.layout.dir_bits == 0 {
            fp
        } else {
            fp << self.layout.dir_bits
        };
        let frac = (rest >> 64) as u64;
        let g = lo + ((u128::from(frac) * u128::from(hi - lo)) >> 64) as u64;
        g.min(hi - 1)
    }

    /// Whether this run holds `fp`.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] when a block read fails its checksum.
    #[inline]
    pub fn contains(&self, fp: u128) -> Result<bool, StoreError> {
        let e = self.layout.entry_of(fp);
        let (Some(&lo), Some(&hi)) = (self.dir.get(e), self.dir.get(e + 1)) else {
            return Ok(false);
        };
        if lo >= hi {
            return Ok(false);
        }
        for b in lo / BLOCK_KEYS..=(hi - 1) / BLOCK_KEYS {
            self.check_block(b)?;
        }
        // Every key of the range has the top bits of `fp`: from where it is
        // expected, a walk up or down (a few keys: the keys of an entry are
        // close to evenly spread).
        let mut at = self.guess(fp, lo, hi);
        let fp = fp & self.layout.low_mask();
        let k = self.low(at);
        if k < fp {
            while at + 1 < hi {
                at += 1;
                let k = self.low(at);
                if k >= fp {
                    return Ok(k == fp);
                }
            }
            Ok(false)
        } else {
            if k == fp {
                return Ok(true);
            }
            while at > lo {
                at -= 1;
                let k = self.low(at);
                if k <= fp {
                    return Ok(k == fp);
                }
            }
            Ok(false)
        }
    }

    /// Asks the kernel to read the fingerprints ahead (`sequential`: for a
    /// full pass) or not (`false`: for lookups).
    pub fn advise(&self, sequential: bool) {
        let advice = if sequential {
            memmap2::Advice::Sequential
        } else {
            memmap2::Advice::Random
        };
        let _ = self.map.advise(advice);
    }

    /// Every fingerprint in order, each block checked as it is reached.
    pub fn iter(&self) -> RunIter<'_> {
        RunIter {
            run: self,
            next: 0,
            checked_upto: 0,
            entry: 0,
        }
    }

    /// The directory entries (for `verify`).
    pub fn directory(&self) -> &[u64] {
        &self.dir
    }
}

/// The fingerprints of a run, in order; an error ends the iteration.
pub struct RunIter<'a> {
    run: &'a RunFile,
    next: u64,
    /// Blocks below this one were checked.
    checked_upto: u64,
    /// The directory entry of the next key.
    entry: usize,
}

impl Iterator for RunIter<'_> {
    type Item = Result<u128, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.run.layout.keys {
            return None;
        }
        let b = self.next / BLOCK_KEYS;
        if b >= self.checked_upto {
            if let Err(e) = self.run.check_block(b) {
                self.next = self.run.layout.keys;
                return Some(Err(e));
            }
            self.checked_upto = b + 1;
        }
        let dir = &self.run.dir;
        while dir.get(self.entry + 1).is_some_and(|&end| end <= self.next) {
            self.entry += 1;
        }
        let k = self.run.key(self.entry, self.next);
        self.next += 1;
        Some(Ok(k))
    }
}

/// Reads a whole small file (the manifest, the lock) as text.
pub fn read_text(path: &Path) -> Result<String, StoreError> {
    let mut s = String::new();
    File::open(path)
        .and_then(|mut f| f.read_to_string(&mut s))
        .map_err(|e| StoreError::io(path, e))?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fps(n: u64, seed: u64) -> Vec<u128> {
        let mut v: Vec<u128> = (0..n)
            .map(|i| xxhash_rust::xxh3::xxh3_128_with_seed(&i.to_le_bytes(), seed))
            .collect();
        v.sort_unstable();
        v
    }

    fn write_run(dir: &Path, name: &str, keys: &[u128]) -> (PathBuf, RunMeta) {
        let path = dir.join(name);
        let mut w = RunWriter::create(&path, keys.len() as u64).unwrap();
        for &k in keys {
            w.push(k).unwrap();
        }
        (path.clone(), w.finish().unwrap())
    }

    #[test]
    fn format_dir_bits_keep_32_to_64_keys_an_entry() {
        assert_eq!(dir_bits_for(0), 0);
        assert_eq!(dir_bits_for(63), 0);
        assert_eq!(dir_bits_for(64), 1);
        for n in [1000u64, 1 << 20, 100_000_000, 10_000_000_000] {
            let per = n / (1 << dir_bits_for(n));
            assert!((32..64).contains(&per), "{n}: {per}");
        }
    }

    #[test]
    fn format_round_trip_and_lookups() {
        let dir = tempfile::tempdir().unwrap();
        // Directory bits 0, 4, 7, 9 and 13: keys of 16 and 15 bytes, some
        // holding directory bits.
        for n in [0u64, 1, 63, 64, 65, 1000, 5000, 20_000, 300_000] {
            let keys = fps(n, 1);
            let (path, meta) = write_run(dir.path(), &format!("r{n}"), &keys);
            assert_eq!(meta.keys, n);
            assert_eq!(std::fs::metadata(&path).unwrap().len(), meta.bytes);
            let run = RunFile::open(&path).unwrap();
            assert_eq!(run.key_count(), n);
            assert_eq!(run.header_sum(), meta.header_sum);
            let back: Vec<u128> = run.iter().map(Result::unwrap).collect();
            assert_eq!(back, keys);
            for &k in &keys {
                assert!(run.contains(k).unwrap());
            }
            let others = fps(500, 2);
            let mut found = vec![false; others.len()];
            run.contains_sorted(&others, &mut found).unwrap();
            assert!(found.iter().all(|f| !f));
            // Edges of the key space.
            assert!(!run.contains(0).unwrap() || keys.contains(&0));
            assert!(!run.contains(u128::MAX).unwrap());
            // At most 16 bytes a key on disk from 8 Ki keys on.
            assert!(meta.bytes <= 16 * n + n / 2 + 200, "{n}: {}", meta.bytes);
            // Less than half a byte a key in memory.
            assert!(
                run.index_bytes() <= n / 2 + 64,
                "{n}: {}",
                run.index_bytes()
            );
        }
    }

    fn run_width(path: &Path) -> u64 {
        RunFile::open(path).unwrap().layout().key_bytes()
    }

    #[test]
    fn format_keys_shrink_as_the_directory_grows() {
        let dir = tempfile::tempdir().unwrap();
        for (n, width) in [(8191u64, 16), (8192, 15), (1 << 21, 14)] {
            let keys = fps(n, 4);
            let (path, meta) = write_run(dir.path(), "w", &keys);
            assert_eq!(run_width(&path), width, "{n}");
            if n >= 8192 {
                assert!(meta.bytes < 16 * n, "{n}: {}", meta.bytes);
            }
            let run = RunFile::open(&path).unwrap();
            let back: Vec<u128> = run.iter().map(Result::unwrap).collect();
            assert!(back == keys, "{n}");
            for k in keys.iter().step_by(97) {
                assert!(run.contains(*k).unwrap());
                assert!(!run.contains(*k ^ 1).unwrap());
                assert!(!run.contains(*k ^ (1 << 127)).unwrap());
            }
        }
    }

    #[test]
    fn format_writer_skips_equal_and_refuses_descending() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r");
        let mut w = RunWriter::create(&path, 3).unwrap();
        w.push(5).unwrap();
        w.push(5).unwrap();
        w.push(9).unwrap();
        assert!(w.push(7).unwrap_err().is_corrupt());
        assert_eq!(w.len(), 2);
        let meta = w.finish().unwrap();
        assert_eq!(meta.keys, 2);
    }

    #[test]
    fn format_damage_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let keys = fps(1000, 3);
        let (path, meta) = write_run(dir.path(), "r", &keys);
        let width = run_width(&path);
        let good = std::fs::read(&path).unwrap();
        // Truncated anywhere.
        for cut in [0, 10, 64, 500, good.len() - 1] {
            std::fs::write(&path, &good[..cut]).unwrap();
            let e = RunFile::open(&path).unwrap_err();
            assert!(e.is_corrupt(), "cut {cut}: {e}");
        }
        // A flipped bit in the header, the index or the trailer: at open.
        for at in [
            3usize,
            20,
            60,
            good.len() - 20,
            good.len() - 3,
            meta.bytes as usize - 100,
        ] {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            std::fs::write(&path, &bad).unwrap();
            assert!(RunFile::open(&path).unwrap_err().is_corrupt(), "byte {at}");
        }
        // A flipped bit in the data: at the first lookup in its block, and
        // in a full pass.
        let victim = 500usize;
        let mut bad = good.clone();
        bad[(HEADER_BYTES + width * victim as u64) as usize + 7] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        let run = RunFile::open(&path).unwrap();
        let e = run.contains(keys[victim]).unwrap_err();
        assert!(e.to_string().contains("block 7"), "{e}");
        assert!(run.iter().any(|r| r.is_err()));
        // Blocks far from the damage still answer.
        assert!(run.contains(keys[10]).unwrap());
    }
}
