//! Cutting inputs into chunks that end just after a newline.
//!
//! A chunk never splits a line and never spans two inputs. Chunks aim at
//! `chunk_size` bytes; a line longer than `max_line_bytes` is cut short (its
//! first `max_line_bytes + 1` bytes end the chunk, flagged
//! [`Chunk::truncated_tail`]) and the rest of it is skipped, so memory
//! stays bounded even for a stream without a single newline.
//!
//! A line is "certainly too long" once `max_line_bytes + 2` bytes pass
//! without a newline: even after dropping a `\r` before the newline its
//! content exceeds the limit. Shorter lines always stay whole, so the
//! decision whether a line is too long never depends on where chunks fall.

use std::io::{self, Read};
use std::ops::Range;

use super::formats::{Extract, RecordPos};
use crate::engine::input::SharedBytes;
use crate::engine::Problem;

use super::lines::BOM;

impl core::fmt::Debug for ChunkData {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ChunkData").finish_non_exhaustive()
    }
}

/// The bytes of one chunk.
pub enum ChunkData {
    /// A range of the whole input, shared (a memory map, or the input's
    /// bytes in memory): a line can be noted by its offset in it.
    Shared(SharedBytes, Range<usize>),
    /// A range of a buffer that holds a part of the decoded input (a gzip
    /// segment, lines a record format wrote): an offset in it is not one
    /// in the input.
    Block(SharedBytes, Range<usize>),
    /// Bytes read from a stream.
    Owned(Vec<u8>),
}

impl core::fmt::Debug for Chunk {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Chunk")
            .field("input", &self.input)
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

/// A run of whole lines from one input.
pub struct Chunk {
    /// Index of the input (in the order given).
    pub input: usize,
    /// Offset of the chunk's first byte within its (decompressed) input.
    pub offset: u64,
    /// The bytes, ending with `\n` unless this is the end of the input or
    /// `truncated_tail` is set.
    pub data: ChunkData,
    /// The last line was longer than the limit and was cut short; the rest
    /// of it is not in any chunk.
    pub truncated_tail: bool,
    /// How the URL of each line is found.
    pub extract: Extract,
    /// For the lines a record format wrote: where each line comes from,
    /// and which lines stand for invalid records.
    pub records: Option<Box<RecordIndex>>,
}

/// Where the lines of a chunk written by a record format come from
/// ([`super::formats::records::Lines`]).
#[derive(Debug, Default)]
pub struct RecordIndex {
    /// The record of each line of the chunk, in order (empty when `first`
    /// gives them).
    pub pos: Vec<RecordPos>,
    /// The record of the first line, when every line is the record after
    /// the one before in the same place (the rows of a Parquet row group).
    pub first: Option<RecordPos>,
    /// The lines that stand for invalid records, by line index, in order.
    pub faults: Vec<RecordFault>,
    /// Bytes of the (decompressed) input read once the chunk's records
    /// were.
    pub input_end: u64,
}

impl RecordIndex {
    /// The record of line `ordinal` of the chunk.
    pub fn pos(&self, ordinal: usize) -> RecordPos {
        match (self.pos.get(ordinal), self.first) {
            (Some(&pos), _) => pos,
            (None, Some(first)) => RecordPos {
                record: first.record + ordinal as u64,
                byte: first.byte,
            },
            (None, None) => RecordPos::default(),
        }
    }
}

/// A line of a chunk that stands for an invalid record.
#[derive(Clone, Copy, Debug)]
pub struct RecordFault {
    /// Index of the line in the chunk.
    pub ordinal: u32,
    /// What is wrong.
    pub problem: Problem,
    /// Offset of the offending byte in the line.
    pub index: u32,
}

impl Chunk {
    /// The chunk's bytes.
    pub fn bytes(&self) -> &[u8] {
        match &self.data {
            ChunkData::Shared(all, range) | ChunkData::Block(all, range) => {
                all.as_slice().get(range.clone()).unwrap_or_default()
            }
            ChunkData::Owned(v) => v,
        }
    }

    /// The shared input the chunk is a range of, and where the range
    /// starts in it (`None` for bytes read from a stream or decoded: a
    /// spilled or counted run copies those lines instead of noting where
    /// they are).
    pub fn shared(&self) -> Option<(&SharedBytes, usize)> {
        match &self.data {
            ChunkData::Shared(all, range) => Some((all, range.start)),
            ChunkData::Block(..) | ChunkData::Owned(_) => None,
        }
    }

    /// Drops the chunk, releasing its mapped pages (see
    /// [`SharedBytes::release`]).
    pub fn release(self) {
        if let ChunkData::Shared(all, range) = self.data {
            all.release(range);
        }
    }
}

/// Limits shared by both cutters.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Target chunk size in bytes (at least 1).
    pub chunk_size: usize,
    /// Longest accepted line content, in bytes.
    pub max_line_bytes: usize,
}

impl Limits {
    /// Raw bytes without a newline after which a line is certainly too long.
    fn too_long(&self) -> usize {
        self.max_line_bytes.saturating_add(2)
    }
}

/// Where the next chunk of a slice ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// End of the chunk (exclusive).
    pub end: usize,
    /// The chunk ends with a too-long line cut short.
    pub truncated: bool,
    /// Where the following chunk starts (after the skipped rest of a
    /// too-long line).
    pub next: usize,
}

/// The chunk of `data` that starts at `start`, or `None` at the end.
pub fn cut_slice(data: &[u8], start: usize, limits: Limits) -> Option<Cut> {
    let len = data.len();
    if start >= len {
        return None;
    }
    let window_end = start.saturating_add(limits.chunk_size.max(1)).min(len);
    if window_end == len {
        return Some(Cut {
            end: len,
            truncated: false,
            next: len,
        });
    }
    if let Some(i) = memchr::memrchr(b'\n', &data[start..window_end]) {
        let end = start + i + 1;
        return Some(Cut {
            end,
            truncated: false,
            next: end,
        });
    }
    // The line starting at `start` is at least as long as the window.
    let limit = start
        .saturating_add(limits.too_long())
        .min(len)
        .max(window_end);
    if let Some(i) = memchr::memchr(b'\n', &data[window_end..limit]) {
        let end = window_end + i + 1;
        return Some(Cut {
            end,
            truncated: false,
            next: end,
        });
    }
    if limit == len {
        return Some(Cut {
            end: len,
            truncated: false,
            next: len,
        });
    }
    let end = start + limits.max_line_bytes + 1;
    let next = memchr::memchr(b'\n', &data[limit..]).map_or(len, |i| limit + i + 1);
    Some(Cut {
        end,
        truncated: true,
        next,
    })
}

/// The sizes the reader cuts chunks at, so that each batch ends with
/// small chunks.
///
/// The workers take a batch's chunks in order, and the batch's keys phase
/// ends when its last chunk is done. With chunks of one size, the worker
/// that takes the last chunk often starts it when the others are nearly
/// done (the writer thread had its core for a while), and they wait for
/// it. Ending each batch with a half and then a quarter chunk per worker
/// leaves them less to wait for (a run about 5% faster).
#[derive(Clone, Copy, Debug)]
pub struct ChunkShape {
    /// The full chunk size.
    pub chunk_size: usize,
    /// Chunks per batch.
    pub batch_len: usize,
    /// Worker threads.
    pub threads: usize,
}

impl ChunkShape {
    /// The size of the `k`-th chunk of the run (counted over all inputs;
    /// batches take `batch_len` chunks each, in order): the full size,
    /// but for the batch's last `threads + 1` chunks, a half and then
    /// quarters. One thread waits for no other: all chunks are full.
    pub fn size(&self, k: usize) -> usize {
        let tail = self.threads + 1;
        if self.threads < 2 || self.batch_len < 2 * tail {
            return self.chunk_size;
        }
        let left = self.batch_len - k % self.batch_len;
        let size = if left > tail {
            self.chunk_size
        } else if left == tail {
            self.chunk_size / 2
        } else {
            self.chunk_size / 4
        };
        size.max(1)
    }
}

/// Cuts a shared buffer into chunks (skipping a leading BOM).
pub struct SliceChunker {
    /// How the URL of each line is found.
    pub extract: Extract,
    bytes: SharedBytes,
    pos: usize,
    limits: Limits,
    input: usize,
}

impl SliceChunker {
    /// Chunks of `bytes`, which is input number `input`.
    pub fn new(bytes: SharedBytes, input: usize, limits: Limits) -> Self {
        let pos = if bytes.as_slice().starts_with(BOM) {
            BOM.len()
        } else {
            0
        };
        Self {
            extract: Extract::Line,
            bytes,
            pos,
            limits,
            input,
        }
    }

    /// Cuts the chunks from now on at about `size` bytes.
    pub fn set_chunk_size(&mut self, size: usize) {
        self.limits.chunk_size = size.max(1);
    }

    /// The next chunk and the raw bytes it moved past, or `None` at the end.
    pub fn next_chunk(&mut self) -> Option<(Chunk, u64)> {
        let data = self.bytes.as_slice();
        let cut = cut_slice(data, self.pos, self.limits)?;
        self.bytes.prefault(self.pos..cut.end);
        let chunk = Chunk {
            input: self.input,
            offset: self.pos as u64,
            data: ChunkData::Shared(self.bytes.clone(), self.pos..cut.end),
            truncated_tail: cut.truncated,
            extract: self.extract,
            records: None,
        };
        let consumed = (cut.next - self.pos) as u64;
        self.pos = cut.next;
        Some((chunk, consumed))
    }
}

/// Cuts a stream into chunks (skipping a leading BOM), reading at most
/// about `max(chunk_size, max_line_bytes + 2)` bytes ahead.
pub struct StreamChunker<R> {
    /// How the URL of each line is found.
    pub extract: Extract,
    reader: R,
    /// Unconsumed bytes; `buf[0]` is at input offset `offset`.
    buf: Vec<u8>,
    offset: u64,
    /// Bytes at the start of `buf` known to contain no newline.
    scanned: usize,
    eof: bool,
    started: bool,
    /// Discarding the rest of a too-long line.
    skipping: bool,
    /// The reader failed: the error, returned once the complete lines
    /// read before it are handed out.
    failed: Option<io::Error>,
    limits: Limits,
    input: usize,
}

/// A chunker of a stream of bytes: [`StreamChunker`] over a reader, or
/// `BlockChunker` over decoded gzip segments (`engine/input/blocks.rs`). The
/// reader drives either through this.
pub(crate) trait StreamChunks {
    /// The size to cut the next chunk at.
    fn set_chunk_size(&mut self, size: usize);
    /// The next chunk, `None` at the end.
    ///
    /// # Errors
    /// A read error, once the chunks before it were handed out.
    fn next_chunk(&mut self) -> io::Result<Option<Chunk>>;
    /// Bytes read so far, where a read error is reported.
    fn position(&self) -> u64;
}

/// Every chunk of `chunker`, and whether it ended on a read error.
#[cfg(test)]
pub(crate) fn collect_chunks(chunker: &mut impl StreamChunks) -> (Vec<Chunk>, bool) {
    let mut chunks = Vec::new();
    loop {
        match chunker.next_chunk() {
            Ok(Some(c)) => chunks.push(c),
            Ok(None) => return (chunks, false),
            Err(_) => return (chunks, true),
        }
    }
}

impl<R: Read> StreamChunker<R> {
    /// Chunks of `reader`, which is input number `input`.
    pub fn new(reader: R, input: usize, limits: Limits) -> Self {
        Self {
            extract: Extract::Line,
            reader,
            buf: Vec::new(),
            offset: 0,
            scanned: 0,
            eof: false,
            started: false,
            skipping: false,
            failed: None,
            limits,
            input,
        }
    }

    /// Reads until `buf` holds at least `want` bytes or the input ends.
    /// When the reader fails, the complete lines read before are kept (the
    /// partial last line is dropped; while skipping a too-long line, its
    /// rest goes as usual, and the lines after it stay) and the input ends
    /// there; the error comes after them ([`end`](Self::end)).
    fn fill_to(&mut self, want: usize) -> io::Result<()> {
        while !self.eof && self.buf.len() < want {
            let need = (want - self.buf.len()) as u64;
            match (&mut self.reader).take(need).read_to_end(&mut self.buf) {
                Ok(0) => self.eof = true,
                Ok(_) => {}
                Err(e) => {
                    let keep = memchr::memrchr(b'\n', &self.buf).map_or(0, |i| i + 1);
                    self.buf.truncate(keep);
                    self.scanned = 0;
                    self.failed = Some(e);
                    self.eof = true;
                }
            }
        }
        Ok(())
    }

    /// The end of the input: `None`, or the reader's error.
    fn end(&mut self) -> io::Result<Option<Chunk>> {
        match self.failed.take() {
            Some(e) => Err(e),
            None => Ok(None),
        }
    }

    /// Reads at least one more byte unless the input ended.
    fn fill_more(&mut self) -> io::Result<()> {
        let want = self.buf.len() + self.limits.chunk_size.clamp(1, 1 << 16);
        self.fill_to(want)
    }

    /// Takes the first `end` bytes of `buf` as a chunk.
    fn take_chunk(&mut self, end: usize, truncated: bool) -> Chunk {
        let cap = self.limits.chunk_size.max(self.buf.len() - end);
        let mut rest = Vec::with_capacity(cap.min(1 << 24));
        rest.extend_from_slice(&self.buf[end..]);
        let mut data = std::mem::replace(&mut self.buf, rest);
        data.truncate(end);
        let chunk = Chunk {
            input: self.input,
            offset: self.offset,
            data: ChunkData::Owned(data),
            truncated_tail: truncated,
            extract: self.extract,
            records: None,
        };
        self.offset += end as u64;
        self.scanned = 0;
        chunk
    }
}

impl<R: Read> StreamChunks for StreamChunker<R> {
    /// Cuts the chunks from now on at about `size` bytes.
    fn set_chunk_size(&mut self, size: usize) {
        self.limits.chunk_size = size.max(1);
    }

    /// The next chunk, or `None` at the end of the input.
    ///
    /// # Errors
    /// The reader's error; [`position`](Self::position) tells how far it got.
    fn next_chunk(&mut self) -> io::Result<Option<Chunk>> {
        if !self.started {
            self.started = true;
            self.fill_to(BOM.len())?;
            if self.buf.starts_with(BOM) {
                self.buf.drain(..BOM.len());
                self.offset = BOM.len() as u64;
            }
        }
        loop {
            if self.skipping {
                match memchr::memchr(b'\n', &self.buf) {
                    Some(i) => {
                        self.buf.drain(..=i);
                        self.offset += i as u64 + 1;
                        self.skipping = false;
                    }
                    None => {
                        self.offset += self.buf.len() as u64;
                        self.buf.clear();
                        if self.eof {
                            return self.end();
                        }
                        self.fill_more()?;
                        continue;
                    }
                }
                self.scanned = 0;
            }
            self.fill_to(self.limits.chunk_size.max(1))?;
            if self.buf.is_empty() {
                return self.end();
            }
            if self.eof && self.buf.len() < self.limits.chunk_size.max(1) {
                let end = self.buf.len();
                return Ok(Some(self.take_chunk(end, false)));
            }
            if let Some(i) = memchr::memrchr(b'\n', &self.buf[self.scanned..]) {
                let end = self.scanned + i + 1;
                return Ok(Some(self.take_chunk(end, false)));
            }
            self.scanned = self.buf.len();
            if self.buf.len() >= self.limits.too_long() {
                self.skipping = true;
                let end = self.limits.max_line_bytes + 1;
                return Ok(Some(self.take_chunk(end, true)));
            }
            if self.eof {
                let end = self.buf.len();
                return Ok(Some(self.take_chunk(end, false)));
            }
            self.fill_more()?;
        }
    }

    /// Bytes of the input read so far (for error messages).
    fn position(&self) -> u64 {
        self.offset + self.buf.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_shape_ends_each_batch_with_smaller_chunks() {
        let shape = ChunkShape {
            chunk_size: 800,
            batch_len: 8,
            threads: 2,
        };
        let sizes: Vec<usize> = (0..16).map(|k| shape.size(k)).collect();
        let batch = [800, 800, 800, 800, 800, 400, 200, 200];
        assert_eq!(sizes[..8], batch);
        assert_eq!(sizes[8..], batch);
        let four = ChunkShape {
            batch_len: 16,
            threads: 4,
            ..shape
        };
        assert_eq!(
            (0..16).map(|k| four.size(k)).collect::<Vec<_>>(),
            [[800; 11].as_slice(), &[400], &[200; 4]].concat()
        );
        for one in [
            ChunkShape {
                threads: 1,
                ..shape
            },
            ChunkShape {
                batch_len: 4,
                ..shape
            },
        ] {
            assert!((0..16).all(|k| one.size(k) == 800));
        }
        let tiny = ChunkShape {
            chunk_size: 2,
            ..shape
        };
        assert_eq!(tiny.size(7), 1);
    }

    fn limits(chunk_size: usize, max_line_bytes: usize) -> Limits {
        Limits {
            chunk_size,
            max_line_bytes,
        }
    }

    /// All chunks of `data` from both cutters, as (offset, bytes, truncated).
    fn both(data: &[u8], l: Limits) -> [Vec<(u64, Vec<u8>, bool)>; 2] {
        let shared = SharedBytes::from_memory(std::sync::Arc::from(data));
        let mut s = SliceChunker::new(shared, 0, l);
        let mut a = Vec::new();
        while let Some((c, _)) = s.next_chunk() {
            a.push((c.offset, c.bytes().to_vec(), c.truncated_tail));
        }
        let mut st = StreamChunker::new(data, 0, l);
        let mut b = Vec::new();
        while let Some(c) = st.next_chunk().expect("reading a slice cannot fail") {
            b.push((c.offset, c.bytes().to_vec(), c.truncated_tail));
        }
        [a, b]
    }

    /// Checks the chunker invariants for input without too-long lines.
    fn check_whole_lines(data: &[u8], l: Limits) {
        let body = data.strip_prefix(BOM).unwrap_or(data);
        let skip = data.len() - body.len();
        for chunks in both(data, l) {
            let mut joined = Vec::new();
            for (offset, bytes, truncated) in &chunks {
                assert!(!truncated);
                assert_eq!(*offset as usize, skip + joined.len());
                assert!(!bytes.is_empty());
                joined.extend_from_slice(bytes);
                // Every chunk but the last ends with a newline.
                if joined.len() < body.len() {
                    assert_eq!(bytes.last(), Some(&b'\n'), "chunk boundary inside a line");
                }
            }
            assert_eq!(joined, body);
        }
    }

    #[test]
    fn chunk_every_newline_falls_on_a_boundary() {
        let seed = b"a\nbb\n\nccc\r\ndddd\ne";
        for filler in 0..24 {
            let mut data = vec![b'x'; filler];
            data.extend_from_slice(seed);
            for chunk_size in 1..8 {
                check_whole_lines(&data, limits(chunk_size, 64));
            }
            // With chunk size 1 every newline ends a chunk.
            for chunks in both(&data, limits(1, 64)) {
                let ends = chunks.iter().filter(|c| c.1.ends_with(b"\n")).count();
                assert_eq!(ends, data.iter().filter(|&&b| b == b'\n').count());
            }
        }
    }

    #[test]
    fn chunk_bom_is_skipped_once() {
        let data = b"\xEF\xBB\xBFa\n\xEF\xBB\xBFb\n";
        for chunks in both(data, limits(1, 64)) {
            assert_eq!(chunks[0].0, 3);
            assert_eq!(chunks[0].1, b"a\n");
            assert_eq!(chunks[1].1, b"\xEF\xBB\xBFb\n");
        }
        for chunks in both(b"\xEF\xBB", limits(1, 64)) {
            assert_eq!(chunks.len(), 1);
            assert_eq!(chunks[0].1, b"\xEF\xBB");
        }
        for chunks in both(b"\xEF\xBB\xBF", limits(4, 64)) {
            assert!(chunks.is_empty());
        }
    }

    #[test]
    fn chunk_long_lines_are_cut_and_skipped() {
        // max 4: a line of 6+ raw bytes is certainly too long.
        let data = b"ab\nxxxxxxxxxxxx\ncd\nyyyyy\r\nzzzzzzzzz";
        for chunk_size in 1..20 {
            for chunks in both(data, limits(chunk_size, 4)) {
                let mut lines = Vec::new();
                for (offset, bytes, truncated) in &chunks {
                    // Bounded look-ahead, whatever the line lengths.
                    assert!(bytes.len() <= 2 * chunk_size.max(7));
                    let mut at = *offset as usize;
                    let n = bytes.split_inclusive(|&b| b == b'\n').count();
                    for (k, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
                        assert_eq!(&data[at..at + line.len()], line, "offsets stay exact");
                        if *truncated && k + 1 == n {
                            assert_eq!(line.len(), 5, "cut to max + 1 bytes");
                        }
                        let content = line.strip_suffix(b"\n").unwrap_or(line);
                        lines.push(content[..content.len().min(5)].to_vec());
                        at += line.len();
                    }
                }
                let want: Vec<&[u8]> = vec![b"ab", b"xxxxx", b"cd", b"yyyyy", b"zzzzz"];
                assert_eq!(lines, want, "chunk size {chunk_size}");
            }
        }
    }

    #[test]
    fn chunk_empty_and_newline_only() {
        for chunks in both(b"", limits(4, 8)) {
            assert!(chunks.is_empty());
        }
        check_whole_lines(b"\n\n\n", limits(1, 8));
        check_whole_lines(b"no newline at all", limits(3, 64));
    }
}
