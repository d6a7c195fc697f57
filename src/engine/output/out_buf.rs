//! The writer thread's buffer: the selected lines are gathered into it and
//! written from it, placed so that an output written around the page cache
//! ([`DirectWriter`](super::direct::DirectWriter)) takes whole blocks of it
//! without copying them.

use std::io::{self, Write};

use super::direct::BLOCK;

/// Bytes gathered for the output and not yet taken by it.
///
/// A direct write needs its bytes to start a block in memory and in the
/// file. The output's next byte goes at the file offset `sent` (the bytes
/// it took so far), so the buffer keeps its first byte at an address equal
/// to `sent` modulo [`BLOCK`]: a byte that starts a block in the file
/// starts one in memory too. Any other output ignores the placement.
///
/// This avoids copying the gathered lines a second time, into the direct
/// writer's own aligned buffer (5% of a large run, and more memory).
#[derive(Debug)]
pub struct OutBuf {
    /// `buf[..start]` is padding; the bytes follow.
    buf: Vec<u8>,
    start: usize,
    /// Bytes the output took.
    sent: u64,
}

impl OutBuf {
    /// An empty buffer with room for `capacity` bytes.
    pub fn with_capacity(capacity: usize) -> Self {
        let mut b = Self {
            buf: Vec::with_capacity(capacity + BLOCK),
            start: 0,
            sent: 0,
        };
        b.place();
        b
    }

    /// The buffer to append to. Its first bytes are padding: only append.
    pub fn append(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// The bytes not yet written.
    pub fn bytes(&self) -> &[u8] {
        self.buf.get(self.start..).unwrap_or_default()
    }

    /// Number of bytes not yet written.
    pub fn len(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Writes what `output` takes while a block or more is left; the rest
    /// waits for the next call. An output that writes around the page
    /// cache takes whole blocks only; any other takes everything.
    ///
    /// # Errors
    /// The output's; what it took before the error counts as written.
    pub fn write_some(&mut self, output: &mut (dyn Write + Send)) -> io::Result<()> {
        // The buffer may have moved as it grew.
        self.place();
        let mut taken = 0;
        let result = loop {
            let rest = self.bytes().get(taken..).unwrap_or_default();
            if rest.len() < BLOCK {
                break Ok(());
            }
            match output.write(rest) {
                Ok(0) => break Err(io::Error::from(io::ErrorKind::WriteZero)),
                Ok(n) => taken += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        self.consume(taken);
        result
    }

    /// Writes all the bytes.
    ///
    /// # Errors
    /// The output's.
    pub fn write_all(&mut self, output: &mut (dyn Write + Send)) -> io::Result<()> {
        output.write_all(self.bytes())?;
        self.consume(self.len());
        Ok(())
    }

    /// Drops the first `n` bytes, which the output took.
    fn consume(&mut self, n: usize) {
        self.start += n;
        self.sent += n as u64;
        self.place();
    }

    /// Moves the bytes to the smallest padding that puts the first one at
    /// an address equal to `sent` modulo [`BLOCK`].
    fn place(&mut self) {
        // Room to move forward without reallocating.
        self.buf.reserve(BLOCK);
        let len = self.len();
        let at = self.buf.as_ptr().addr() % BLOCK;
        let want = (self.sent % BLOCK as u64) as usize;
        let padding = (want + BLOCK - at) % BLOCK;
        if padding == self.start {
            return;
        }
        if padding > self.start {
            self.buf.resize(padding + len, 0);
        }
        self.buf.copy_within(self.start..self.start + len, padding);
        self.buf.truncate(padding + len);
        self.start = padding;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An output that takes whole blocks from a block-aligned address and
    /// copies anything else, as `OutputFile` in direct mode does, and
    /// counts the bytes it took without a copy.
    #[derive(Default)]
    struct BlockTaker {
        got: Vec<u8>,
        uncopied: usize,
    }

    impl Write for BlockTaker {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = if self.got.len().is_multiple_of(BLOCK)
                && buf.as_ptr().addr().is_multiple_of(BLOCK)
                && buf.len() >= BLOCK
            {
                let whole = buf.len() / BLOCK * BLOCK;
                self.uncopied += whole;
                whole
            } else {
                // A copy: up to the next block boundary of the file.
                (BLOCK - self.got.len() % BLOCK).min(buf.len())
            };
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn out_buf_writes_every_byte_in_order_and_whole_blocks_without_copies() {
        let mut out = BlockTaker::default();
        let mut buf = OutBuf::with_capacity(3 * BLOCK);
        let mut want = Vec::new();
        // Pieces of many lengths, some making the buffer grow (and move).
        for (k, len) in [1, 5000, 70, 4096, 12_345, 3, 100_000, 4095, 1]
            .into_iter()
            .enumerate()
        {
            let piece: Vec<u8> = (0..len).map(|i| (i * 7 + k) as u8).collect();
            buf.append().extend_from_slice(&piece);
            want.extend_from_slice(&piece);
            buf.write_some(&mut out).unwrap();
            assert!(buf.len() < BLOCK);
            assert_eq!(out.got.len() + buf.len(), want.len());
        }
        buf.write_all(&mut out).unwrap();
        buf.append().extend_from_slice(b"more");
        want.extend_from_slice(b"more");
        buf.append().extend_from_slice(&[9; 2 * BLOCK]);
        want.extend_from_slice(&[9; 2 * BLOCK]);
        buf.write_all(&mut out).unwrap();
        assert_eq!(out.got, want);
        assert_eq!(buf.len(), 0);
        // Only the bytes up to each block boundary were copied: at most
        // one block per call.
        assert!(want.len() - out.uncopied < 14 * BLOCK, "{}", out.uncopied);
    }

    #[test]
    fn out_buf_passes_everything_to_an_ordinary_writer() {
        let mut out: Vec<u8> = Vec::new();
        let mut buf = OutBuf::with_capacity(16);
        buf.append().extend_from_slice(&[1; 3 * BLOCK + 7]);
        buf.write_some(&mut out).unwrap();
        assert_eq!((out.len(), buf.len()), (3 * BLOCK + 7, 0));
        buf.append().extend_from_slice(b"tail");
        buf.write_some(&mut out).unwrap();
        assert_eq!(buf.bytes(), b"tail");
        buf.write_all(&mut out).unwrap();
        assert_eq!(&out[3 * BLOCK + 7..], b"tail");
    }
}
