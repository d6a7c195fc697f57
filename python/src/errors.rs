//! Python exceptions for the library's errors. `InvalidURIError` is defined
//! in Python (`urikey/_errors.py`, so it pickles and can be subclassed) and
//! raised from here.

use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::PyType;
use urikey::uri::key::KeyError;
use urikey::uri::ParseError;

static INVALID_URI: GILOnceCell<Py<PyType>> = GILOnceCell::new();

/// `InvalidURIError(message, index, reason, position)`: `index` is the byte
/// offset in the UTF-8 input, `reason` the error's kebab-case name and
/// `position` the line's place in a batch (`None` for one URL).
pub fn invalid_uri(py: Python<'_>, err: &KeyError, position: Option<usize>) -> PyErr {
    let message = match position {
        Some(p) => format!("invalid URI at position {p} of the batch: {err}"),
        None => format!("invalid URI: {err}"),
    };
    invalid_uri_parts(py, message, err.index(), err.reason(), position)
}

/// [`invalid_uri`] for a parse error (`parse`, `resolve`).
pub fn invalid_parse(py: Python<'_>, err: &ParseError) -> PyErr {
    invalid_uri(py, &KeyError::from(*err), None)
}

/// [`invalid_uri`] from its parts.
pub fn invalid_uri_parts(
    py: Python<'_>,
    message: String,
    index: usize,
    reason: &str,
    position: Option<usize>,
) -> PyErr {
    match INVALID_URI.import(py, "urikey._errors", "InvalidURIError") {
        Ok(class) => match class.call1((message, index, reason, position)) {
            Ok(value) => PyErr::from_value(value),
            Err(e) => e,
        },
        Err(e) => e,
    }
}

/// An engine error (an input that cannot be read, an output that cannot be
/// written) as `OSError`, with the cause's text.
pub fn engine_error(err: &urikey::engine::Error) -> PyErr {
    use std::error::Error as _;
    let mut text = err.to_string();
    if let Some(source) = err.source() {
        text.push_str(": ");
        text.push_str(&source.to_string());
    }
    PyOSError::new_err(text)
}
