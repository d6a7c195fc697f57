//! `urikey.Deduplicator`: the engine's streaming seen-set, fed batch after
//! batch.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use urikey::engine::SeenSet;

use crate::batch::Batch;
use crate::options::{self, Keying};
use crate::seen;

/// Remembers the key of every line it was given.
#[pyclass(frozen, module = "urikey", name = "Deduplicator")]
pub struct PyDeduplicator {
    keying: Arc<Keying>,
    // Locked with the GIL released: a call from another thread waits here
    // rather than interleaving its batch with ours.
    seen: Mutex<SeenSet>,
}

fn poisoned() -> PyErr {
    PyRuntimeError::new_err("the Deduplicator is unusable after a failed call")
}

#[pymethods]
impl PyDeduplicator {
    #[new]
    #[pyo3(signature = (profile = "rfc", *, enable = None, disable = None, lenient = false, compat = None))]
    fn new(
        profile: &str,
        enable: Option<&Bound<'_, PyAny>>,
        disable: Option<&Bound<'_, PyAny>>,
        lenient: bool,
        compat: Option<&str>,
    ) -> PyResult<Self> {
        let keying = options::build(options::config(
            profile, enable, disable, lenient, "uri", compat,
        )?);
        let seen = Mutex::new(SeenSet::new(keying.keyer.clone()));
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
        batch.bools(py, &mask.map_err(|()| poisoned())?)
    }

    fn __len__(&self) -> PyResult<usize> {
        Ok(self.seen.lock().map_err(|_| poisoned())?.len())
    }

    /// Bytes of memory the seen-set holds.
    #[getter]
    fn memory_bytes(&self) -> PyResult<usize> {
        Ok(self.seen.lock().map_err(|_| poisoned())?.heap_bytes())
    }
}
