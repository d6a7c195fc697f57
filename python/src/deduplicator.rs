//! `urikey.Deduplicator`: a seen-set fed batch after batch.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::batch::Batch;
use crate::keys;
use crate::options::{names, Keying, Spec};
use crate::seen::Seen;

/// Remembers the fingerprint of every key it was given.
#[pyclass(frozen, module = "urikey", name = "Deduplicator")]
pub struct PyDeduplicator {
    keying: Arc<Keying>,
    // Locked with the GIL released: a call from another thread waits here
    // rather than interleaving its batch with ours.
    seen: Mutex<Seen>,
}

fn poisoned() -> PyErr {
    PyRuntimeError::new_err("the Deduplicator is unusable after a failed call")
}

#[pymethods]
impl PyDeduplicator {
    #[new]
    #[pyo3(signature = (profile = "rfc", *, enable = None, disable = None, lenient = false))]
    fn new(
        profile: &str,
        enable: Option<&Bound<'_, PyAny>>,
        disable: Option<&Bound<'_, PyAny>>,
        lenient: bool,
    ) -> PyResult<Self> {
        let spec = Spec {
            profile: profile.to_owned(),
            enable: names(enable)?,
            disable: names(disable)?,
            lenient,
            key: "uri".to_owned(),
        };
        Ok(Self {
            keying: spec.build()?,
            seen: Mutex::new(Seen::default()),
        })
    }

    fn __repr__(&self) -> PyResult<String> {
        let n = self.seen.lock().map_err(|_| poisoned())?.len();
        Ok(format!(
            "urikey.Deduplicator({}) with {n} keys",
            self.keying.spec.repr()
        ))
    }

    /// True at each line whose key was never seen before (in this call or
    /// an earlier one); False for duplicates, invalid lines and None.
    fn add<'py>(&self, py: Python<'py>, urls: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let batch = Batch::read(urls)?;
        let lines = batch.lines();
        let k = &*self.keying;
        let seen = &self.seen;
        let mask = py.allow_threads(|| {
            let fps = keys::fingerprints(k, lines);
            seen.lock().map(|mut s| s.add(&fps)).map_err(drop)
        });
        batch.bools(py, &mask.map_err(|_| poisoned())?)
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
