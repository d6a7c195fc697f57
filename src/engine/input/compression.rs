//! The compressions an input may be in, recognised by their magic bytes
//! (never by file name), and their streaming decoders.

use core::fmt;
use std::io::{self, BufReader, Read};

/// How an input is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Compression {
    /// gzip (RFC 1952), one member or many.
    Gzip,
    /// Zstandard (RFC 8878).
    Zstd,
    /// xz.
    Xz,
    /// bzip2.
    Bzip2,
}

impl Compression {
    /// The name messages give it.
    pub const fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
            Compression::Bzip2 => "bzip2",
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Gzip member magic (RFC 1952).
const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b];
/// Zstandard frame magic (RFC 8878), little-endian 0xFD2FB528.
const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];
/// xz stream header magic (xz file format 1.2.1 §2.1.1.1).
const XZ_MAGIC: &[u8] = &[0xfd, b'7', b'z', b'X', b'Z', 0x00];
/// What follows a bzip2 stream header `BZh1`..`BZh9`: the magic of a
/// block (the digits of π) or of the end of an empty stream (of √π). Text
/// may start with `BZh1`; it never goes on with these bytes.
const BZIP2_BLOCK: &[u8] = &[0x31, 0x41, 0x59, 0x26, 0x53, 0x59];
const BZIP2_END: &[u8] = &[0x17, 0x72, 0x45, 0x38, 0x50, 0x90];
/// Bytes [`sniff`] needs to see.
pub(crate) const SNIFF_BYTES: u64 = 10;

/// The compression recognised from the first bytes of an input.
pub(crate) fn sniff(prefix: &[u8]) -> Option<Compression> {
    if prefix.starts_with(GZIP_MAGIC) {
        Some(Compression::Gzip)
    } else if prefix.starts_with(ZSTD_MAGIC) {
        Some(Compression::Zstd)
    } else if prefix.starts_with(XZ_MAGIC) {
        Some(Compression::Xz)
    } else if prefix.len() >= 10
        && prefix.starts_with(b"BZh")
        && (b'1'..=b'9').contains(&prefix[3])
        && (prefix[4..10] == *BZIP2_BLOCK || prefix[4..10] == *BZIP2_END)
    {
        Some(Compression::Bzip2)
    } else {
        None
    }
}

/// A streaming decoder for `kind` over `raw`. Every decoder reads
/// concatenated streams (as `pbzip2` and `xz -T` write them) and reports
/// a truncated or corrupt input as a read error; gzip's zero padding after
/// the last member is its end (`gzip_stream.rs`).
pub(crate) fn decoder(kind: Compression, raw: Box<dyn Read + Send>) -> Box<dyn Read + Send> {
    let buffered = |raw| BufReader::with_capacity(1 << 16, raw);
    match kind {
        Compression::Gzip => Box::new(super::gzip_stream::GzStream::new(buffered(raw))),
        Compression::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(buffered(raw))),
        Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(buffered(raw))),
        Compression::Zstd => Box::new(ZstdReader::new(raw)),
    }
}

/// A zstd stream decoder created on first read, so that a failure to
/// create its context surfaces as a read error (a truncated last frame is
/// reported by the decoder itself as "incomplete frame").
struct ZstdReader {
    inner: Option<zstd::stream::read::Decoder<'static, BufReader<Box<dyn Read + Send>>>>,
    raw: Option<Box<dyn Read + Send>>,
}

impl ZstdReader {
    fn new(raw: Box<dyn Read + Send>) -> Self {
        Self {
            inner: None,
            raw: Some(raw),
        }
    }
}

impl Read for ZstdReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.inner.is_none() {
            if let Some(raw) = self.raw.take() {
                self.inner = Some(zstd::stream::read::Decoder::new(raw)?);
            }
        }
        match &mut self.inner {
            Some(d) => d.read(buf),
            None => Ok(0),
        }
    }
}
