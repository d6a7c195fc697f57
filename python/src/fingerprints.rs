//! A batch of 16-byte fingerprints from Python, for the `*_fingerprints`
//! methods of `SeenStore`, `RedisSeenSet` and `Deduplicator` (callers that
//! fingerprint requests themselves, as a Scrapy dupefilter does); and the
//! fingerprints of a batch of URLs with their places, for the sets that
//! answer by fingerprint.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::keys::{self, Line};
use crate::options::Keying;

/// Reads an iterable of 16-byte `bytes` in the byte order
/// `Canonicalizer.fingerprint` returns (big-endian).
///
/// # Errors
/// `TypeError` for something that is not an iterable of bytes (one `bytes`
/// or `str` included), `ValueError` naming the index of a fingerprint that
/// is not 16 bytes long.
pub fn read_fingerprints(fps: &Bound<'_, PyAny>) -> PyResult<Vec<u128>> {
    if fps.is_instance_of::<PyBytes>() || fps.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "fingerprints must be an iterable of 16-byte bytes, not one bytes or str",
        ));
    }
    let mut out = Vec::new();
    for (i, item) in fps.try_iter()?.enumerate() {
        let item = item?;
        let bytes = item.downcast::<PyBytes>().map_err(|_| {
            let kind = item
                .get_type()
                .name()
                .map_or_else(|_| "?".to_owned(), |n| n.to_string());
            PyTypeError::new_err(format!("fingerprint {i} is {kind}, not bytes"))
        })?;
        let raw: [u8; 16] = bytes.as_bytes().try_into().map_err(|_| {
            PyValueError::new_err(format!(
                "fingerprint {i} is {} bytes long, not 16",
                bytes.as_bytes().len()
            ))
        })?;
        out.push(u128::from_be_bytes(raw));
    }
    Ok(out)
}

/// The fingerprints of `fingerprints` (as [`read_fingerprints`] reads
/// them), each with its place: the form the sets' batch answers take.
///
/// # Errors
/// As [`read_fingerprints`].
pub fn indexed_fingerprints(fingerprints: &Bound<'_, PyAny>) -> PyResult<Vec<(usize, u128)>> {
    Ok(read_fingerprints(fingerprints)?
        .into_iter()
        .enumerate()
        .collect())
}

/// The fingerprint of every valid line of a batch, with its place.
pub fn valid_fingerprints(keying: &Keying, lines: &[Line<'_>]) -> Vec<(usize, u128)> {
    keys::fingerprints(keying, lines)
        .into_iter()
        .enumerate()
        .filter_map(|(i, fp)| fp.map(|fp| (i, fp)))
        .collect()
}

/// A batch of `n`'s answers: `answers[j]` at the place of `valid[j]`,
/// false at the others (invalid lines, `None`).
pub fn scatter(valid: &[(usize, u128)], answers: &[bool], n: usize) -> Vec<bool> {
    let mut mask = vec![false; n];
    for ((i, _), &a) in valid.iter().zip(answers) {
        mask[*i] = a;
    }
    mask
}
