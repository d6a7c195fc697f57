//! Entries of the lines file: one per line that may be printed, in input
//! order, written by the writer thread and read back by the final pass.
//!
//! An entry starts with a varint: the sequence number less the previous
//! entry's, shifted left by 3, with three flags below it: [`SLICE`],
//! [`DEFINITE`], [`NEW_INPUT`]. A slice entry says where its printed bytes
//! lie in an input's shared buffer (a mapped file): with [`NEW_INPUT`]
//! the input and the offset follow as varints, otherwise the distance from
//! the end of the previous slice (as a zigzag varint, though it never goes
//! back); then the length, a varint. Any other entry carries its printed
//! bytes after a little-endian `u32` length. Numbers are deltas because
//! they are small: a slice entry of a crawl dump takes about 4 bytes, where
//! three fixed-width fields would take 24.

use std::io::{self, Read};

/// Flag of a slice entry.
const SLICE: u64 = 1;

/// Flag of a line already known to be selected (a duplicate of a key of
/// the frozen set, with `--duplicates`).
const DEFINITE: u64 = 2;

/// Flag of a slice entry in another input than the previous slice entry.
const NEW_INPUT: u64 = 4;

/// Bytes a head (the flags word, and for a slice three more varints) takes
/// at most.
const MAX_HEAD: usize = 40;

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

/// Writes entries; it keeps what the next entry's deltas are taken from.
#[derive(Default)]
pub struct EntryWriter {
    seq: u64,
    input: Option<u32>,
    end: u64,
}

impl EntryWriter {
    fn head(&mut self, out: &mut Vec<u8>, seq: u64, definite: bool, flags: u64) {
        let delta = seq.wrapping_sub(self.seq);
        self.seq = seq;
        put_varint(
            out,
            (delta << 3) | flags | if definite { DEFINITE } else { 0 },
        );
    }

    /// Starts an entry whose printed bytes are appended to `out` next;
    /// returns where its length goes, for [`end`](Self::end).
    #[inline]
    pub fn begin(&mut self, out: &mut Vec<u8>, seq: u64, definite: bool) -> usize {
        self.head(out, seq, definite, 0);
        let at = out.len();
        out.extend_from_slice(&[0; 4]);
        at
    }

    /// Completes the entry begun at `at`.
    #[inline]
    pub fn end(out: &mut [u8], at: usize) {
        // Printed bytes come from a chunk, at most 512 MiB, or from a key
        // formatted from one: well within a u32.
        let len = u32::try_from(out.len() - at - 4).unwrap_or(u32::MAX);
        if let Some(field) = out.get_mut(at..at + 4) {
            field.copy_from_slice(&len.to_le_bytes());
        }
    }

    /// Appends a slice entry: the printed bytes are the `len` bytes at
    /// `offset` in the shared buffer of input `input`.
    #[inline]
    pub fn slice(
        &mut self,
        out: &mut Vec<u8>,
        seq: u64,
        definite: bool,
        input: u32,
        offset: u64,
        len: u32,
    ) {
        if self.input == Some(input) {
            self.head(out, seq, definite, SLICE);
            put_varint(out, zigzag(offset.wrapping_sub(self.end) as i64));
        } else {
            self.head(out, seq, definite, SLICE | NEW_INPUT);
            put_varint(out, u64::from(input));
            put_varint(out, offset);
            self.input = Some(input);
        }
        put_varint(out, u64::from(len));
        self.end = offset + u64::from(len);
    }
}

/// Where an entry's printed bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Printed {
    /// In the line buffer given to [`EntryReader::next`].
    Bytes,
    /// At `offset` in the shared buffer of input `input`, `len` bytes.
    Slice {
        /// The input.
        input: usize,
        /// Where they start.
        offset: usize,
        /// How many.
        len: usize,
    },
}

/// One entry read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The line's sequence number.
    pub seq: u64,
    /// The line is selected whatever the partitions say.
    pub definite: bool,
    /// Where its printed bytes are.
    pub printed: Printed,
}

/// Reads entries from a lines file through a buffer of its own.
pub struct EntryReader<R> {
    r: R,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    seq: u64,
    input: usize,
    at: u64,
}

impl<R: Read> EntryReader<R> {
    /// Entries of `r`, read `buffer` bytes at a time.
    pub fn new(r: R, buffer: usize) -> Self {
        Self {
            r,
            buf: vec![0; buffer.max(2 * MAX_HEAD)],
            pos: 0,
            end: 0,
            eof: false,
            seq: 0,
            input: 0,
            at: 0,
        }
    }

    /// Makes at least `want` bytes available from `pos` unless the file
    /// ends first.
    fn fill(&mut self, want: usize) -> io::Result<()> {
        if self.end - self.pos >= want || self.eof {
            return Ok(());
        }
        self.buf.copy_within(self.pos..self.end, 0);
        self.end -= self.pos;
        self.pos = 0;
        while self.end < want && !self.eof {
            let n = self.r.read(&mut self.buf[self.end..])?;
            if n == 0 {
                self.eof = true;
            }
            self.end += n;
        }
        Ok(())
    }

    fn varint(&mut self) -> io::Result<u64> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&b) = self.buf.get(self.pos).filter(|_| self.pos < self.end) else {
                return Err(io::ErrorKind::UnexpectedEof.into());
            };
            self.pos += 1;
            n |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(n);
            }
        }
        Err(io::Error::new(io::ErrorKind::InvalidData, "bad varint"))
    }

    /// The next entry, its printed bytes in `line` unless it is a slice
    /// entry; `None` at the end of the file.
    ///
    /// # Errors
    /// The reader's, or [`io::ErrorKind::UnexpectedEof`] for a file cut
    /// inside an entry.
    pub fn next(&mut self, line: &mut Vec<u8>) -> io::Result<Option<Entry>> {
        self.fill(MAX_HEAD)?;
        if self.pos == self.end {
            return Ok(None);
        }
        let word = self.varint()?;
        self.seq = self.seq.wrapping_add(word >> 3);
        let definite = word & DEFINITE != 0;
        if word & SLICE != 0 {
            let offset = if word & NEW_INPUT != 0 {
                self.input = usize::try_from(self.varint()?).unwrap_or(usize::MAX);
                self.varint()?
            } else {
                self.at.wrapping_add(unzigzag(self.varint()?) as u64)
            };
            let len = self.varint()?;
            self.at = offset.wrapping_add(len);
            return Ok(Some(Entry {
                seq: self.seq,
                definite,
                printed: Printed::Slice {
                    input: self.input,
                    offset: usize::try_from(offset).unwrap_or(usize::MAX),
                    len: usize::try_from(len).unwrap_or(0),
                },
            }));
        }
        self.fill(4)?;
        let field = self
            .buf
            .get(self.pos..self.pos + 4)
            .filter(|_| self.end - self.pos >= 4)
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        let len = u32::from_le_bytes(field.try_into().unwrap_or([0; 4])) as usize;
        self.pos += 4;
        line.clear();
        let here = len.min(self.end - self.pos);
        line.extend_from_slice(&self.buf[self.pos..self.pos + here]);
        self.pos += here;
        if here < len {
            line.resize(len, 0);
            self.r.read_exact(&mut line[here..])?;
        }
        Ok(Some(Entry {
            seq: self.seq,
            definite,
            printed: Printed::Bytes,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spill_entries_round_trip() {
        let mut w = EntryWriter::default();
        let mut out = Vec::new();
        let long = vec![b'x'; 300];
        w.slice(&mut out, 5, false, 0, 1000, 78);
        w.slice(&mut out, 6, true, 0, 1079, 3);
        let at = w.begin(&mut out, 9, false);
        out.extend_from_slice(b"http://a/");
        EntryWriter::end(&mut out, at);
        w.slice(&mut out, 1 << 40, false, 2, 7, 0);
        w.slice(&mut out, (1 << 40) + 1, false, 2, 5 << 33, 1 << 20);
        let at = w.begin(&mut out, (1 << 40) + 9, true);
        out.extend_from_slice(&long);
        EntryWriter::end(&mut out, at);
        w.slice(&mut out, (1 << 40) + 10, false, 0, 3, 4);
        // A small buffer, so that entries straddle refills.
        let mut r = EntryReader::new(&out[..], 16);
        let mut line = Vec::new();
        let mut got = Vec::new();
        while let Some(e) = r.next(&mut line).expect("reads") {
            got.push((e, (e.printed == Printed::Bytes).then(|| line.clone())));
        }
        let slice = |seq, definite, input, offset, len| {
            (
                Entry {
                    seq,
                    definite,
                    printed: Printed::Slice { input, offset, len },
                },
                None,
            )
        };
        let bytes = |seq, definite, b: &[u8]| {
            (
                Entry {
                    seq,
                    definite,
                    printed: Printed::Bytes,
                },
                Some(b.to_vec()),
            )
        };
        assert_eq!(
            got,
            [
                slice(5, false, 0, 1000, 78),
                slice(6, true, 0, 1079, 3),
                bytes(9, false, b"http://a/"),
                slice(1 << 40, false, 2, 7, 0),
                slice((1 << 40) + 1, false, 2, 5 << 33, 1 << 20),
                bytes((1 << 40) + 9, true, &long),
                slice((1 << 40) + 10, false, 0, 3, 4),
            ]
        );
        // A file cut inside an entry is an error, not an end.
        let mut r = EntryReader::new(&out[..out.len() - 1], 64);
        let mut result = Ok(None);
        for _ in 0..got.len() {
            result = r.next(&mut line);
        }
        assert!(result.is_err());
    }
}
