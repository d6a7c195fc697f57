//! `urikey.parse` (the strict parser's components) and `urikey.resolve`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use urikey::uri::{Resolver, UriRef};

use crate::errors::invalid_parse;
use crate::text;

/// A parsed URI-reference: its raw components, exactly as written.
#[pyclass(frozen, eq, hash, module = "urikey", name = "URI")]
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PyUri {
    text: String,
    #[pyo3(get)]
    scheme: Option<String>,
    #[pyo3(get)]
    userinfo: Option<String>,
    #[pyo3(get)]
    host: Option<String>,
    #[pyo3(get)]
    port: Option<String>,
    #[pyo3(get)]
    path: String,
    #[pyo3(get)]
    query: Option<String>,
    #[pyo3(get)]
    fragment: Option<String>,
    #[pyo3(get)]
    host_type: Option<&'static str>,
}

fn parse_ref<'a>(py: Python<'_>, bytes: &'a [u8]) -> PyResult<UriRef<'a>> {
    UriRef::parse_bytes(bytes).map_err(|e| invalid_parse(py, &e))
}

#[pymethods]
impl PyUri {
    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self) -> String {
        format!("urikey.URI({:?})", self.text)
    }

    /// True when there is no scheme.
    #[getter]
    fn is_relative(&self) -> bool {
        self.scheme.is_none()
    }

    /// The port as a number, when it is one that fits in 16 bits.
    #[getter]
    fn port_number(&self) -> Option<u16> {
        self.port.as_deref().and_then(|p| p.parse().ok())
    }
}

/// `urikey.parse(url)`.
#[pyfunction]
pub fn parse(url: &Bound<'_, PyAny>) -> PyResult<PyUri> {
    let py = url.py();
    let bytes = text::utf8_of(url, "url")?;
    let u = parse_ref(py, &bytes)?;
    let owned = |s: Option<&str>| s.map(str::to_owned);
    Ok(PyUri {
        text: u.as_str().to_owned(),
        scheme: owned(u.scheme()),
        userinfo: owned(u.userinfo()),
        host: owned(u.host()),
        port: owned(u.port()),
        path: u.path().to_owned(),
        query: owned(u.query()),
        fragment: owned(u.fragment()),
        host_type: u.host_kind().map(urikey::uri::HostKind::name),
    })
}

/// `urikey.resolve(base, reference, *, strict=True)`.
#[pyfunction]
#[pyo3(signature = (base, reference, *, strict = true))]
pub fn resolve(
    base: &Bound<'_, PyAny>,
    reference: &Bound<'_, PyAny>,
    strict: bool,
) -> PyResult<String> {
    let py = base.py();
    let base_bytes = text::utf8_of(base, "base")?;
    let ref_bytes = text::utf8_of(reference, "reference")?;
    let b = parse_ref(py, &base_bytes)?;
    let r = parse_ref(py, &ref_bytes)?;
    let mut out = String::new();
    Resolver::new()
        .non_strict(!strict)
        .resolve_into(&b, &r, &mut out)
        .map_err(|e| {
            PyValueError::new_err(format!("cannot resolve against {:?}: {e}", b.as_str()))
        })?;
    Ok(out)
}
