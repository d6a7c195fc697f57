//! `urikey.SeenStore`: the seen-store of `urikey dedup --state` (a
//! directory of every key's fingerprint, larger than memory, made durable by
//! commits), fed batch after batch.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{
    PyBlockingIOError, PyFileExistsError, PyFileNotFoundError, PyMemoryError, PyNotADirectoryError,
    PyOSError, PyRuntimeError, PyValueError,
};
use pyo3::prelude::*;
use urikey::engine::store::{Access, SeenStore, StoreError};
use urikey::engine::{memory, BatchError, BatchedStore};
use urikey::uri::key::Relative;

use crate::batch::Batch;
use crate::fingerprints::{indexed_fingerprints, scatter, valid_fingerprints};
use crate::options::{self, Keying};

/// A seen-store on disk (`urikey dedup --state`'s), fed batch after batch:
/// which URLs are new to everything committed before, across processes and
/// restarts, for more keys than memory holds.
///
/// Keys added since the last `commit()` are not durable: a crash or
/// `close()` drops them. Calls are taken one at a time, so a store may be
/// shared between threads. One writer per store at a time (a second one
/// gets OSError naming the holder); `readonly=True` takes no lock and may
/// run beside the writer. A dedup call: a relative reference is an invalid
/// line, as in `urikey dedup`.
///
/// Args:
///     path (str | os.PathLike): the store's directory.
///     profile, enable, disable, lenient, compat: the keying options of
///         `Canonicalizer`; a store refuses keys of other options.
///     create (bool): make the store when `path` is missing or empty.
///     readonly (bool): look up only (`contains`, `add` without adding).
///     memory_limit (int | str | None): most memory for the keys added
///         since the last commit, in bytes or as a size such as "2G".
///
/// Raises:
///     ValueError: an unknown option, or a store made with other options
///         (the message names both).
///     OSError: the directory is not a store, is damaged, or is locked by
///         another writer.
///
/// Example:
///     >>> with urikey.SeenStore("seen", "crawl") as s:
///     ...     print(s.add(["http://a.com/x", "HTTP://A.com:80/x", "/rel"]))
///     [True, False, False]
///     >>> with urikey.SeenStore("seen", "crawl") as s:  # committed on exit
///     ...     print(s.add(["http://a.com/x", "http://b.com/"]))
///     [False, True]
#[pyclass(frozen, module = "urikey", name = "SeenStore")]
#[derive(Debug)]
pub struct PySeenStore {
    keying: Arc<Keying>,
    path: PathBuf,
    // Locked with the GIL released: calls from several threads are taken
    // one at a time.
    open: Mutex<Option<BatchedStore>>,
}

fn store_error(e: StoreError) -> PyErr {
    let message = e.to_string();
    match e {
        StoreError::ConfigMismatch { .. } | StoreError::KeyVersion { .. } => {
            PyValueError::new_err(message)
        }
        // OSError(errno, strerror, filename) is the errno's subclass
        // (`FileNotFoundError`, `NotADirectoryError`...), as `dedup_file`
        // raises them.
        StoreError::Io {
            ref path,
            ref source,
        } => match source.raw_os_error() {
            Some(code) => {
                let text = source.to_string();
                let strerror = text.split(" (os error ").next().unwrap_or(&text).to_owned();
                PyOSError::new_err((code, strerror, path.to_string_lossy().into_owned()))
            }
            None => PyOSError::new_err(message),
        },
        StoreError::CommitNotSynced {
            ref dir,
            ref source,
            ..
        } => match source.raw_os_error() {
            Some(code) => PyOSError::new_err((code, message, dir.to_string_lossy().into_owned())),
            None => PyOSError::new_err(message),
        },
        // Where the file system has the word for it, an OSError of its
        // kind, with `errno`, `strerror` and the store as `filename`.
        StoreError::NotAStore {
            ref dir,
            ref why,
            can_make,
        } if !dir.is_dir() => {
            let makes = if can_make {
                "; opening it to write makes one"
            } else {
                ""
            };
            let strerror = format!("not a seen-store: {why}{makes}");
            if dir.exists() {
                os_error::<PyNotADirectoryError>("ENOTDIR", strerror, dir)
            } else {
                os_error::<PyFileNotFoundError>("ENOENT", strerror, dir)
            }
        }
        StoreError::Exists { ref dir } => os_error::<PyFileExistsError>(
            "EEXIST",
            "not empty: a new seen-store needs a new or empty directory".to_owned(),
            dir,
        ),
        StoreError::Locked {
            ref dir,
            ref holder,
        } => os_error::<PyBlockingIOError>(
            "EAGAIN",
            format!(
                "seen-store locked by another writer ({holder}); one writer at a time \
                 (read-only use needs no lock)"
            ),
            dir,
        ),
        // The rest are no file system's errors: their message names the
        // store's directory or its damaged file.
        _ => PyOSError::new_err(message),
    }
}

/// An `OSError` of class `E` as the file system raises one: `errno` (by its
/// name in Python's `errno` module), `strerror`, and `path` as `filename`.
fn os_error<E: pyo3::PyTypeInfo>(errno: &str, strerror: String, path: &std::path::Path) -> PyErr {
    let code = Python::with_gil(|py| {
        py.import("errno")
            .and_then(|m| m.getattr(errno))
            .and_then(|c| c.extract::<i32>())
            .ok()
    });
    PyErr::new::<E, _>((code, strerror, path.to_string_lossy().into_owned()))
}

fn closed() -> PyErr {
    PyValueError::new_err("the SeenStore is closed")
}

fn poisoned() -> PyErr {
    PyRuntimeError::new_err("the SeenStore is unusable after a failed call")
}

impl PySeenStore {
    /// Runs `f` on the open store with the GIL released.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut BatchedStore) -> PyResult<T> + Send,
    ) -> PyResult<T> {
        let open = &self.open;
        py.allow_threads(|| {
            let mut guard = open.lock().map_err(|_| poisoned())?;
            match guard.as_mut() {
                Some(o) => f(o),
                None => Err(closed()),
            }
        })
    }
}

/// The fingerprints of `valid` (with their places in a batch of `n`) added
/// to `o`: true at the place of each one new to it.
fn add_valid(o: &mut BatchedStore, valid: &[(usize, u128)], n: usize) -> PyResult<Vec<bool>> {
    let fps: Vec<u128> = valid.iter().map(|v| v.1).collect();
    let new = o.add_fingerprints(&fps).map_err(|e| match e {
        BatchError::OverLimit(_) => PyMemoryError::new_err(e.to_string()),
        BatchError::Store(e) => store_error(e),
    })?;
    Ok(scatter(valid, &new, n))
}

/// True at the place of each of `valid` (in a batch of `n`) that `o` holds.
fn contains_valid(o: &BatchedStore, valid: &[(usize, u128)], n: usize) -> PyResult<Vec<bool>> {
    let fps: Vec<u128> = valid.iter().map(|v| v.1).collect();
    let known = o.contains_fingerprints(&fps).map_err(store_error)?;
    Ok(scatter(valid, &known, n))
}

#[pymethods]
impl PySeenStore {
    #[new]
    #[pyo3(signature = (path, profile = "rfc", *, enable = None, disable = None, lenient = false,
        compat = None, create = true, readonly = false, memory_limit = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        profile: &str,
        enable: Option<&Bound<'_, PyAny>>,
        disable: Option<&Bound<'_, PyAny>>,
        lenient: bool,
        compat: Option<&str>,
        create: bool,
        readonly: bool,
        memory_limit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let config = options::config(profile, enable, disable, lenient, "uri", compat)?;
        // As `urikey dedup`: a relative reference (`hello`) is not a URL.
        let keying = Arc::new(Keying {
            keyer: config.keyer().with_relative(Relative::Reject),
            config,
        });
        let limit = options::memory_limit(memory_limit)?.or_else(memory::default_limit);
        let c = keying.config.clone();
        let p = path.clone();
        let store = py
            .allow_threads(move || match (readonly, create) {
                (true, _) => SeenStore::open_for(&p, &c, Access::ReadOnly),
                (false, true) => SeenStore::open_or_create(&p, &c),
                (false, false) => SeenStore::open_for(&p, &c, Access::Write),
            })
            .map_err(store_error)?;
        let batches = BatchedStore::new(store, keying.keyer.clone(), limit);
        let me = Self {
            keying,
            path,
            open: Mutex::new(Some(batches)),
        };
        Ok(me)
    }

    fn __repr__(&self) -> String {
        format!(
            "urikey.SeenStore({:?}, {})",
            self.path.display().to_string(),
            self.keying.repr(false)
        )
    }

    /// Adds a batch of URLs and says which are new.
    ///
    /// Args:
    ///     urls (list[str | None] | Arrow array): the batch, in order.
    ///
    /// Returns:
    ///     list[bool] (an Arrow boolean array for Arrow input): True at each
    ///     line whose key neither the store nor an earlier line (of this
    ///     batch or one added since the last commit) has; False for the
    ///     others, invalid lines and None. The new keys become part of the
    ///     store at the next `commit()`.
    ///
    /// Raises:
    ///     TypeError: `urls` is not a list of str or an Arrow array.
    ///     ValueError: the store is closed.
    ///     MemoryError: the keys added since the last commit would pass
    ///         `memory_limit` (commit, then add again).
    ///     OSError: the store could not be read, or the keys not set aside
    ///         for the commit: the keys added since the last commit are
    ///         forgotten (new again to the next `add`).
    ///
    /// Example:
    ///     >>> s = urikey.SeenStore("seen", "crawl")
    ///     >>> s.add(["http://a.com/x", "HTTP://A.com:80/x", None])
    ///     [True, False, False]
    fn add<'py>(&self, py: Python<'py>, urls: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let batch = Batch::read(urls)?;
        let lines = batch.lines();
        let keying = &self.keying;
        let mask = self.with(py, |o| {
            add_valid(o, &valid_fingerprints(keying, lines), lines.len())
        })?;
        batch.bools(py, &mask)
    }

    /// Which URLs were seen before; nothing is added.
    ///
    /// Args:
    ///     urls (list[str | None] | Arrow array): the batch.
    ///
    /// Returns:
    ///     list[bool] (an Arrow boolean array for Arrow input): True at each
    ///     line whose key the store holds or that was added since the last
    ///     commit.
    ///
    /// Raises:
    ///     TypeError: `urls` is not a list of str or an Arrow array.
    ///     ValueError: the store is closed.
    ///
    /// Example:
    ///     >>> s = urikey.SeenStore("seen", "crawl")
    ///     >>> s.add(["http://a.com/x"])
    ///     [True]
    ///     >>> s.contains(["HTTP://a.com/x", "http://c.com/"])
    ///     [True, False]
    fn contains<'py>(
        &self,
        py: Python<'py>,
        urls: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let batch = Batch::read(urls)?;
        let lines = batch.lines();
        let keying = &self.keying;
        let mask = self.with(py, |o| {
            contains_valid(o, &valid_fingerprints(keying, lines), lines.len())
        })?;
        batch.bools(py, &mask)
    }

    /// Adds a batch of 16-byte fingerprints and says which are new: `add`
    /// for callers that fingerprint themselves (a Scrapy request with a
    /// body has no URL key).
    ///
    /// A URL's fingerprint (`Canonicalizer.fingerprint` or
    /// `urikey.fingerprint` with the store's options) is the one `add`
    /// stores for it, so both methods may feed one store.
    ///
    /// Args:
    ///     fingerprints (Iterable[bytes]): 16 bytes each, in the byte order
    ///         `Canonicalizer.fingerprint` returns.
    ///
    /// Returns:
    ///     list[bool]: True at each fingerprint that neither the store nor
    ///     an earlier one (of this batch or added since the last commit)
    ///     has. The new ones become part of the store at the next
    ///     `commit()`.
    ///
    /// Raises:
    ///     TypeError: not an iterable of bytes.
    ///     ValueError: a fingerprint is not 16 bytes long (the message names
    ///         its index; nothing was added), or the store is closed.
    ///     MemoryError: the keys added since the last commit would pass
    ///         `memory_limit` (commit, then add again).
    ///     OSError: the store could not be read, or the keys not set aside
    ///         for the commit: the keys added since the last commit are
    ///         forgotten (new again to the next `add`).
    ///
    /// Example:
    ///     >>> s = urikey.SeenStore("seen", "crawl")
    ///     >>> fp = urikey.fingerprint("http://a.com/x", "crawl")
    ///     >>> s.add_fingerprints([fp, bytes(16), fp])
    ///     [True, True, False]
    ///     >>> s.add(["HTTP://a.com/x"])
    ///     [False]
    fn add_fingerprints(
        &self,
        py: Python<'_>,
        fingerprints: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<bool>> {
        let valid = indexed_fingerprints(fingerprints)?;
        self.with(py, |o| add_valid(o, &valid, valid.len()))
    }

    /// Which fingerprints were seen before; nothing is added.
    ///
    /// Args:
    ///     fingerprints (Iterable[bytes]): 16 bytes each, as for
    ///         `add_fingerprints`.
    ///
    /// Returns:
    ///     list[bool]: True at each fingerprint the store holds or that was
    ///     added since the last commit.
    ///
    /// Raises:
    ///     TypeError: not an iterable of bytes.
    ///     ValueError: a fingerprint is not 16 bytes long (the message names
    ///         its index), or the store is closed.
    ///
    /// Example:
    ///     >>> s = urikey.SeenStore("seen", "crawl")
    ///     >>> s.add(["http://a.com/x"])
    ///     [True]
    ///     >>> s.contains_fingerprints([urikey.fingerprint("http://a.com/x", "crawl"), bytes(16)])
    ///     [True, False]
    fn contains_fingerprints(
        &self,
        py: Python<'_>,
        fingerprints: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<bool>> {
        let valid = indexed_fingerprints(fingerprints)?;
        self.with(py, |o| contains_valid(o, &valid, valid.len()))
    }

    /// Makes the keys added since the last commit durable: atomic and
    /// synced to disk when it returns (docs/seen-store.md).
    ///
    /// Returns:
    ///     int: how many keys the commit added.
    ///
    /// Raises:
    ///     ValueError: the store is closed or read-only.
    ///     OSError: the commit could not be written: the store stays at its
    ///         last commit, and the keys added since are forgotten (new again
    ///         to the next `add`, never "seen" without being stored).
    ///
    /// Example:
    ///     >>> s = urikey.SeenStore("seen", "crawl")
    ///     >>> s.add(["http://a.com/x", "http://b.com/"])
    ///     [True, True]
    ///     >>> s.commit()
    ///     2
    fn commit(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |o| {
            if o.is_read_only() {
                return Err(PyValueError::new_err(
                    "the SeenStore was opened read-only: nothing can be committed",
                ));
            }
            Ok(o.commit().map_err(store_error)?.added)
        })
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |o| Ok(usize::try_from(o.len()).unwrap_or(usize::MAX)))
    }

    /// Releases the store and its writer lock; keys added since the last
    /// commit are dropped. Closing twice is allowed.
    ///
    /// Returns:
    ///     None.
    ///
    /// Raises:
    ///     RuntimeError: an internal lock was poisoned (never expected).
    ///
    /// Example:
    ///     >>> s = urikey.SeenStore("seen", "crawl")
    ///     >>> s.close()
    ///     >>> len(urikey.SeenStore("seen", "crawl", readonly=True))
    ///     0
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let open = &self.open;
        py.allow_threads(|| {
            let mut guard = open.lock().map_err(|_| poisoned())?;
            *guard = None;
            Ok(())
        })
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Commits when the block ended without an exception, then closes.
    #[pyo3(signature = (exc_type = None, _exc = None, _tb = None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let readonly = self.with(py, |o| Ok(o.is_read_only()))?;
        let result = if exc_type.is_none() && !readonly {
            self.commit(py).map(drop)
        } else {
            Ok(())
        };
        self.close(py)?;
        result.map(|()| false)
    }
}
