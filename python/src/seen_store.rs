//! `urikey.SeenStore`: the seen-store of `urikey dedup --state` (a
//! directory of every key's fingerprint, larger than memory, made durable by
//! commits), fed batch after batch.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyMemoryError, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use urikey::engine::store::{Access, Additions, SeenStore, StoreError};
use urikey::engine::{memory, SeenSet};
use urikey::uri::key::Relative;

use crate::batch::Batch;
use crate::fingerprints::read_fingerprints;
use crate::keys::{self, Line};
use crate::options::{self, Keying};

/// The 16-byte fingerprints of `fingerprints`, each with its index (the
/// form the batch calls take valid keys in: here every item is one).
fn indexed_fingerprints(fingerprints: &Bound<'_, PyAny>) -> PyResult<Vec<(usize, u128)>> {
    Ok(read_fingerprints(fingerprints)?
        .into_iter()
        .enumerate()
        .collect())
}

/// An open store and what was added since its last commit.
#[derive(Debug)]
struct Open {
    store: SeenStore,
    /// Every key added since the last commit, to answer "seen before?"
    /// for them (the store holds only committed keys).
    pending: SeenSet,
    /// Of those, the keys the store lacks: the next commit's.
    additions: Option<Additions>,
    added: u64,
}

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
    limit: Option<u64>,
    // Locked with the GIL released: calls from several threads are taken
    // one at a time.
    open: Mutex<Option<Open>>,
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
        _ => PyOSError::new_err(message),
    }
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
        f: impl FnOnce(&mut Open) -> PyResult<T> + Send,
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

    fn new_pending(&self) -> SeenSet {
        SeenSet::new(self.keying.keyer.clone()).with_memory_limit(self.limit)
    }
}

/// The fingerprint of every valid line of a batch, with its place.
fn valid_fingerprints(keying: &Keying, lines: &[Line<'_>]) -> Vec<(usize, u128)> {
    keys::fingerprints(keying, lines)
        .into_iter()
        .enumerate()
        .filter_map(|(i, fp)| fp.map(|fp| (i, fp)))
        .collect()
}

/// Which of `fps` (with their places) the store holds (looked up on all
/// threads).
fn in_store(store: &SeenStore, fps: &[(usize, u128)]) -> PyResult<Vec<bool>> {
    let keys: Vec<u128> = fps.iter().map(|p| p.1).collect();
    store.contains_each(&keys).map_err(store_error)
}

/// Adds the fingerprints `valid` (with their places in a batch of `n`):
/// true at the place of each one neither the store nor an earlier one has.
fn add_valid(o: &mut Open, valid: &[(usize, u128)], n: usize) -> PyResult<Vec<bool>> {
    let only: Vec<u128> = valid.iter().map(|v| v.1).collect();
    let first = o
        .pending
        .add_fingerprints(&only)
        .map_err(|e| PyMemoryError::new_err(format!("{e} (commit more often)")))?;
    let firsts: Vec<(usize, u128)> = valid
        .iter()
        .zip(&first)
        .filter(|(_, f)| **f)
        .map(|(v, _)| *v)
        .collect();
    let known = in_store(&o.store, &firsts)?;
    let mut mask = vec![false; n];
    let mut new = Vec::new();
    for ((i, fp), k) in firsts.iter().zip(known) {
        if !k {
            mask[*i] = true;
            new.push(*fp);
        }
    }
    if let Some(a) = o.additions.as_mut() {
        a.push(&new).map_err(store_error)?;
    }
    o.added += new.len() as u64;
    Ok(mask)
}

/// True at the place of each of `valid` (in a batch of `n`) that the store
/// holds or that was added since the last commit.
fn contains_valid(o: &Open, valid: &[(usize, u128)], n: usize) -> PyResult<Vec<bool>> {
    let known = in_store(&o.store, valid)?;
    let mut mask = vec![false; n];
    for ((i, fp), k) in valid.iter().zip(known) {
        mask[*i] = k || o.pending.contains_fingerprint(*fp);
    }
    Ok(mask)
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
        let me = Self {
            keying,
            path,
            limit,
            open: Mutex::new(None),
        };
        let additions = (!readonly).then(|| store.additions());
        let pending = me.new_pending();
        *me.open.lock().map_err(|_| poisoned())? = Some(Open {
            store,
            pending,
            additions,
            added: 0,
        });
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
    ///     OSError: the commit could not be written (the store stays at its
    ///         last commit).
    ///
    /// Example:
    ///     >>> s = urikey.SeenStore("seen", "crawl")
    ///     >>> s.add(["http://a.com/x", "http://b.com/"])
    ///     [True, True]
    ///     >>> s.commit()
    ///     2
    fn commit(&self, py: Python<'_>) -> PyResult<u64> {
        let fresh = self.new_pending();
        self.with(py, move |o| {
            let Some(additions) = o.additions.take() else {
                return Err(PyValueError::new_err(
                    "the SeenStore was opened read-only: nothing can be committed",
                ));
            };
            let next = o.store.additions();
            let report = o.store.commit(additions);
            o.additions = Some(next);
            let report = report.map_err(store_error)?;
            o.pending = fresh;
            o.added = 0;
            Ok(report.added)
        })
    }

    /// Keys in the store, and added since the last commit.
    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        self.with(py, |o| {
            Ok(usize::try_from(o.store.len() + o.added).unwrap_or(usize::MAX))
        })
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
        let readonly = self.with(py, |o| Ok(o.additions.is_none()))?;
        let result = if exc_type.is_none() && !readonly {
            self.commit(py).map(drop)
        } else {
            Ok(())
        };
        self.close(py)?;
        result.map(|()| false)
    }
}
