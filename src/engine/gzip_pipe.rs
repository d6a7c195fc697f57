//! Multi-member gzip read from a pipe (stdin, a FIFO, any reader) on
//! several threads.
//!
//! The compressed stream is read a window of [`WINDOW`] bytes at a time,
//! and each window is decoded member-parallel by a
//! [`MemberReader`](super::gzip::MemberReader), which verifies every
//! member boundary as it does for a mapped file. The window's last member
//! usually goes on past its end: it fails by ending early, after the
//! output of the members before it, and its bytes start the next window.
//! So the output is the sequential decoder's, and memory stays bounded by
//! two windows and the reader's segments in flight. A member longer than a
//! window (one large member, as plain `gzip` writes) is decoded with the
//! rest of the input as one stream.
//!
//! An error names the failed member's offset in the whole stream, after
//! the output of the members before it.

use std::io::{self, BufReader, Cursor, Read};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use flate2::read::MultiGzDecoder;

use super::gzip::MemberReader;
use super::input::SharedBytes;

/// Compressed bytes read ahead from the pipe.
pub const WINDOW: usize = 8 << 20;

/// The decompressed content of a multi-member gzip stream.
pub struct PipeMembers {
    src: Option<Box<dyn Read + Send>>,
    threads: usize,
    window: usize,
    /// The start of a member the last window cut, for the next one.
    carry: Vec<u8>,
    /// Offset in the stream of the window being decoded (then of `carry`).
    base: u64,
    /// The window being decoded, and whether the stream ends with it.
    current: Option<(MemberReader, SharedBytes)>,
    last: bool,
    /// The rest, as one stream, from offset `base`.
    single: Option<Box<dyn Read + Send>>,
}

impl core::fmt::Debug for PipeMembers {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PipeMembers")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl PipeMembers {
    /// The content of the gzip stream `src`, decoded on `threads` threads.
    pub fn new(src: Box<dyn Read + Send>, threads: usize) -> Self {
        Self::with_window(src, threads, WINDOW)
    }

    /// [`new`](Self::new) with another window (tests).
    pub fn with_window(src: Box<dyn Read + Send>, threads: usize, window: usize) -> Self {
        Self {
            src: Some(src),
            threads,
            window: window.max(1),
            carry: Vec::new(),
            base: 0,
            current: None,
            last: false,
            single: None,
        }
    }

    /// Reads the next window, after the carried bytes; false at the end.
    fn next_window(&mut self) -> io::Result<bool> {
        let Some(src) = &mut self.src else {
            return Ok(false);
        };
        let mut buf = std::mem::take(&mut self.carry);
        let want = (buf.len() + self.window) as u64;
        let got = src.take(want - buf.len() as u64).read_to_end(&mut buf)?;
        self.last = got == 0 || buf.len() < want as usize;
        if self.last {
            self.src = None;
        }
        if buf.is_empty() {
            return Ok(false);
        }
        let bytes = SharedBytes::from_vec(buf);
        // The stream's bytes are counted as they are read from the pipe.
        let uncounted = Arc::new(AtomicU64::new(0));
        let reader = MemberReader::window(
            bytes.clone(),
            self.base,
            self.last,
            self.threads,
            &uncounted,
        );
        self.current = Some((reader, bytes));
        Ok(true)
    }
}

impl Read for PipeMembers {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if let Some(single) = &mut self.single {
                let base = self.base;
                return single.read(buf).map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!(
                            "the gzip member at byte {base} of the file, or one after it, \
                             is truncated or corrupt: {e}"
                        ),
                    )
                });
            }
            if let Some((reader, bytes)) = &mut self.current {
                match reader.read(buf) {
                    Ok(0) => {
                        self.current = None;
                        if self.last {
                            return Ok(0);
                        }
                    }
                    Ok(n) => return Ok(n),
                    Err(e) => {
                        let Some((at, long)) = reader.cut() else {
                            return Err(e);
                        };
                        // The member at `at` goes on in the next window.
                        let rest = bytes.as_slice()[at..].to_vec();
                        self.base += at as u64;
                        self.current = None;
                        if at == 0 || long {
                            // A member longer than a window, or whose
                            // output is too large to hold.
                            let src = self.src.take().unwrap_or_else(|| Box::new(io::empty()));
                            let all = Cursor::new(rest).chain(src);
                            self.single = Some(Box::new(MultiGzDecoder::new(
                                BufReader::with_capacity(1 << 16, all),
                            )));
                        } else {
                            self.carry = rest;
                        }
                    }
                }
                continue;
            }
            if !self.next_window()? {
                return Ok(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn text(n: usize, seed: u64) -> Vec<u8> {
        (0..n)
            .map(|i| format!("http://h{}.example/{i}/{}\n", seed % 7, i as u64 * seed))
            .collect::<String>()
            .into_bytes()
    }

    /// A reader that hands out at most `n` bytes a call, as a pipe does.
    struct Dribble(Cursor<Vec<u8>>, usize);

    impl Read for Dribble {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.1);
            self.0.read(&mut buf[..n])
        }
    }

    fn read_all(file: Vec<u8>, threads: usize, window: usize) -> (Vec<u8>, io::Result<usize>) {
        let mut r =
            PipeMembers::with_window(Box::new(Dribble(Cursor::new(file), 999)), threads, window);
        let mut out = Vec::new();
        let res = r.read_to_end(&mut out);
        (out, res)
    }

    #[test]
    fn gzip_pipe_members_in_order() {
        let parts: Vec<Vec<u8>> = (0..40).map(|i| text(30 + i * 40, i as u64 + 1)).collect();
        let file: Vec<u8> = parts.iter().flat_map(|p| gz(p)).collect();
        let want = parts.concat();
        for window in [1, 100, 3000, 1 << 20] {
            for threads in [1, 2] {
                let (out, res) = read_all(file.clone(), threads, window);
                res.unwrap();
                assert_eq!(out, want, "window {window}");
            }
        }
        // One member: as one stream once it passes a window.
        let one = text(5000, 3);
        let (out, res) = read_all(gz(&one), 2, 4096);
        res.unwrap();
        assert_eq!(out, one);
    }

    #[test]
    fn gzip_pipe_truncated_member_names_its_offset() {
        let parts: Vec<Vec<u8>> = (0..10).map(|i| text(300, i + 1)).collect();
        let mut file: Vec<u8> = parts.iter().flat_map(|p| gz(p)).collect();
        let member: usize = parts[..9].iter().map(|p| gz(p).len()).sum();
        file.truncate(file.len() - 30);
        // Windows that hold a few members, and all of them.
        for window in [2 * gz(&parts[0]).len() + 7, 1 << 20] {
            let (out, res) = read_all(file.clone(), 2, window);
            let err = res.unwrap_err();
            assert!(
                err.to_string()
                    .contains(&format!("gzip member at byte {member} ")),
                "{err}"
            );
            assert!(out.starts_with(&parts[..9].concat()));
        }
    }
}
