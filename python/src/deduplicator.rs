//! `urikey.Deduplicator`: the engine's streaming seen-set, fed batch after
//! batch.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use urikey::engine::{memory, OverLimit, SeenSet};
use urikey::uri::key::Relative;

use crate::batch::Batch;
use crate::options::{self, Keying};
use crate::seen;

/// Remembers the key of every line it was given.
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
        compat = None, memory_limit = None, expected_keys = None))]
    fn new(
        profile: &str,
        enable: Option<&Bound<'_, PyAny>>,
        disable: Option<&Bound<'_, PyAny>>,
        lenient: bool,
        compat: Option<&str>,
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
        // As `urikey dedup`: a relative reference (`hello`) is not a URL.
        // A set that answers batch by batch cannot spill; past its limit it
        // refuses the batch rather than letting the process be killed.
        let limit = options::memory_limit(memory_limit)?.or_else(memory::default_limit);
        let seen = Mutex::new(
            SeenSet::new(keying.keyer.clone().with_relative(Relative::Reject))
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

    /// True at each line whose key was never seen before (in this call or
    /// an earlier one); False for duplicates, invalid lines and None.
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

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.seen.lock().map_err(|_| poisoned())?.len())
    }

    /// The seen-set's memory limit in bytes (`None` when the machine's
    /// memory could not be read).
    #[getter]
    fn memory_limit(&self) -> PyResult<Option<u64>> {
        Ok(self.seen.lock().map_err(|_| poisoned())?.memory_limit())
    }

    /// Bytes of memory the seen-set holds.
    #[getter]
    fn memory_bytes(&self) -> PyResult<usize> {
        Ok(self.seen.lock().map_err(|_| poisoned())?.heap_bytes())
    }
}
