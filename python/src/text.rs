//! Python `str` to the UTF-8 bytes the library reads.
//!
//! Only `str` is accepted: `bytes` would need a guess at its encoding, so it
//! is a `TypeError` like any other type. A `str` with lone surrogates (from
//! `surrogateescape` decoding, say) has no UTF-8 form; it is read as the
//! bytes `surrogatepass` gives, which the strict parser rejects at the
//! surrogate's offset and lenient mode percent-encodes, as the CLI does with
//! the same bytes in a file.

use std::borrow::Cow;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// The `TypeError` for a value that is not a `str`.
pub fn not_str(what: &str, obj: &Bound<'_, PyAny>) -> PyErr {
    let ty = obj
        .get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string());
    PyTypeError::new_err(format!("{what} must be str, not {ty}"))
}

/// The UTF-8 bytes of a `str`; borrowed from the string object when it has
/// a UTF-8 form (always, unless it holds lone surrogates).
pub fn utf8<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, [u8]>> {
    match s.to_str() {
        Ok(t) => Ok(Cow::Borrowed(t.as_bytes())),
        Err(_) => {
            let b = s.call_method1("encode", ("utf-8", "surrogatepass"))?;
            let b = b.downcast_into::<PyBytes>()?;
            Ok(Cow::Owned(b.as_bytes().to_vec()))
        }
    }
}

/// [`utf8`] of any object, or a `TypeError` naming `what`.
pub fn utf8_of<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Cow<'a, [u8]>> {
    match obj.downcast::<PyString>() {
        Ok(s) => utf8(s),
        Err(_) => Err(not_str(what, obj)),
    }
}

/// A key as a Python `str`. Keys are ASCII, but an unchanged input under
/// profile `none` with lenient mode off is still ASCII (the parser accepts
/// nothing else), so the lossy path never runs; it is there so that no
/// input can panic.
pub fn key_str<'py>(py: Python<'py>, key: &[u8]) -> Bound<'py, PyString> {
    match std::str::from_utf8(key) {
        Ok(s) => PyString::new(py, s),
        Err(_) => PyString::new(py, &String::from_utf8_lossy(key)),
    }
}
