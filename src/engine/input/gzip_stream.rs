//! Multi-member gzip as one stream (flate2), for the inputs no worker
//! decodes: a pipe read on one thread, and a member longer than a pipe's
//! window. As [`flate2::bufread::MultiGzDecoder`], member after member,
//! except at the end: zero bytes after the last member are padding (tape
//! blocks, some archivers), read as the end, as `zcat` and Python's `gzip`
//! read them, where flate2 reports an invalid header.

use std::io::{self, BufRead, Read};

use flate2::bufread::GzDecoder;

/// The members of the gzip stream `R`, decompressed one after the other.
pub struct GzStream<R: BufRead> {
    /// The member being decoded.
    member: Option<GzDecoder<R>>,
    /// The stream between two members (zero padding may come next).
    between: Option<R>,
}

impl<R: BufRead> core::fmt::Debug for GzStream<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("GzStream")
            .field("in_member", &self.member.is_some())
            .finish_non_exhaustive()
    }
}

impl<R: BufRead> GzStream<R> {
    /// The members of `inner`, from its first byte.
    pub fn new(inner: R) -> Self {
        Self {
            member: Some(GzDecoder::new(inner)),
            between: None,
        }
    }

    /// The members of `inner`, which follows the end of a member: the rest
    /// of a stream that may be only the zero padding after its last.
    pub fn after_member(inner: R) -> Self {
        Self {
            member: None,
            between: Some(inner),
        }
    }
}

/// After a member: true when `inner` ends here or only zeros follow (its
/// zeros are read); false when something else follows (the next member,
/// or bytes that the next member's decoder reports).
fn ends_here<R: BufRead>(inner: &mut R) -> io::Result<bool> {
    let mut padding = false;
    loop {
        let buf = inner.fill_buf()?;
        if buf.is_empty() {
            return Ok(true);
        }
        let zeros = buf.iter().take_while(|&&b| b == 0).count();
        if zeros < buf.len() {
            if padding || zeros > 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "bytes other than zeros after the zero padding that follows a gzip member",
                ));
            }
            return Ok(false);
        }
        padding = true;
        inner.consume(zeros);
    }
}

impl<R: BufRead> Read for GzStream<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if let Some(mut inner) = self.between.take() {
                if ends_here(&mut inner)? {
                    return Ok(0);
                }
                self.member = Some(GzDecoder::new(inner));
            }
            let Some(member) = &mut self.member else {
                return Ok(0);
            };
            let n = member.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            self.between = self.member.take().map(GzDecoder::into_inner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::input::gzip::tests::gz;

    fn read(file: &[u8], buf_size: usize) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        GzStream::new(io::BufReader::with_capacity(buf_size, file)).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn gzip_stream_reads_members_and_trailing_zeros() {
        let mut file = [gz(b"a\n", 6), gz(b"", 6), gz(b"b\n", 1)].concat();
        for size in [1, 7, 1 << 16] {
            assert_eq!(read(&file, size).unwrap(), b"a\nb\n");
        }
        file.extend_from_slice(&[0; 1000]);
        for size in [1, 7, 1 << 16] {
            assert_eq!(read(&file, size).unwrap(), b"a\nb\n", "buffer {size}");
        }
        // Zeros, then anything: an error, as zcat's "trailing garbage".
        let mut more = file.clone();
        more.extend_from_slice(&gz(b"c\n", 6));
        assert!(read(&more, 7).is_err());
        // After a member: nothing, zeros, or members.
        let after = |file: &[u8]| {
            let mut out = Vec::new();
            GzStream::after_member(file)
                .read_to_end(&mut out)
                .map(|_| out)
        };
        assert_eq!(after(&[0; 9]).unwrap(), b"");
        assert_eq!(after(&[]).unwrap(), b"");
        assert_eq!(after(&gz(b"c\n", 6)).unwrap(), b"c\n");
        // Garbage that is not zeros: flate2's invalid header, as before.
        let mut junk = gz(b"a\n", 6);
        junk.extend_from_slice(b"xyz");
        assert!(read(&junk, 1 << 16).is_err());
    }
}
