//! The `urikey._urikey` extension module: Python bindings of the urikey
//! library and engine. The Python package (`urikey/`) re-exports it.
//!
//! * `options`: profile, flags, lenient and key format into a canonicalizer
//! * `text`: Python `str` to UTF-8 bytes
//! * `keys`: keys and fingerprints of many lines on all cores
//! * `batch`: a batch call's input (list or Arrow) and results
//! * `fingerprints`: a batch of 16-byte fingerprints from Python
//! * `held_lines`: its lines, borrowed from the caller's objects (checked
//!   under Miri)
//! * `arrow`: the Arrow C data interface
//! * `seen`: the fingerprint set behind `unique_mask` and `Deduplicator`
//! * `canonicalizer`, `deduplicator`, `seen_store`, `redis_set`, `uri`, `dedup_file`:
//!   the Python-facing calls
//! * `cli`: the `urikey` command (`python -m urikey`)
//! * `errors`: Python exceptions

mod arrow;
mod batch;
mod canonicalizer;
mod cli;
mod dedup_file;
mod deduplicator;
mod errors;
mod fingerprints;
mod held_lines;
mod keys;
mod options;
mod redis_set;
mod seen;
mod seen_store;
mod text;
mod uri;

use pyo3::prelude::*;

#[pymodule]
fn _urikey(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<canonicalizer::PyCanonicalizer>()?;
    m.add_class::<deduplicator::PyDeduplicator>()?;
    m.add_class::<seen_store::PySeenStore>()?;
    m.add_class::<redis_set::PyRedisSeenSet>()?;
    m.add_class::<uri::PyUri>()?;
    m.add_function(wrap_pyfunction!(canonicalizer::canonicalize, m)?)?;
    m.add_function(wrap_pyfunction!(canonicalizer::fingerprint, m)?)?;
    m.add_function(wrap_pyfunction!(uri::parse, m)?)?;
    m.add_function(wrap_pyfunction!(uri::resolve, m)?)?;
    m.add_function(wrap_pyfunction!(dedup_file::dedup_file, m)?)?;
    m.add_function(wrap_pyfunction!(cli::_cli_main, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
