//! Canonical keys (STUB interface, to be completed by the normalization work).

use super::error::ParseError;
use super::normalize::Normalizer;
use super::UriRef;

/// How a canonical key is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KeyFormat {
    /// The normalized URI string.
    #[default]
    Uri,
    /// Sort-friendly URI Reordering Transform.
    Surt,
    /// 128-bit fingerprint of the `uri` key, in hex.
    Hash,
}

/// Reusable buffers for [`Canonicalizer::uri_key`].
#[derive(Default, Debug)]
pub struct KeyScratch {
    out: Vec<u8>,
}

/// Turns lines into canonical keys.
#[derive(Clone, Debug, Default)]
pub struct Canonicalizer {
    normalizer: Normalizer,
    lenient: bool,
}

impl Canonicalizer {
    /// A canonicalizer with the given normalizer.
    pub fn new(normalizer: Normalizer) -> Self {
        Self {
            normalizer,
            lenient: false,
        }
    }

    /// Map dirty input the RFC 3987 §3.1 way before parsing.
    pub fn with_lenient(mut self, lenient: bool) -> Self {
        self.lenient = lenient;
        self
    }

    /// The canonical `uri` key of one line (without its newline).
    ///
    /// # Errors
    /// The parse error, with an offset into `input`.
    pub fn uri_key<'a>(
        &self,
        input: &'a [u8],
        scratch: &'a mut KeyScratch,
    ) -> Result<&'a [u8], ParseError> {
        let _ = (&self.normalizer, self.lenient, &mut scratch.out);
        UriRef::parse_bytes(input)?;
        Ok(input)
    }

    /// Appends `uri_key` written in `format` to `out`.
    pub fn write_key(&self, uri_key: &[u8], format: KeyFormat, out: &mut Vec<u8>) {
        match format {
            KeyFormat::Hash => {
                let h = fingerprint(uri_key);
                out.extend_from_slice(format!("{h:032x}").as_bytes());
            }
            _ => out.extend_from_slice(uri_key),
        }
    }
}

/// The stable 128-bit fingerprint of a key (XXH3-128, seed 0).
pub fn fingerprint(key: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(key)
}
