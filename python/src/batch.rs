//! A batch call's input (a list of `str`/`None`, or an Arrow object of
//! strings or bytes) as lines of bytes, and its results as the same kind of
//! object.

use arrow_array::ArrayRef;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBool, PyBytes, PyList, PyString, PyTuple};

use crate::arrow;
use crate::held_lines::{HeldLines, HeldLinesBuilder};
use crate::keys::{KeyRef, Keys, Line};
use crate::text;

/// How many items ahead of the one read a list's item is asked for.
const READ_AHEAD: usize = 8;

/// Cache lines of a str asked for: its header, and the text that follows
/// it (a compact str's), up to about 150 bytes.
const STR_LINES: usize = 3;

/// Asks the CPU to load the str at `p` and the text after its header: the
/// strs of a large list lie all over the heap, and reading them one after
/// another (here, then while keying on the worker threads) waits for
/// memory at each otherwise (about 250 ns an item for 100,000 strs of a
/// dump).
#[inline]
fn prefetch_object(p: *mut pyo3::ffi::PyObject) {
    #[cfg(target_arch = "x86_64")]
    for line in 0..STR_LINES {
        // SAFETY: a prefetch is only a hint: it never faults, reads nothing
        // the program can observe and writes nothing, whatever the address.
        unsafe {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>().wrapping_add(64 * line));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// What holds the bytes the lines point into.
enum Holder<'py> {
    /// A tuple of the caller's items: it keeps every `str` alive (their
    /// UTF-8 form lives as long as they do) and cannot change under us
    /// while the GIL is released.
    List(Bound<'py, PyTuple>),
    /// The caller's Arrow object and its imported chunks.
    Arrow {
        source: Bound<'py, PyAny>,
        chunks: Vec<ArrayRef>,
    },
}

/// The lines of one batch call.
pub struct Batch<'py> {
    holder: Holder<'py>,
    /// Borrowed from `holder` (or their own arena).
    lines: HeldLines,
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "?".to_owned(), |n| n.to_string())
}

impl<'py> Batch<'py> {
    /// Reads `urls`: an Arrow array or stream, or any iterable of `str` and
    /// `None` (a list, a tuple, a pandas Series of objects...).
    pub fn read(urls: &Bound<'py, PyAny>) -> PyResult<Self> {
        if arrow::is_arrow(urls) {
            return Self::read_arrow(urls);
        }
        if urls.is_instance_of::<PyString>() || urls.is_instance_of::<PyBytes>() {
            return Err(PyTypeError::new_err(format!(
                "urls must be a list of str (or an Arrow array), not one {}",
                type_name(urls)
            )));
        }
        let items = if urls.is_exact_instance_of::<PyTuple>() {
            urls.downcast::<PyTuple>()?.clone()
        } else if let Ok(list) = urls.downcast::<PyList>() {
            list.to_tuple()
        } else {
            let iter = urls.try_iter().map_err(|_| {
                PyTypeError::new_err(format!(
                    "urls must be a list of str (or an Arrow array), not {}",
                    type_name(urls)
                ))
            })?;
            let collected: Vec<Bound<'py, PyAny>> = iter.collect::<PyResult<_>>()?;
            PyTuple::new(urls.py(), collected)?
        };
        // Each item's UTF-8 bytes are borrowed from the str, or copied
        // (the UTF-8 form of a str with lone surrogates).
        let mut lines = HeldLinesBuilder::with_capacity(items.len());
        // Borrowed items: the tuple holds them, and a reference count
        // changed twice per item is two calls into Python under abi3.
        let len = items.len();
        for (i, item) in items.iter_borrowed().enumerate() {
            if i + READ_AHEAD < len {
                if let Ok(ahead) = items.get_borrowed_item(i + READ_AHEAD) {
                    prefetch_object(ahead.as_ptr());
                }
            }
            if item.is_none() {
                lines.push_missing();
                continue;
            }
            let Ok(s) = item.downcast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "urls[{i}] must be str or None, not {}",
                    type_name(&item)
                )));
            };
            match text::utf8(s)? {
                // SAFETY: the UTF-8 form of a str lives as long as the str,
                // which the tuple held beside the lines holds.
                std::borrow::Cow::Borrowed(b) => unsafe { lines.push_borrowed(b) },
                std::borrow::Cow::Owned(v) => lines.push_owned(&v),
            }
        }
        Ok(Self {
            holder: Holder::List(items),
            lines: lines.finish(),
        })
    }

    fn read_arrow(source: &Bound<'py, PyAny>) -> PyResult<Self> {
        let chunks = arrow::import(source)?;
        let mut lines = Vec::with_capacity(chunks.iter().map(|c| c.len()).sum());
        for chunk in &chunks {
            arrow::lines(chunk, &mut lines)?;
        }
        // SAFETY: the values live in the chunks' buffers, which the batch
        // holds beside the lines (reference-counted, never moved or changed).
        let lines = unsafe { HeldLines::borrowing(lines) };
        Ok(Self {
            holder: Holder::Arrow {
                source: source.clone(),
                chunks,
            },
            lines,
        })
    }

    /// The lines, in order.
    pub fn lines(&self) -> &[Line<'_>] {
        self.lines.lines()
    }

    /// The position of each Arrow chunk's first line, and its length.
    fn chunk_ranges(chunks: &[ArrayRef]) -> Vec<(usize, usize)> {
        let mut start = 0;
        chunks
            .iter()
            .map(|c| {
                let r = (start, c.len());
                start += c.len();
                r
            })
            .collect()
    }

    /// Hands Arrow results (one array per input chunk) to `urikey._arrow`,
    /// which returns the caller's kind of object.
    fn arrow_result(
        &self,
        py: Python<'py>,
        kind: &str,
        make: impl Fn(usize, usize) -> PyResult<ArrayRef>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let Holder::Arrow { source, chunks } = &self.holder else {
            return Err(PyTypeError::new_err("not an Arrow batch"));
        };
        let mut pairs = Vec::with_capacity(chunks.len());
        for (start, len) in Self::chunk_ranges(chunks) {
            let array = make(start, len)?;
            pairs.push(arrow::export(py, array.as_ref())?);
        }
        static FROM_CHUNKS: GILOnceCell<Py<PyAny>> = GILOnceCell::new();
        let from_chunks = FROM_CHUNKS.import(py, "urikey._arrow", "from_chunks")?;
        from_chunks.call1((source, PyList::new(py, pairs)?, kind))
    }

    /// Is this a batch of Python objects (not Arrow)?
    pub fn is_list(&self) -> bool {
        matches!(self.holder, Holder::List(_))
    }

    /// Appends the Python values of `keys`, the keys of the lines from
    /// `start` on, to `out` (a list batch only: an Arrow batch appends
    /// nothing).
    pub fn push_strings<'k>(
        &self,
        py: Python<'py>,
        start: usize,
        keys: impl Iterator<Item = KeyRef<'k>>,
        out: &mut Vec<Bound<'py, PyAny>>,
    ) -> PyResult<()> {
        let Holder::List(items) = &self.holder else {
            return Ok(());
        };
        for (i, k) in keys.enumerate() {
            out.push(match k {
                // The unchanged input: the caller's own object.
                KeyRef::Same => items.get_item(start + i)?,
                KeyRef::Key(key) => text::key_str(py, key).into_any(),
                KeyRef::Null | KeyRef::Invalid(_) => py.None().into_bound(py),
            });
        }
        Ok(())
    }

    /// Keys as a list of `str`/`None`, or a string array.
    pub fn strings(&self, py: Python<'py>, keys: &Keys) -> PyResult<Bound<'py, PyAny>> {
        match &self.holder {
            Holder::List(_) => {
                let mut out = Vec::with_capacity(self.lines().len());
                self.push_strings(py, 0, keys.iter(), &mut out)?;
                Ok(PyList::new(py, out)?.into_any())
            }
            Holder::Arrow { .. } => {
                let lines = self.lines();
                let values = py.allow_threads(|| arrow::key_values(keys, lines));
                self.arrow_result(py, "string", |start, len| {
                    Ok(arrow::key_array(
                        values.get(start..start + len).unwrap_or_default(),
                    ))
                })
            }
        }
    }

    /// Short texts (ASCII) as a list of `str`/`None`, or a string array.
    pub fn texts(&self, py: Python<'py>, values: &[Option<&str>]) -> PyResult<Bound<'py, PyAny>> {
        match &self.holder {
            Holder::List(_) => {
                let items = values.iter().map(|v| match v {
                    Some(t) => PyString::new(py, t).into_any(),
                    None => py.None().into_bound(py),
                });
                Ok(PyList::new(py, items)?.into_any())
            }
            Holder::Arrow { .. } => {
                let lines: Vec<Line<'_>> = values.iter().map(|v| v.map(str::as_bytes)).collect();
                self.arrow_result(py, "string", |start, len| {
                    Ok(arrow::key_array(
                        lines.get(start..start + len).unwrap_or_default(),
                    ))
                })
            }
        }
    }

    /// A mask as a list of `bool`, or a boolean array.
    pub fn bools(&self, py: Python<'py>, mask: &[bool]) -> PyResult<Bound<'py, PyAny>> {
        match &self.holder {
            Holder::List(_) => {
                let items = mask.iter().map(|&b| PyBool::new(py, b).to_owned());
                Ok(PyList::new(py, items)?.into_any())
            }
            Holder::Arrow { .. } => self.arrow_result(py, "bool", |start, len| {
                Ok(arrow::bool_array(
                    mask.get(start..start + len).unwrap_or_default(),
                ))
            }),
        }
    }

    /// Fingerprints as a list of 16-byte `bytes`/`None`, or a
    /// fixed-size-binary(16) array.
    pub fn fingerprints(
        &self,
        py: Python<'py>,
        fps: &[Option<u128>],
    ) -> PyResult<Bound<'py, PyAny>> {
        match &self.holder {
            Holder::List(_) => {
                let items = fps.iter().map(|fp| match fp {
                    Some(fp) => PyBytes::new(py, &fp.to_be_bytes()).into_any(),
                    None => py.None().into_bound(py),
                });
                Ok(PyList::new(py, items)?.into_any())
            }
            Holder::Arrow { .. } => self.arrow_result(py, "fingerprint", |start, len| {
                arrow::fingerprint_array(fps.get(start..start + len).unwrap_or_default())
            }),
        }
    }
}
