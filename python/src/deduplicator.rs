//! `urikey.Deduplicator`: the engine's streaming seen-set, fed batch after
//! batch.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use urikey::engine::{memory, OverLimit, SeenSet};

use crate::batch::Batch;
use crate::fingerprints::read_fingerprints;
use crate::options::{self, Keying};
use crate::seen;

/// A seen-set of keys, fed batch after batch: which URLs are new, ever.
///
/// The CLI's seen-set (about 17 bytes per distinct key, the same 128-bit
/// fingerprints and collision bound), answering batch by batch in feed
/// order. A dedup call: it takes absolute URLs, as `urikey dedup` does, so
/// a relative reference is invalid unless `base` or `allow_relative` says
/// otherwise, and an empty string is a blank line. It lives in memory and
/// dies with the process: for a set larger than memory, or one that must
/// outlive the run, use `SeenStore`.
///
/// Args:
///     profile, enable, disable, lenient, compat: the keying options of
///         `Canonicalizer` (the key format is always "uri").
///     base (str | None): resolve relative references against this absolute
///         URI before keying them (the CLI's --base).
///     allow_relative (bool): key relative references as they are
///         (--allow-relative).
///     memory_limit (int | str | None): the most memory the set may hold,
///         in bytes or as a size such as "2G"; by default half the
///         machine's memory (three quarters of a cgroup's limit).
///     expected_keys (int | None): about how many distinct keys will be
///         added, so the set grows to that size in one step.
///
/// Raises:
///     ValueError: an unknown profile, flag or preset, a bad size, a base
///         that is not an absolute URI, or both base and allow_relative.
///     TypeError: an option of the wrong type.
///
/// Example:
///     >>> d = urikey.Deduplicator("crawl")
///     >>> d.add(["http://a.com/x", "HTTP://A.com/x#f", "/rel"])
///     [True, False, False]
///     >>> d.add(["http://a.com:80/x", "http://b.com/"])
///     [False, True]
///     >>> len(d)
///     2
#[pyclass(frozen, module = "urikey", name = "Deduplicator")]
#[derive(Debug)]
pub struct PyDeduplicator {
    keying: Arc<Keying>,
    // Locked with the GIL released: a call from another thread waits here
    // rather than interleaving its batch with ours.
    seen: Mutex<SeenSet>,
}

fn poisoned() -> PyErr {
    PyRuntimeError::new_err("the Deduplicator is unusable after a failed call")
}

/// A refused batch as `MemoryError`, with what to do instead.
fn over_limit(e: &OverLimit) -> PyErr {
    PyMemoryError::new_err(format!(
        "{e} (raise memory_limit, or deduplicate a file with urikey.dedup_file, which spills to disk)"
    ))
}

#[pymethods]
impl PyDeduplicator {
    #[new]
    #[pyo3(signature = (profile = "rfc", *, enable = None, disable = None, lenient = false,
        compat = None, base = None, allow_relative = false, memory_limit = None,
        expected_keys = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        profile: &str,
        enable: Option<&Bound<'_, PyAny>>,
        disable: Option<&Bound<'_, PyAny>>,
        lenient: bool,
        compat: Option<&str>,
        base: Option<&str>,
        allow_relative: bool,
        memory_limit: Option<&Bound<'_, PyAny>>,
        expected_keys: Option<i64>,
    ) -> PyResult<Self> {
        // About how many distinct keys the caller will add: the tables
        // grow to that size in one step (`SeenSet::with_expected_keys`).
        let expected = match expected_keys {
            Some(n) => u64::try_from(n)
                .map_err(|_| PyValueError::new_err("expected_keys cannot be negative"))?,
            None => 0,
        };
        let keying = options::build(options::config(
            profile, enable, disable, lenient, "uri", compat,
        )?);
        // As `urikey dedup`: a relative reference (`hello`) is not a URL,
        // unless `base` or `allow_relative` says otherwise.
        let relative = options::relative(base, allow_relative)?;
        // A set that answers batch by batch cannot spill; past its limit it
        // refuses the batch rather than letting the process be killed.
        let limit = options::memory_limit(memory_limit)?.or_else(memory::default_limit);
        let seen = Mutex::new(
            SeenSet::new(keying.keyer.clone().with_relative(relative))
                .with_memory_limit(limit)
                .with_expected_keys(expected),
        );
        Ok(Self { keying, seen })
    }

    fn __repr__(&self) -> PyResult<String> {
        let n = self.seen.lock().map_err(|_| poisoned())?.len();
        Ok(format!(
            "urikey.Deduplicator({}) with {n} keys",
            self.keying.repr(false)
        ))
    }

    /// Adds a batch of URLs to the set: which of them are new.
    ///
    /// Args:
    ///     urls: a list (or any iterable) of str and None, or an Arrow
    ///         array or stream of strings or bytes (as for
    ///         `Canonicalizer.canonicalize_many`).
    ///
    /// Returns:
    ///     A list of bool, or an Arrow boolean array: True at each URL whose
    ///     key was never seen before (in this call or an earlier one);
    ///     False for duplicates and for None, blank and invalid URLs.
    ///
    /// Raises:
    ///     MemoryError: the set would pass its memory_limit; nothing of
    ///         the batch was added.
    ///     TypeError: `urls` is not a batch, or an item is not str or None.
    ///     ValueError: Arrow data that does not match its schema.
    ///
    /// Example:
    ///     >>> d = urikey.Deduplicator()
    ///     >>> d.add(["http://a.com/", "http://a.com:80/", None])
    ///     [True, False, False]
    fn add<'py>(&self, py: Python<'py>, urls: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let batch = Batch::read(urls)?;
        let lines = batch.lines();
        let set = &self.seen;
        let mask = py.allow_threads(|| {
            set.lock()
                .map(|mut s| seen::add(&mut s, lines))
                .map_err(drop)
        });
        let mask = mask.map_err(|()| poisoned())?.map_err(|e| over_limit(&e))?;
        batch.bools(py, &mask)
    }

    /// Adds a batch of 16-byte fingerprints to the set: which of them are
    /// new. A URL's fingerprint (`Canonicalizer.fingerprint` with the set's
    /// options) is the key `add` keeps for it.
    ///
    /// Args:
    ///     fingerprints (Iterable[bytes]): 16 bytes each, in the byte order
    ///         `Canonicalizer.fingerprint` returns.
    ///
    /// Returns:
    ///     list[bool]: True at each fingerprint never seen before (in this
    ///     call or an earlier one).
    ///
    /// Raises:
    ///     MemoryError: the set would pass its memory_limit; nothing of
    ///         the batch was added.
    ///     TypeError: not an iterable of bytes.
    ///     ValueError: a fingerprint is not 16 bytes long (the message names
    ///         its index; nothing was added).
    ///
    /// Example:
    ///     >>> d = urikey.Deduplicator()
    ///     >>> d.add_fingerprints([urikey.fingerprint("http://a.com/"), bytes(16)])
    ///     [True, True]
    ///     >>> d.add(["http://a.com:80/"])
    ///     [False]
    fn add_fingerprints(
        &self,
        py: Python<'_>,
        fingerprints: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<bool>> {
        let fps = read_fingerprints(fingerprints)?;
        let set = &self.seen;
        let mask = py.allow_threads(|| {
            set.lock()
                .map(|mut s| s.add_fingerprints(&fps))
                .map_err(drop)
        });
        mask.map_err(|()| poisoned())?.map_err(|e| over_limit(&e))
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.seen.lock().map_err(|_| poisoned())?.len())
    }

    /// The seen-set's memory limit in bytes (None when the machine's memory
    /// could not be read).
    #[getter]
    fn memory_limit(&self) -> PyResult<Option<u64>> {
        Ok(self.seen.lock().map_err(|_| poisoned())?.memory_limit())
    }

    /// Bytes of memory the seen-set holds now.
    #[getter]
    fn memory_bytes(&self) -> PyResult<usize> {
        Ok(self.seen.lock().map_err(|_| poisoned())?.heap_bytes())
    }
}
