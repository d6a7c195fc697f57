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
///
/// Build one and call it many times: the options are parsed once, and the
/// object may be shared between threads.
///
/// Args:
///     profile (str): "none", "syntax", "rfc" (the default) or "crawl", as
///         the CLI's --profile.
///     enable (str | list[str]): flags to turn on, each a comma-separated
///         list as the CLI's --with ("sort-query",
///         "remove-query-params=utm_*;ref").
///     disable (str | list[str]): flags of the profile to turn off (--without).
///     lenient (bool): read dirty input (spaces, non-ASCII, stray "%")
///         the RFC 3987 way before parsing, as --lenient.
///     key (str): the key format: "uri" (the default), "surt" or "hash".
///     compat (str | None): "w3lib", "w3lib-keep-fragments" or "ia-surt":
///         another tool's keys byte for byte; it takes no other option.
///
/// Raises:
///     ValueError: an unknown profile, flag, key format or preset, or a
///         preset combined with other options.
///     TypeError: an option of the wrong type.
///
/// Example:
///     >>> c = urikey.Canonicalizer("crawl", enable=["sort-query"])
///     >>> c.canonicalize("HTTP://Example.COM:80/?b=2&a=1#top")
///     'http://example.com/?a=1&b=2'
///     >>> c
///     urikey.Canonicalizer(profile='crawl', enable=['sort-query'])
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
        |scratch, out| match keys::key_into(&k.keyer, &input, scratch, out) {
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

impl PyCanonicalizer {
    /// This canonicalizer's keying under the dedup calls' rule for relative
    /// references (`base` / `allow_relative`, as `urikey dedup` takes them).
    fn dedup_keying(&self, base: Option<&str>, allow_relative: bool) -> PyResult<Keying> {
        Ok(self
            .keying
            .with_relative(options::relative(base, allow_relative)?))
    }
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

    /// The profile name ("none", "syntax", "rfc" or "crawl"; the preset's
    /// base profile with `compat`).
    #[getter]
    fn profile(&self) -> String {
        self.keying.config.profile.to_string()
    }

    /// The key format: "uri", "surt" or "hash".
    #[getter]
    fn key(&self) -> String {
        self.keying.config.format.to_string()
    }

    /// True when dirty input is read leniently (the `lenient` option).
    #[getter]
    fn lenient(&self) -> bool {
        self.keying.config.lenient
    }

    /// The canonical key of one URL.
    ///
    /// Args:
    ///     url (str): a URI-reference (absolute or relative).
    ///
    /// Returns:
    ///     str: its key in this canonicalizer's format; `url` itself (the
    ///     same object) when it is already canonical.
    ///
    /// Raises:
    ///     InvalidURIError: `url` is not a valid URI-reference (a
    ///         ValueError with `.index` and `.reason`).
    ///     TypeError: `url` is not a str.
    ///
    /// Example:
    ///     >>> urikey.Canonicalizer("crawl").canonicalize("HTTP://A.com:80/x#f")
    ///     'http://a.com/x'
    fn canonicalize<'py>(&self, url: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        canonicalize_one(&self.keying, url)
    }

    /// The 128-bit fingerprint of one URL's key.
    ///
    /// It is the fingerprint of the "uri" key whatever the `key` option,
    /// the value `urikey normalize --key hash` prints in hex.
    ///
    /// Args:
    ///     url (str): a URI-reference.
    ///
    /// Returns:
    ///     bytes: 16 bytes, big-endian.
    ///
    /// Raises:
    ///     InvalidURIError: `url` is not a valid URI-reference.
    ///     TypeError: `url` is not a str.
    ///
    /// Example:
    ///     >>> c = urikey.Canonicalizer()
    ///     >>> c.fingerprint("http://a.com/") == c.fingerprint("HTTP://A.COM:80/")
    ///     True
    ///     >>> len(c.fingerprint("http://a.com/"))
    ///     16
    fn fingerprint<'py>(&self, url: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
        fingerprint_one(&self.keying, url)
    }

    /// The canonical key of every URL of a batch, on all cores.
    ///
    /// Args:
    ///     urls: a list (or any iterable) of str and None, or an Arrow
    ///         array, chunked array or stream of strings or bytes (pyarrow,
    ///         Polars, pandas, DuckDB); Arrow bytes are read as they are,
    ///         and bytes that are not UTF-8 make an invalid URL.
    ///     on_invalid (str): "null" (the default) gives None for an invalid
    ///         URL; "raise" raises for the first one.
    ///
    /// Returns:
    ///     The keys, in order, as the kind of object given (a list, a
    ///     pyarrow array or chunked array of strings, a Polars or pandas
    ///     Series); None (null) for a None or invalid URL.
    ///
    /// Raises:
    ///     InvalidURIError: with on_invalid="raise", for the first invalid
    ///         URL (`.position` is its place in the batch).
    ///     TypeError: `urls` is not a batch, or an item is not str or None.
    ///     ValueError: Arrow data that does not match its schema, or an
    ///         unknown on_invalid.
    ///
    /// Example:
    ///     >>> urikey.Canonicalizer("crawl").canonicalize_many(["HTTP://A.com/x#f", None, "http://[x"])
    ///     ['http://a.com/x', None, None]
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
        if batch.is_list() && lines.len() >= keys::STREAM_FROM {
            return canonicalize_list(py, &batch, k, mode);
        }
        let keys = py.allow_threads(|| Keys::of(&k.keyer, lines));
        if mode == OnInvalid::Raise {
            if let Some((pos, e)) = keys.first_invalid() {
                return Err(invalid_uri(py, &e, Some(pos)));
            }
        }
        batch.strings(py, &keys)
    }

    /// The fingerprint of every URL of a batch, on all cores.
    ///
    /// Args:
    ///     urls: a list of str and None, or an Arrow array or stream of
    ///         strings or bytes (as for `canonicalize_many`).
    ///
    /// Returns:
    ///     The 16-byte fingerprints (as `fingerprint` gives them), in order:
    ///     a list of bytes and None, or an Arrow fixed_size_binary(16)
    ///     array; None (null) for a None or invalid URL.
    ///
    /// Raises:
    ///     TypeError: `urls` is not a batch, or an item is not str or None.
    ///     ValueError: Arrow data that does not match its schema.
    ///
    /// Example:
    ///     >>> fps = urikey.Canonicalizer().fingerprints(["http://a.com/", "HTTP://a.com:80/", "%"])
    ///     >>> fps[0] == fps[1], fps[2]
    ///     (True, None)
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

    /// Why each URL of a batch is invalid.
    ///
    /// Args:
    ///     urls: a list of str and None, or an Arrow array or stream of
    ///         strings or bytes (as for `canonicalize_many`).
    ///
    /// Returns:
    ///     The reasons, in order, as `InvalidURIError.reason` names them
    ///     ("invalid-host", "invalid-path", ...): a list of str and None,
    ///     or an Arrow string array; None (null) for a valid or None URL.
    ///
    /// Raises:
    ///     TypeError: `urls` is not a batch, or an item is not str or None.
    ///     ValueError: Arrow data that does not match its schema.
    ///
    /// Example:
    ///     >>> urikey.Canonicalizer().invalid_reasons(["http://a.com/", "http://a b/", None])
    ///     [None, 'invalid-host', None]
    fn invalid_reasons<'py>(
        &self,
        py: Python<'py>,
        urls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let batch = Batch::read(urls)?;
        let lines = batch.lines();
        let k = &*self.keying;
        let reasons = py.allow_threads(|| keys::reasons(k, lines));
        batch.texts(py, &reasons)
    }

    /// Which URLs of a batch are the first of their key, as `urikey dedup`
    /// keeps them.
    ///
    /// A dedup call: it takes absolute URLs, as the CLI's dedup does, so a
    /// relative reference ("/a", "hello") is invalid unless `base` or
    /// `allow_relative` says otherwise; an empty string is a blank line.
    ///
    /// Args:
    ///     urls: a list of str and None, or an Arrow array or stream of
    ///         strings or bytes (as for `canonicalize_many`).
    ///     base (str | None): resolve relative references against this
    ///         absolute URI before keying them (the CLI's --base).
    ///     allow_relative (bool): key relative references as they are
    ///         (--allow-relative).
    ///
    /// Returns:
    ///     A list of bool, or an Arrow boolean array: True at the first URL
    ///     of each key in the batch; False for later ones and for None,
    ///     blank and invalid URLs.
    ///
    /// Raises:
    ///     TypeError: `urls` is not a batch, or an item is not str or None.
    ///     ValueError: Arrow data that does not match its schema, a base
    ///         that is not an absolute URI, or both base and allow_relative.
    ///
    /// Example:
    ///     >>> c = urikey.Canonicalizer()
    ///     >>> c.unique_mask(["http://a.com/", "HTTP://A.com:80/", "/x", "http://b.com/"])
    ///     [True, False, False, True]
    ///     >>> c.unique_mask(["/x", "http://a.com/x"], base="http://a.com/")
    ///     [True, False]
    #[pyo3(signature = (urls, *, base = None, allow_relative = false))]
    fn unique_mask<'py>(
        &self,
        py: Python<'py>,
        urls: &Bound<'py, PyAny>,
        base: Option<&str>,
        allow_relative: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let k = self.dedup_keying(base, allow_relative)?;
        let batch = Batch::read(urls)?;
        let lines = batch.lines();
        let mask = py.allow_threads(|| seen::first_of_each_key(&k, lines));
        batch.bools(py, &mask)
    }

    /// `fingerprints` under the dedup calls' rule for relative references
    /// (see `unique_mask`), with None for blank URLs: what
    /// `urikey.spark.dedup` groups rows by. Internal.
    #[pyo3(signature = (urls, *, base = None, allow_relative = false))]
    fn _dedup_fingerprints<'py>(
        &self,
        py: Python<'py>,
        urls: &Bound<'py, PyAny>,
        base: Option<&str>,
        allow_relative: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let k = self.dedup_keying(base, allow_relative)?;
        let batch = Batch::read(urls)?;
        let lines = batch.lines();
        let fps = py.allow_threads(|| {
            let mut fps = keys::fingerprints(&k, lines);
            for (fp, line) in fps.iter_mut().zip(lines) {
                if line.is_some_and(<[u8]>::is_empty) {
                    *fp = None;
                }
            }
            fps
        });
        batch.fingerprints(py, &fps)
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

/// The canonical key of one URL.
///
/// The same as `Canonicalizer(profile, ...).canonicalize(url)`; the
/// canonicalizer of recent option sets is kept, so a loop that calls this
/// with the same options builds it once.
///
/// Args:
///     url (str): a URI-reference (absolute or relative).
///     profile (str): "none", "syntax", "rfc" (the default) or "crawl".
///     enable, disable, lenient, key, compat: as for `Canonicalizer`.
///
/// Returns:
///     str: the key; `url` itself when it is already canonical.
///
/// Raises:
///     InvalidURIError: `url` is not a valid URI-reference (a ValueError
///         with `.index`, the byte offset in its UTF-8 form, and `.reason`).
///     ValueError: an unknown profile, flag, key format or preset.
///     TypeError: `url` is not a str.
///
/// Example:
///     >>> urikey.canonicalize("HTTP://Example.COM:80/a/./b/../c?x#top")
///     'http://example.com/a/c?x#top'
///     >>> urikey.canonicalize("http://Example.com/a#top", "crawl")
///     'http://example.com/a'
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

/// The 128-bit fingerprint of one URL's canonical key.
///
/// What `urikey normalize --key hash` prints, as 16 bytes; the same as
/// `Canonicalizer(profile, ...).fingerprint(url)`.
///
/// Args:
///     url (str): a URI-reference.
///     profile (str): "none", "syntax", "rfc" (the default) or "crawl".
///     enable, disable, lenient, compat: as for `Canonicalizer`.
///
/// Returns:
///     bytes: 16 bytes, big-endian.
///
/// Raises:
///     InvalidURIError: `url` is not a valid URI-reference.
///     ValueError: an unknown profile, flag or preset.
///     TypeError: `url` is not a str.
///
/// Example:
///     >>> urikey.fingerprint("http://a.com/") == urikey.fingerprint("HTTP://A.com:80/")
///     True
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
