//! `urikey.dedup_file`: the engine's whole-file dedup, as `urikey dedup`
//! runs it, with Ctrl-C (KeyboardInterrupt) honoured.
//!
//! The engine runs on its own thread while the calling thread, GIL
//! released, wakes every 100 ms to let Python check for signals. On an
//! interrupt the run's observer asks it to stop (the engine asks after each
//! batch) and the call returns at once with the exception: a run waiting on
//! an input that stays open (a pipe) winds down on its own later. Output and
//! rejects are the engine's `OutputFile`s, renamed into place only when the
//! run succeeds; on an interrupt this thread removes their temporary files
//! itself, since the run may outlive the call.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use urikey::engine::{
    self, Config, ConfigError, Input, InvalidLine, MmapChoice, Observer, OutputFile, Stats,
};

use crate::errors::{engine_error, os_error};
use crate::options;

/// How often the waiting thread checks for signals.
const POLL: Duration = Duration::from_millis(100);

/// How long an interrupted call waits for the run to stop before returning.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// Hears the run: invalid lines go to the rejects file (the CLI's record
/// format), and the stop flag is read after each batch.
struct PyObserver {
    rejects: Option<BufWriter<File>>,
    error: Option<io::Error>,
    stop: Arc<AtomicBool>,
}

impl Observer for PyObserver {
    fn invalid(&mut self, line: &InvalidLine<'_>) {
        if let (Some(w), None) = (&mut self.rejects, &self.error) {
            if let Err(e) = line.write_record(w) {
                self.error = Some(e);
            }
        }
    }

    fn should_stop(&mut self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// A file system path given as `str`, `bytes` or an `os.PathLike`, read
/// as `os.fsencode` reads it: a name that is not valid in the file system's
/// encoding (a lone surrogate) raises `UnicodeEncodeError`, and an error
/// of `__fspath__` reaches the caller as it is. (pyo3's own `PathBuf`
/// conversion panicked on such names.)
pub struct FsPath(PathBuf);

impl<'py> FromPyObject<'py> for FsPath {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        let os = ob.py().import("os")?;
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let encoded = os.call_method1("fsencode", (ob,))?;
            let bytes: &[u8] = encoded.extract()?;
            Ok(Self(PathBuf::from(std::ffi::OsStr::from_bytes(bytes))))
        }
        #[cfg(not(unix))]
        {
            let text: String = os.call_method1("fspath", (ob,))?.extract()?;
            Ok(Self(PathBuf::from(text)))
        }
    }
}

/// True when `ob` is one path rather than a sequence of them.
fn is_one_path(ob: &Bound<'_, PyAny>) -> PyResult<bool> {
    let os = ob.py().import("os")?;
    let kinds = (
        ob.py().get_type::<pyo3::types::PyString>(),
        ob.py().get_type::<pyo3::types::PyBytes>(),
        os.getattr("PathLike")?,
    );
    ob.is_instance(kinds.into_pyobject(ob.py())?.as_any())
}

/// `inputs`: one path, or an iterable of them; a `TypeError` naming the
/// argument (and the item) for anything else.
fn inputs_of(inputs: &Bound<'_, PyAny>) -> PyResult<Vec<Input>> {
    let not_paths = |what: &str, o: &Bound<'_, PyAny>| {
        PyTypeError::new_err(format!(
            "{what} must be a path (str, bytes or os.PathLike) or a list of paths, not {}",
            options::type_name(o)
        ))
    };
    let list: Vec<PathBuf> = if is_one_path(inputs)? {
        vec![inputs.extract::<FsPath>()?.0]
    } else {
        let mut list = Vec::new();
        let items = inputs.try_iter().map_err(|_| not_paths("inputs", inputs))?;
        for (i, item) in items.enumerate() {
            let item = item?;
            if !is_one_path(&item)? {
                return Err(not_paths(&format!("inputs[{i}]"), &item));
            }
            list.push(item.extract::<FsPath>()?.0);
        }
        list
    };
    Ok(list
        .into_iter()
        .map(|p| {
            if p.as_os_str() == "-" {
                Input::Stdin
            } else {
                Input::Path(p)
            }
        })
        .collect())
}

/// The statistics under the names of `urikey dedup --stats-json`.
fn stats_dict<'py>(py: Python<'py>, s: &Stats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("lines", s.lines)?;
    d.set_item("bytes", s.bytes)?;
    d.set_item("blank", s.blank)?;
    d.set_item("invalid", s.invalid)?;
    let reasons = PyDict::new(py);
    for (k, v) in &s.invalid_by_reason {
        reasons.set_item(*k, *v)?;
    }
    d.set_item("invalid_by_reason", reasons)?;
    d.set_item("unique", s.unique)?;
    d.set_item("duplicates", s.duplicates)?;
    d.set_item("duplicate_ratio", s.duplicate_ratio())?;
    d.set_item("wall_seconds", s.wall.as_secs_f64())?;
    d.set_item("mb_per_s", s.mb_per_s())?;
    d.set_item("urls_per_s", s.lines_per_s())?;
    d.set_item("peak_rss_bytes", engine::peak_rss_bytes())?;
    d.set_item("threads", s.threads)?;
    let phases = PyDict::new(py);
    for (name, seconds) in s.phase_seconds() {
        phases.set_item(name, seconds)?;
    }
    d.set_item("phases", phases)?;
    Ok(d)
}

fn write_error(py: Python<'_>, path: &Path, e: &io::Error) -> PyErr {
    os_error(
        py,
        e,
        path,
        &format!("cannot write {}: {e}", path.display()),
    )
}

fn create(py: Python<'_>, path: &Path) -> PyResult<OutputFile> {
    OutputFile::create(path).map_err(|e| write_error(py, path, &e))
}

/// What the run thread hands back.
struct Finished {
    result: Result<Stats, engine::Error>,
    output: OutputFile,
    rejects: Option<OutputFile>,
    observer: PyObserver,
}

/// Deduplicates whole files exactly as `urikey dedup` does.
///
/// Input files are memory-mapped, as `urikey dedup` maps them: a file that
/// another process truncates while the call reads it ends the process with
/// SIGBUS, so files still being written should be passed through a pipe.
///
/// The engine reads the inputs in order as one stream (plain, gzip, zstd,
/// xz or bzip2, recognised by content), keeps the first line of every
/// canonical key and writes them to `output` through a temporary file
/// renamed when the run succeeds. Past `memory_limit` it spills to
/// temporary files; the output is the same. Ctrl-C stops it (raising
/// KeyboardInterrupt) and leaves no output file.
///
/// A URL dump holds absolute URLs: a relative reference ("/a", "hello") is
/// an invalid line (`relative-reference`) unless `base` or `allow_relative`
/// says otherwise; blank lines are skipped.
///
/// Args:
///     inputs (path | list[path]): one path or a list of them (str, bytes
///         or os.PathLike); "-" is standard input.
///     output (path): the file to write.
///     profile, enable, disable, lenient, key, compat: the keying options
///         of `Canonicalizer`.
///     emit (str): "canonical" (the default) writes keys, "original" the
///         first-seen lines as they were.
///     field (int | None): take the URL from this column (1-based) and
///         write whole lines (--field).
///     delimiter (str): the column separator for `field`, one byte (TAB).
///     format (str | None): "lines", "cdxj", "cdx", "warc", "wat", "parquet"
///         or "arc" (--format); recognised from the content when None.
///     threads (int): worker threads; 0 (the default) uses every core.
///     rejects (path | None): write every invalid line there as
///         "path:line:byte:reason<TAB>line".
///     memory_limit (int | str | None): bytes or a size such as "4G"; by
///         default a share of the machine's memory.
///     temp_dir (path | None): where spilled runs keep their files.
///     base (str | None): resolve relative references against this
///         absolute URI (--base).
///     allow_relative (bool): key relative references as they are
///         (--allow-relative).
///
/// Returns:
///     dict: the run's statistics under the names of
///     `urikey dedup --stats-json` ("lines", "blank", "invalid",
///     "invalid_by_reason", "unique", "duplicates", "wall_seconds", ...).
///
/// Raises:
///     FileNotFoundError: an input, or the output's directory, does not
///         exist (an OSError subclass with errno, strerror and filename).
///     IsADirectoryError: an input or the output is a directory.
///     PermissionError: an input cannot be read or the output written.
///     OSError: any other failure to read or write (a corrupt gzip stream,
///         a full disk), with filename set.
///     ValueError: an unknown option value, a base that is not an
///         absolute URI, or rejects naming an input or the output.
///     TypeError: an argument of the wrong type (named in the message).
///     KeyboardInterrupt: Ctrl-C during the run.
///
/// Example:
///     >>> import os, tempfile
///     >>> d = tempfile.mkdtemp()
///     >>> src, out = os.path.join(d, "urls.txt"), os.path.join(d, "unique.txt")
///     >>> _ = open(src, "w").write("http://a.com/\nHTTP://A.com:80/\n/rel\nhttp://b.com/\n")
///     >>> stats = urikey.dedup_file(src, out)
///     >>> stats["unique"], stats["duplicates"], stats["invalid_by_reason"]
///     (2, 1, {'relative-reference': 1})
///     >>> open(out).read()
///     'http://a.com/\nhttp://b.com/\n'
#[pyfunction]
#[pyo3(signature = (inputs, output, *, profile = "rfc", enable = None, disable = None,
    lenient = false, key = "uri", emit = "canonical", field = None, delimiter = "\t",
    format = None, threads = 0, rejects = None, compat = None, memory_limit = None,
    temp_dir = None, base = None, allow_relative = false))]
#[allow(clippy::too_many_arguments)]
pub fn dedup_file<'py>(
    py: Python<'py>,
    inputs: &Bound<'py, PyAny>,
    output: FsPath,
    profile: &str,
    enable: Option<&Bound<'py, PyAny>>,
    disable: Option<&Bound<'py, PyAny>>,
    lenient: bool,
    key: &str,
    emit: &str,
    field: Option<u64>,
    delimiter: &str,
    format: Option<&str>,
    threads: usize,
    rejects: Option<FsPath>,
    compat: Option<&str>,
    memory_limit: Option<&Bound<'py, PyAny>>,
    temp_dir: Option<FsPath>,
    base: Option<&str>,
    allow_relative: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let output = output.0;
    let rejects = rejects.map(|p| p.0);
    let temp_dir = temp_dir.map(|p| p.0);
    let key_config = options::config(profile, enable, disable, lenient, key, compat)?;
    // As `urikey dedup`: a URL dump holds absolute URLs, so a relative
    // reference (`hello`) is an invalid line, unless `base` or
    // `allow_relative` says otherwise.
    let relative = options::relative(base, allow_relative)?;
    // SAFETY: `dedup_file` maps its input files, as the `urikey` command
    // does; its docstring states the contract (inputs do not change while
    // it reads them).
    let mmap = unsafe { MmapChoice::auto() };
    // The rules and messages of `urikey dedup`'s options (engine's
    // `ConfigBuilder`): `format` None is recognised per input.
    let mut builder = Config::builder(key_config.keyer().with_relative(relative))
        .mmap(mmap)
        .emit_named(emit)
        .and_then(|b| b.format_named(format))
        .map_err(config_error)?;
    if let Some(n) = field {
        builder = builder
            .field_delimited_by(n, delimiter, false)
            .map_err(config_error)?;
    }
    let mut config = builder.build().map_err(config_error)?;
    config.threads = threads;
    config.memory_limit = options::memory_limit(memory_limit)?;
    config.temp_dir = temp_dir;
    let inputs = inputs_of(inputs)?;
    if let Some(rejects) = &rejects {
        if engine::rejects_would_replace(rejects, &inputs, Some(&output)) {
            return Err(PyValueError::new_err(format!(
                "rejects {} names an input or the output, which the invalid lines would replace",
                rejects.display()
            )));
        }
    }

    let mut out_file = create(py, &output)?;
    let mut rejects_file = rejects.as_deref().map(|p| create(py, p)).transpose()?;
    let temps: Vec<PathBuf> = [Some(&out_file), rejects_file.as_ref()]
        .into_iter()
        .flatten()
        .filter_map(|f| f.temp_path().map(Path::to_owned))
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let observer = PyObserver {
        rejects: match &rejects_file {
            Some(f) => Some(BufWriter::with_capacity(
                1 << 16,
                f.try_clone().map_err(|e| write_error(py, &output, &e))?,
            )),
            None => None,
        },
        error: None,
        stop: Arc::clone(&stop),
    };

    let (done_tx, done_rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("urikey-dedup".to_owned())
        .spawn(move || {
            let mut observer = observer;
            let result = engine::run(&config, inputs, &mut out_file, &mut observer);
            let _ = done_tx.send(Finished {
                result,
                output: out_file,
                rejects: rejects_file.take(),
                observer,
            });
        })
        .map_err(|e| PyOSError::new_err(format!("cannot start the run: {e}")))?;

    // A receiver is not `Sync`; the GIL-free waits borrow it through this.
    let done_rx = Mutex::new(done_rx);
    let wait = |timeout: Duration| match done_rx.lock() {
        Ok(rx) => rx.recv_timeout(timeout),
        Err(_) => Err(mpsc::RecvTimeoutError::Disconnected),
    };
    let finished = loop {
        match py.allow_threads(|| wait(POLL)) {
            Ok(finished) => break finished,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(interrupt) = py.check_signals() {
                    stop.store(true, Ordering::Relaxed);
                    // A run that stops in time removes its files as it
                    // drops them; otherwise they go now.
                    if py.allow_threads(|| wait(STOP_GRACE)).is_err() {
                        for temp in &temps {
                            let _ = std::fs::remove_file(temp);
                        }
                    }
                    return Err(interrupt);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err("the dedup run failed unexpectedly"))
            }
        }
    };
    let Finished {
        result,
        output: out_file,
        rejects: rejects_file,
        mut observer,
    } = finished;
    let stats = result.map_err(|e| engine_error(py, &e, &output))?;
    if let (Some(w), Some(f), Some(path)) = (observer.rejects.take(), rejects_file, &rejects) {
        if let Some(e) = observer.error.take() {
            return Err(write_error(py, path, &e));
        }
        w.into_inner()
            .map_err(io::IntoInnerError::into_error)
            .and_then(|_| f.commit())
            .map_err(|e| write_error(py, path, &e))?;
    }
    out_file
        .commit()
        .map_err(|e| write_error(py, &output, &e))?;
    stats_dict(py, &stats)
}

/// A setting the caller named that cannot be used, as a `ValueError`.
fn config_error(e: ConfigError) -> PyErr {
    PyValueError::new_err(e.to_string())
}
