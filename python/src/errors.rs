//! Python exceptions for the library's errors. `InvalidURIError` is defined
//! in Python (`urikey/_errors.py`, so it pickles and can be subclassed) and
//! raised from here.

use std::io;
use std::path::Path;

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBytes, PyType};
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

/// The name in Python's `errno` module of an error kind the engine makes
/// without an OS error code (a directory given as an input, ...).
fn errno_name(kind: io::ErrorKind) -> Option<&'static str> {
    use io::ErrorKind as K;
    Some(match kind {
        K::NotFound => "ENOENT",
        K::PermissionDenied => "EACCES",
        K::IsADirectory => "EISDIR",
        K::NotADirectory => "ENOTDIR",
        K::AlreadyExists => "EEXIST",
        K::ReadOnlyFilesystem => "EROFS",
        K::StorageFull => "ENOSPC",
        K::BrokenPipe => "EPIPE",
        K::Interrupted => "EINTR",
        _ => return None,
    })
}

/// A file system path as Python's own errors name it (`os.fsdecode`).
fn py_filename<'py>(py: Python<'py>, path: &Path) -> PyResult<Bound<'py, PyAny>> {
    #[cfg(unix)]
    let bytes = {
        use std::os::unix::ffi::OsStrExt;
        PyBytes::new(py, path.as_os_str().as_bytes())
    };
    #[cfg(not(unix))]
    let bytes = PyBytes::new(py, path.to_string_lossy().as_bytes());
    py.import("os")?.call_method1("fsdecode", (bytes,))
}

/// `err` about `filename` as Python raises an OS error: the `OSError`
/// subclass of its errno (`FileNotFoundError`, `IsADirectoryError`,
/// `PermissionError`...) with `errno`, `strerror` and `filename` set, so
/// that `except FileNotFoundError` catches a missing input. An error
/// without an errno (a corrupt gzip stream) is a plain `OSError` with the
/// whole message, `filename` set.
pub fn os_error(py: Python<'_>, err: &io::Error, filename: &Path, message: &str) -> PyErr {
    let made = (|| -> PyResult<PyErr> {
        let name = py_filename(py, filename)?;
        let code = match err.raw_os_error() {
            Some(code) => Some(code),
            None => match errno_name(err.kind()) {
                Some(n) => Some(py.import("errno")?.getattr(n)?.extract::<i32>()?),
                None => None,
            },
        };
        if let Some(code) = code {
            let strerror: String = py
                .import("os")?
                .call_method1("strerror", (code,))?
                .extract()?;
            // OSError(errno, strerror, filename) is the errno's subclass.
            let value = py.get_type::<PyOSError>().call1((code, strerror, name))?;
            return Ok(PyErr::from_value(value));
        }
        let value = py.get_type::<PyOSError>().call1((message,))?;
        value.setattr("filename", name)?;
        Ok(PyErr::from_value(value))
    })();
    made.unwrap_or_else(|e| e)
}

/// An engine error (an input that cannot be read, an output that cannot be
/// written, a temporary file of a spilled run) as [`os_error`] raises it,
/// naming the input, `output` or the temporary directory.
pub fn engine_error(py: Python<'_>, err: &urikey::engine::Error, output: &Path) -> PyErr {
    use std::error::Error as _;
    use urikey::engine::Error as E;
    let mut text = err.to_string();
    if let Some(source) = err.source() {
        text.push_str(": ");
        text.push_str(&source.to_string());
    }
    match err {
        E::Open { path, source } | E::Read { path, source, .. } => {
            os_error(py, source, Path::new(path), &text)
        }
        E::Write(source) => os_error(py, source, output, &text),
        E::Spill { dir, source } => os_error(py, source, dir, &text),
        E::Config(_) => PyValueError::new_err(text),
        _ => PyOSError::new_err(text),
    }
}
