//! Cutting a stream that arrives in owned blocks (the decoded segments of
//! the member-parallel gzip reader, `gzip.rs`) into chunks without
//! copying the blocks: a chunk is a range of a block. Only a line split
//! between two blocks is copied, with the next block's bytes up to its
//! first newline. The chunks hold the same lines, at the same offsets and
//! with the same too-long cuts, as [`StreamChunker`](super::chunk::StreamChunker)'s
//! over the concatenated blocks (a test checks it).

use std::io;

use super::chunk::{cut_slice, Chunk, ChunkData, Limits, StreamChunks};
use super::formats::Extract;
use super::lines::BOM;
use crate::engine::input::{Home, SharedBytes};

/// A stream that hands over its content a block at a time.
pub trait Blocks {
    /// The next block (never empty), or `None` at the end.
    ///
    /// # Errors
    /// The stream's error; nothing comes after it.
    fn next_block(&mut self) -> io::Result<Option<Vec<u8>>>;

    /// Where a block goes back to once no chunk holds it.
    fn home(&self) -> Option<Home> {
        None
    }
}

/// Decoded gzip members, a block at a time or as a stream: a mapped file
/// (`gzip::MemberReader`) or a pipe (`gzip_pipe::PipeMembers`).
pub trait MemberBlocks: Blocks + io::Read + Send {
    /// The first `n` bytes of the content (fewer when it is shorter), which
    /// are handed out again first.
    ///
    /// # Errors
    /// The stream's error.
    fn head(&mut self, n: usize) -> io::Result<Vec<u8>>;
}

impl<B: Blocks + ?Sized> Blocks for Box<B> {
    fn next_block(&mut self) -> io::Result<Option<Vec<u8>>> {
        (**self).next_block()
    }

    fn home(&self) -> Option<Home> {
        (**self).home()
    }
}

/// A block not cut yet: its bytes from `from`, whose first byte is at
/// input offset `offset`.
struct Pending {
    bytes: Vec<u8>,
    from: usize,
    offset: u64,
}

/// Cuts the blocks of `B` into chunks (skipping a leading BOM).
pub struct BlockChunker<B> {
    /// How the URL of each line is found.
    pub extract: Extract,
    blocks: B,
    limits: Limits,
    input: usize,
    /// The block being cut: its complete lines end at `lines_end`, the
    /// next chunk starts at `pos`, its first byte is at input offset `base`.
    block: Option<SharedBytes>,
    pos: usize,
    lines_end: usize,
    base: u64,
    /// The rest of a block whose first line went into a joined block.
    after: Option<Pending>,
    /// A line begun in earlier blocks, starting at input offset
    /// `carry_offset`.
    carry: Vec<u8>,
    carry_offset: u64,
    /// Input bytes taken from `blocks` so far.
    fetched: u64,
    started: bool,
    /// Discarding the rest of a too-long line.
    skipping: bool,
    done: bool,
    /// The stream's error, returned once the lines before it are out.
    failed: Option<io::Error>,
}

impl<B: Blocks> BlockChunker<B> {
    /// Chunks of `blocks`, which is input number `input`.
    pub fn new(blocks: B, input: usize, limits: Limits) -> Self {
        Self {
            extract: Extract::Line,
            blocks,
            limits,
            input,
            block: None,
            pos: 0,
            lines_end: 0,
            base: 0,
            after: None,
            carry: Vec::new(),
            carry_offset: 0,
            fetched: 0,
            started: false,
            skipping: false,
            done: false,
            failed: None,
        }
    }

    /// Makes `bytes[from..]` (its first byte at input offset `offset`) the
    /// block being cut, up to its last newline; `whole`: all of it (the
    /// end of the input, or a joined line), which is not a block of the
    /// stream.
    fn set_block(&mut self, bytes: Vec<u8>, from: usize, offset: u64, whole: bool) {
        let lines_end = if whole {
            bytes.len()
        } else {
            memchr::memrchr(b'\n', &bytes[from..]).map_or(from, |i| from + i + 1)
        };
        let home = if whole { None } else { self.blocks.home() };
        self.block = Some(SharedBytes::from_vec_home(bytes, home));
        self.pos = from;
        self.lines_end = lines_end;
        self.base = offset;
    }

    /// Cuts a too-long line begun in the carry: its first
    /// `max_line_bytes + 1` bytes, flagged, and the rest is skipped.
    fn cut_long_carry(&mut self) -> Option<Chunk> {
        if self.carry.len() < self.limits.max_line_bytes.saturating_add(2) {
            return None;
        }
        let mut data = std::mem::take(&mut self.carry);
        data.truncate(self.limits.max_line_bytes + 1);
        self.skipping = true;
        Some(self.chunk(ChunkData::Owned(data), self.carry_offset, true))
    }

    fn chunk(&self, data: ChunkData, offset: u64, truncated_tail: bool) -> Chunk {
        Chunk {
            input: self.input,
            offset,
            data,
            truncated_tail,
            extract: self.extract,
            records: None,
        }
    }

    /// The next block from `after` or the stream.
    fn fetch(&mut self) -> io::Result<Option<Pending>> {
        if let Some(p) = self.after.take() {
            return Ok(Some(p));
        }
        match self.blocks.next_block() {
            Ok(Some(bytes)) => {
                let offset = self.fetched;
                self.fetched += bytes.len() as u64;
                Ok(Some(Pending {
                    bytes,
                    from: 0,
                    offset,
                }))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                // The complete lines before the error are handed out first
                // (before the first line there may be some in the carry); a
                // partial last line is dropped.
                self.done = true;
                self.failed = Some(e);
                let keep = memchr::memrchr(b'\n', &self.carry).map_or(0, |i| i + 1);
                let mut lines = std::mem::take(&mut self.carry);
                lines.truncate(keep);
                if !self.skipping && !lines.is_empty() {
                    let from = usize::from(!self.started && lines.starts_with(BOM)) * BOM.len();
                    self.set_block(lines, from, self.carry_offset, true);
                }
                Ok(None)
            }
        }
    }
}

impl<B: Blocks> StreamChunks for BlockChunker<B> {
    /// Cuts the chunks from now on at about `size` bytes.
    fn set_chunk_size(&mut self, size: usize) {
        self.limits.chunk_size = size.max(1);
    }

    /// The next chunk, or `None` at the end of the input.
    ///
    /// # Errors
    /// The stream's error, once the complete lines before it were handed
    /// out; [`position`](Self::position) tells how far it got.
    fn next_chunk(&mut self) -> io::Result<Option<Chunk>> {
        loop {
            if let Some(bytes) = &self.block {
                let all = bytes.as_slice();
                if let Some(cut) = cut_slice(&all[..self.lines_end], self.pos, self.limits) {
                    let data = ChunkData::Block(bytes.clone(), self.pos..cut.end);
                    let chunk = self.chunk(data, self.base + self.pos as u64, cut.truncated);
                    self.pos = cut.next;
                    return Ok(Some(chunk));
                }
                // The block's complete lines are out: the rest begins a
                // line that goes on in the next block.
                self.carry.extend_from_slice(&all[self.lines_end..]);
                self.carry_offset = self.base + self.lines_end as u64;
                self.block = None;
                if let Some(chunk) = self.cut_long_carry() {
                    return Ok(Some(chunk));
                }
            }
            if self.done {
                return match self.failed.take() {
                    Some(e) => Err(e),
                    None => Ok(None),
                };
            }
            let Some(mut p) = self.fetch()? else {
                if self.done {
                    continue;
                }
                // The end: what is left is the last line, without a newline.
                self.done = true;
                if self.skipping || self.carry.is_empty() {
                    return Ok(None);
                }
                let last = std::mem::take(&mut self.carry);
                self.set_block(last, 0, self.carry_offset, true);
                continue;
            };
            if !self.started {
                // A BOM may be split between the first blocks.
                let first = if self.carry.is_empty() && p.bytes.len() >= BOM.len() {
                    p.bytes
                } else {
                    self.carry.extend_from_slice(&p.bytes);
                    if self.carry.len() < BOM.len() {
                        continue;
                    }
                    std::mem::take(&mut self.carry)
                };
                self.started = true;
                let from = if first.starts_with(BOM) { BOM.len() } else { 0 };
                self.set_block(first, from, 0, false);
                continue;
            }
            if self.skipping {
                match memchr::memchr(b'\n', &p.bytes[p.from..]) {
                    Some(i) => {
                        p.from += i + 1;
                        self.skipping = false;
                    }
                    None => continue,
                }
            }
            if self.carry.is_empty() {
                self.set_block(p.bytes, p.from, p.offset, false);
                continue;
            }
            match memchr::memchr(b'\n', &p.bytes[p.from..]) {
                Some(i) => {
                    // The line split between blocks, joined.
                    let end = p.from + i + 1;
                    let mut joined = std::mem::take(&mut self.carry);
                    joined.extend_from_slice(&p.bytes[p.from..end]);
                    self.set_block(joined, 0, self.carry_offset, true);
                    p.from = end;
                    if p.from < p.bytes.len() {
                        self.after = Some(p);
                    }
                }
                None => {
                    self.carry.extend_from_slice(&p.bytes[p.from..]);
                    if let Some(chunk) = self.cut_long_carry() {
                        return Ok(Some(chunk));
                    }
                }
            }
        }
    }

    /// Bytes of the input read so far (for error messages).
    fn position(&self) -> u64 {
        self.fetched
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::input::chunk::{collect_chunks, StreamChunker};
    use proptest::prelude::*;

    /// Blocks from a list, then an error when `fail`.
    struct List(std::vec::IntoIter<Vec<u8>>, bool);

    impl Blocks for List {
        fn next_block(&mut self) -> io::Result<Option<Vec<u8>>> {
            match self.0.next() {
                Some(b) => Ok(Some(b)),
                None if self.1 => {
                    self.1 = false;
                    Err(io::Error::other("cut"))
                }
                None => Ok(None),
            }
        }
    }

    /// The lines of chunks: offset, the first `max + 1` bytes, and whether
    /// the line is certainly too long (cut, or `max + 2` bytes or more).
    fn lines(chunks: &[Chunk], limits: Limits) -> Vec<(u64, Vec<u8>, bool)> {
        let mut out = Vec::new();
        for c in chunks {
            let bytes = c.bytes();
            let n = bytes.split_inclusive(|&b| b == b'\n').count();
            let mut at = c.offset;
            for (k, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
                let raw = line.strip_suffix(b"\n").unwrap_or(line);
                let cut = c.truncated_tail && k + 1 == n;
                let long = cut || raw.len() >= limits.max_line_bytes + 2;
                let keep = raw.len().min(limits.max_line_bytes + 1);
                out.push((at, raw[..keep].to_vec(), long));
                at += line.len() as u64;
            }
        }
        out
    }

    fn by_blocks(blocks: Vec<Vec<u8>>, fail: bool, limits: Limits) -> (Vec<Chunk>, bool) {
        collect_chunks(&mut BlockChunker::new(
            List(blocks.into_iter(), fail),
            0,
            limits,
        ))
    }

    fn by_stream(data: &[u8], fail: bool, limits: Limits) -> (Vec<Chunk>, bool) {
        let reader = io::Read::chain(data, Failing(fail));
        collect_chunks(&mut StreamChunker::new(reader, 0, limits))
    }

    /// A reader that fails once when `.0`, else ends.
    struct Failing(bool);

    impl io::Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            if std::mem::take(&mut self.0) {
                Err(io::Error::other("cut"))
            } else {
                Ok(0)
            }
        }
    }

    fn split(data: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
        let mut at: Vec<usize> = cuts.iter().map(|c| c % (data.len() + 1)).collect();
        at.push(0);
        at.push(data.len());
        at.sort_unstable();
        at.dedup();
        at.windows(2).map(|w| data[w[0]..w[1]].to_vec()).collect()
    }

    fn check(data: &[u8], cuts: &[usize], fail: bool, chunk_size: usize, max: usize) {
        let limits = Limits {
            chunk_size,
            max_line_bytes: max,
        };
        let (a, a_failed) = by_blocks(split(data, cuts), fail, limits);
        let (b, b_failed) = by_stream(data, fail, limits);
        assert_eq!(a_failed, b_failed);
        let (a, b) = (lines(&a, limits), lines(&b, limits));
        // Before an error, a partial last line that is already too long
        // is reported by the block cutter and dropped with the rest of
        // the partial line by the stream cutter.
        let a = match a.split_last() {
            Some((last, rest)) if fail && rest.len() == b.len() && last.2 => rest.to_vec(),
            _ => a,
        };
        assert_eq!(a, b, "{data:?} {cuts:?} fail {fail}");
    }

    #[test]
    fn blocks_cut_as_the_stream_is() {
        let data = b"\xEF\xBB\xBFa\nbb\nxxxxxxxxxxxx\ncd\r\nyyyyy\nz";
        for chunk_size in [1, 3, 8, 64] {
            for k in 0..data.len() {
                for j in k..data.len() {
                    for fail in [false, true] {
                        check(data, &[k, j], fail, chunk_size, 4);
                    }
                }
            }
        }
    }

    proptest! {
        #[test]
        fn blocks_match_the_stream(
            data in proptest::collection::vec(prop_oneof![Just(b'\n'), Just(b'\r'), Just(0xEF), b'a'..b'e'], 0..300),
            cuts in proptest::collection::vec(0usize..400, 0..12),
            fail: bool,
            chunk_size in 1usize..40,
            max in 1usize..20,
        ) {
            check(&data, &cuts, fail, chunk_size, max);
        }
    }
}
