//! `urikey.parse` (the strict parser's components) and `urikey.resolve`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use urikey::uri::{Resolver, UriRef};

use crate::errors::invalid_parse;
use crate::text;

/// A parsed URI-reference: its raw components, exactly as written.
///
/// Made by `urikey.parse`; nothing is normalized (use `canonicalize` for
/// that). `str(uri)` is the text parsed. URIs compare and hash by their
/// components.
///
/// Example:
///     >>> u = urikey.parse("http://user@[::1]:8080/p?q#f")
///     >>> u.scheme, u.userinfo, u.host, u.port, u.path, u.query, u.fragment
///     ('http', 'user', '[::1]', '8080', '/p', 'q', 'f')
#[pyclass(frozen, eq, hash, module = "urikey", name = "URI")]
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct PyUri {
    text: String,
    /// The scheme as written ("HTTP" stays upper case), or None for a
    /// relative reference.
    #[pyo3(get)]
    scheme: Option<String>,
    /// The userinfo before "@" in the authority, or None.
    #[pyo3(get)]
    userinfo: Option<String>,
    /// The host as written (an IPv6 literal keeps its brackets), or None
    /// without an authority; "" for an empty host ("file:///p").
    #[pyo3(get)]
    host: Option<String>,
    /// The port's digits as written (possibly empty: "http://a:/"), or
    /// None; see `port_number`.
    #[pyo3(get)]
    port: Option<String>,
    /// The path as written; always present, possibly "".
    #[pyo3(get)]
    path: String,
    /// The query after "?", without it, or None when there is no "?".
    #[pyo3(get)]
    query: Option<String>,
    /// The fragment after "#", without it, or None when there is no "#".
    #[pyo3(get)]
    fragment: Option<String>,
    /// What the host is: "reg-name", "ipv4", "ipv6" or "ipvfuture"; None
    /// without a host.
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

    /// True when there is no scheme (a relative reference, RFC 3986 §4.2).
    #[getter]
    fn is_relative(&self) -> bool {
        self.scheme.is_none()
    }

    /// The port as an int, or None when there is none, it is empty, or
    /// its digits do not fit in 16 bits.
    #[getter]
    fn port_number(&self) -> Option<u16> {
        self.port.as_deref().and_then(|p| p.parse().ok())
    }
}

/// Parses a URI-reference (RFC 3986, strictly) into its raw components.
///
/// Args:
///     url (str): an absolute URI or a relative reference.
///
/// Returns:
///     URI: the components, exactly as written.
///
/// Raises:
///     InvalidURIError: `url` is not a valid URI-reference (a ValueError
///         with `.index` and `.reason`).
///     TypeError: `url` is not a str.
///
/// Example:
///     >>> u = urikey.parse("http://user@[::1]:8080/p?q#f")
///     >>> u.host, u.host_type, u.port_number
///     ('[::1]', 'ipv6', 8080)
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

/// Resolves a reference against a base URI (RFC 3986 §5.2).
///
/// Args:
///     base (str): an absolute URI.
///     reference (str): a URI-reference (relative or absolute).
///     strict (bool): True (the default) is RFC 3986's strict resolver;
///         False ignores a reference's scheme when it equals the base's
///         (§5.2.2, for backward compatibility).
///
/// Returns:
///     str: the target URI (dot segments removed, not otherwise
///     normalized).
///
/// Raises:
///     InvalidURIError: `base` or `reference` is not a valid
///         URI-reference.
///     ValueError: `base` is not absolute.
///     TypeError: an argument is not a str.
///
/// Example:
///     >>> urikey.resolve("http://a/b/c/d;p?q", "../g")
///     'http://a/b/g'
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
