//! `urikey.Canonicalizer` and the one-call `urikey.canonicalize` /
//! `urikey.fingerprint`.

use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use urikey::uri::key::KeyConfig;

use crate::batch::Batch;
use crate::errors::invalid_uri;
use crate::keys::{self, KeyRef, Keys};
use crate::options::{self, Keying};
use crate::seen;
use crate::text;

/// Turns URLs into canonical keys with one set of options.
#[pyclass(frozen, module = "urikey", name = "Canonicalizer")]
#[derive(Debug)]
pub struct PyCanonicalizer {
    keying: Arc<Keying>,
}

/// What `on_invalid` asks for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum OnInvalid {
    Null,
    Raise,
}

fn on_invalid(s: &str) -> PyResult<OnInvalid> {
    match s {
        "null" => Ok(OnInvalid::Null),
        "raise" => Ok(OnInvalid::Raise),
        other => Err(PyValueError::new_err(format!(
            "on_invalid must be 'null' or 'raise', not {other:?}"
        ))),
    }
}

/// The key of one `str` (the object itself when it is already canonical).
pub fn canonicalize_one<'py>(k: &Keying, url: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = url.py();
    let input = text::utf8_of(url, "url")?;
    keys::with_scratch(
        |scratch, out| match keys::key_into(k, &input, scratch, out) {
            Ok(true) => Ok(url.clone()),
            Ok(false) => Ok(text::key_str(py, out).into_any()),
            Err(e) => Err(invalid_uri(py, &e, None)),
        },
    )
}

/// The 16-byte fingerprint of one `str`.
pub fn fingerprint_one<'py>(k: &Keying, url: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let py = url.py();
    let input = text::utf8_of(url, "url")?;
    keys::with_scratch(
        |scratch, _| match keys::fingerprint_of(k, &input, scratch) {
            Ok(fp) => Ok(PyBytes::new(py, &fp.to_be_bytes())),
            Err(e) => Err(invalid_uri(py, &e, None)),
        },
    )
}

/// `canonicalize_many` of a big list: the `str` results of each run of
/// lines are made while the pool keys the next runs (see `keys::stream`).
fn canonicalize_list<'py>(
    py: Python<'py>,
    batch: &Batch<'py>,
    k: &Keying,
    mode: OnInvalid,
) -> PyResult<Bound<'py, PyAny>> {
    let lines = batch.lines();
    let mut out = Vec::with_capacity(lines.len());
    let mut first_invalid = None;
    let mut failed = None;
    keys::stream(py, k, lines, |start, run| {
        if failed.is_some() {
            return;
        }
        if first_invalid.is_none() {
            first_invalid = run.iter().enumerate().find_map(|(i, key)| match key {
                KeyRef::Invalid(e) => Some((start + i, e)),
                _ => None,
            });
        }
        if let Err(e) = batch.push_strings(py, start, run.iter(), &mut out) {
            failed = Some(e);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    if mode == OnInvalid::Raise {
        if let Some((pos, e)) = first_invalid {
            return Err(invalid_uri(py, &e, Some(pos)));
        }
    }
    Ok(PyList::new(py, out)?.into_any())
}

#[pymethods]
impl PyCanonicalizer {
    #[new]
    #[pyo3(signature = (profile = "rfc", *, enable = None, disable = None, lenient = false, key = "uri", compat = None))]
    fn new(
        profile: &str,
        enable: Option<&Bound<'_, PyAny>>,
        disable: Option<&Bound<'_, PyAny>>,
        lenient: bool,
        key: &str,
        compat: Option<&str>,
    ) -> PyResult<Self> {
        let config = options::config(profile, enable, disable, lenient, key, compat)?;
        Ok(Self {
            keying: options::build(config),
        })
    }

    fn __repr__(&self) -> String {
        format!("urikey.Canonicalizer({})", self.keying.repr(true))
    }

    /// The profile name.
    #[getter]
    fn profile(&self) -> String {
        self.keying.config.profile.to_string()
    }

    /// The key format (`uri`, `surt` or `hash`).
    #[getter]
    fn key(&self) -> String {
        self.keying.config.format.to_string()
    }

    /// Is lenient input on?
    #[getter]
    fn lenient(&self) -> bool {
        self.keying.config.lenient
    }

    fn canonicalize<'py>(&self, url: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        canonicalize_one(&self.keying, url)
    }

    fn fingerprint<'py>(&self, url: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        fingerprint_one(&self.keying, url)
    }

    #[pyo3(signature = (urls, *, on_invalid = "null"))]
    fn canonicalize_many<'py>(
        &self,
        py: Python<'py>,
        urls: &Bound<'py, PyAny>,
        on_invalid: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mode = self::on_invalid(on_invalid)?;
        let batch = Batch::read(urls)?;
        let lines = batch.lines();
        let k = &*self.keying;
        if batch.is_list() && lines.len() >= keys::PARALLEL_FROM {
            return canonicalize_list(py, &batch, k, mode);
        }
        let keys = py.allow_threads(|| Keys::of(k, lines));
        if mode == OnInvalid::Raise {
            if let Some((pos, e)) = keys.first_invalid() {
                return Err(invalid_uri(py, &e, Some(pos)));
            }
        }
        batch.strings(py, &keys)
    }

    fn fingerprints<'py>(
        &self,
        py: Python<'py>,
        urls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let batch = Batch::read(urls)?;
        let lines = batch.lines();
        let k = &*self.keying;
        let fps = py.allow_threads(|| keys::fingerprints(k, lines));
        batch.fingerprints(py, &fps)
    }

    fn unique_mask<'py>(
        &self,
        py: Python<'py>,
        urls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let batch = Batch::read(urls)?;
        let lines = batch.lines();
        let k = &*self.keying;
        let mask = py.allow_threads(|| seen::first_of_each_key(k, lines));
        batch.bools(py, &mask)
    }
}

/// Canonicalizers of recent one-call option sets, so `canonicalize(url,
/// "crawl")` in a loop builds its canonicalizer once.
static RECENT: Mutex<Vec<Arc<Keying>>> = Mutex::new(Vec::new());
const RECENT_MAX: usize = 16;

static DEFAULT: OnceLock<Arc<Keying>> = OnceLock::new();

/// The keying for one-call options: the default one without a lookup.
pub fn keying_for(
    profile: &str,
    enable: Option<&Bound<'_, PyAny>>,
    disable: Option<&Bound<'_, PyAny>>,
    lenient: bool,
    key: &str,
    compat: Option<&str>,
) -> PyResult<Arc<Keying>> {
    if profile == "rfc"
        && enable.is_none()
        && disable.is_none()
        && !lenient
        && key == "uri"
        && compat.is_none()
    {
        return Ok(Arc::clone(
            DEFAULT.get_or_init(|| options::build(KeyConfig::default())),
        ));
    }
    let config = options::config(profile, enable, disable, lenient, key, compat)?;
    if let Ok(recent) = RECENT.lock() {
        if let Some(k) = recent.iter().find(|k| k.config == config) {
            return Ok(Arc::clone(k));
        }
    }
    let k = options::build(config);
    if let Ok(mut recent) = RECENT.lock() {
        if recent.len() >= RECENT_MAX {
            recent.remove(0);
        }
        recent.push(Arc::clone(&k));
    }
    Ok(k)
}

/// `urikey.canonicalize(url, profile="rfc", *, ...)`.
#[pyfunction]
#[pyo3(signature = (url, profile = "rfc", *, enable = None, disable = None, lenient = false, key = "uri", compat = None))]
#[allow(clippy::too_many_arguments)]
pub fn canonicalize<'py>(
    url: &Bound<'py, PyAny>,
    profile: &str,
    enable: Option<&Bound<'_, PyAny>>,
    disable: Option<&Bound<'_, PyAny>>,
    lenient: bool,
    key: &str,
    compat: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let k = keying_for(profile, enable, disable, lenient, key, compat)?;
    canonicalize_one(&k, url)
}

/// `urikey.fingerprint(url, profile="rfc", *, ...)`.
#[pyfunction]
#[pyo3(signature = (url, profile = "rfc", *, enable = None, disable = None, lenient = false, compat = None))]
pub fn fingerprint<'py>(
    url: &Bound<'py, PyAny>,
    profile: &str,
    enable: Option<&Bound<'_, PyAny>>,
    disable: Option<&Bound<'_, PyAny>>,
    lenient: bool,
    compat: Option<&str>,
) -> PyResult<Bound<'py, PyBytes>> {
    let k = keying_for(profile, enable, disable, lenient, "uri", compat)?;
    fingerprint_one(&k, url)
}
