//! `urikey.dedup_file`: the engine's whole-file dedup, as `urikey dedup`
//! runs it, with Ctrl-C (KeyboardInterrupt) honoured.
//!
//! The engine runs on its own thread while the calling thread, GIL
//! released, wakes every 100 ms to let Python check for signals. On an
//! interrupt the output writer starts failing, which ends the run at its
//! next write; the temporary output is removed and the exception raised.
//! (Once the engine takes an observer that can ask it to stop, the run will
//! stop between batches instead.)
//! Output and rejects go to temporary files beside their targets and are
//! renamed into place only when the run succeeds.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use urikey::engine::{self, Config, Emit, Field, Input, InvalidLine, Stats};

use crate::errors::engine_error;
use crate::options::{names, Spec};

/// How often the waiting thread checks for signals.
const POLL: Duration = Duration::from_millis(100);

/// How long an interrupted call waits for the run to stop before returning.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// A file written under a temporary name and renamed into place by
/// [`commit`](Self::commit); removed when dropped uncommitted.
struct PendingFile {
    tmp: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl PendingFile {
    fn create(target: &Path) -> io::Result<(Self, File)> {
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let stem = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for attempt in 0u32..100 {
            let tmp = dir.join(format!(
                ".{stem}.urikey-{}-{attempt}.tmp",
                std::process::id()
            ));
            match File::options().write(true).create_new(true).open(&tmp) {
                Ok(file) => {
                    let pending = Self {
                        tmp,
                        target: target.to_owned(),
                        committed: false,
                    };
                    return Ok((pending, file));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other("cannot pick a temporary file name"))
    }

    fn commit(mut self) -> io::Result<()> {
        std::fs::rename(&self.tmp, &self.target)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// The output file, failing every write once `stop` is set.
struct Stoppable {
    inner: BufWriter<File>,
    stop: Arc<AtomicBool>,
}

impl Write for Stoppable {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.stop.load(Ordering::Relaxed) {
            // Not `Interrupted`: `write_all` would retry that.
            return Err(io::Error::other("interrupted"));
        }
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Invalid lines into the rejects file, in the CLI's format
/// (`source:line:byte:reason<TAB>line`).
struct Rejects {
    out: Option<BufWriter<File>>,
    error: Option<io::Error>,
}

impl Rejects {
    fn report(&mut self, inv: &InvalidLine<'_>) {
        let (Some(w), None) = (&mut self.out, &self.error) else {
            return;
        };
        let r = write!(
            w,
            "{}:{}:{}:{}\t",
            inv.source,
            inv.line,
            inv.byte,
            inv.problem.name()
        )
        .and_then(|()| w.write_all(inv.text))
        .and_then(|()| w.write_all(b"\n"));
        if let Err(e) = r {
            self.error = Some(e);
        }
    }
}

fn paths(inputs: &Bound<'_, PyAny>) -> PyResult<Vec<Input>> {
    let list: Vec<PathBuf> = match inputs.extract::<PathBuf>() {
        Ok(p) => vec![p],
        Err(_) => inputs.extract()?,
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
    Ok(d)
}

fn io_err(what: &Path, e: io::Error) -> PyErr {
    pyo3::exceptions::PyOSError::new_err(format!("cannot write {}: {e}", what.display()))
}

/// `urikey.dedup_file(...)`.
#[pyfunction]
#[pyo3(signature = (inputs, output, *, profile = "rfc", enable = None, disable = None,
    lenient = false, key = "uri", emit = "canonical", field = None, delimiter = "\t",
    threads = 0, rejects = None))]
#[allow(clippy::too_many_arguments)]
pub fn dedup_file<'py>(
    py: Python<'py>,
    inputs: &Bound<'py, PyAny>,
    output: PathBuf,
    profile: &str,
    enable: Option<&Bound<'py, PyAny>>,
    disable: Option<&Bound<'py, PyAny>>,
    lenient: bool,
    key: &str,
    emit: &str,
    field: Option<u64>,
    delimiter: &str,
    threads: usize,
    rejects: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let keying = Spec {
        profile: profile.to_owned(),
        enable: names(enable)?,
        disable: names(disable)?,
        lenient,
        key: key.to_owned(),
    }
    .build()?;
    let mut config = Config::new(keying.canon.clone());
    config.emit = match emit {
        "canonical" => Emit::Canonical(keying.format),
        "original" => Emit::Original,
        other => {
            return Err(PyValueError::new_err(format!(
                "emit must be 'canonical' or 'original', not {other:?}"
            )))
        }
    };
    let delimiter = match delimiter.as_bytes() {
        [b] => *b,
        _ => {
            return Err(PyValueError::new_err(format!(
                "the delimiter must be one byte, not {delimiter:?}"
            )))
        }
    };
    config.field = match field {
        Some(0) => return Err(PyValueError::new_err("field numbers start at 1")),
        Some(n) => Some(Field {
            index: usize::try_from(n - 1).unwrap_or(usize::MAX),
            delimiter,
        }),
        None => None,
    };
    config.threads = threads;
    let inputs = paths(inputs)?;

    let (pending_out, out_file) = PendingFile::create(&output).map_err(|e| io_err(&output, e))?;
    let mut pending_rejects = None;
    let mut report = Rejects {
        out: None,
        error: None,
    };
    if let Some(path) = &rejects {
        let (p, f) = PendingFile::create(path).map_err(|e| io_err(path, e))?;
        pending_rejects = Some(p);
        report.out = Some(BufWriter::with_capacity(1 << 16, f));
    }

    let stop = Arc::new(AtomicBool::new(false));
    let mut out = Stoppable {
        inner: BufWriter::with_capacity(1 << 20, out_file),
        stop: Arc::clone(&stop),
    };
    // The run owns everything it touches, so that an interrupted call can
    // return while a run stuck on its input (a pipe that stays open) winds
    // down on its own; its files are removed by this thread all the same.
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("urikey-dedup".to_owned())
        .spawn(move || {
            let r = engine::run(&config, inputs, &mut out, &mut |inv| report.report(inv))
                .and_then(|stats| out.flush().map(|()| stats).map_err(engine::Error::Write));
            let _ = done_tx.send((r, report));
        })
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("cannot start the run: {e}")))?;
    // A receiver is not `Sync`; the GIL-free waits borrow it through this.
    let done_rx = Mutex::new(done_rx);
    let wait = |timeout: Duration| match done_rx.lock() {
        Ok(rx) => rx.recv_timeout(timeout),
        Err(_) => Err(mpsc::RecvTimeoutError::Disconnected),
    };
    let (result, mut report) = loop {
        match py.allow_threads(|| wait(POLL)) {
            Ok(done) => break done,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(interrupt) = py.check_signals() {
                    stop.store(true, Ordering::Relaxed);
                    // Give the run a moment to stop at its next write.
                    let _ = py.allow_threads(|| wait(STOP_GRACE));
                    return Err(interrupt);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "the dedup run failed unexpectedly",
                ))
            }
        }
    };
    let stats = result.map_err(|e| engine_error(&e))?;
    if let Some(e) = report.error.take() {
        let path = rejects.as_deref().unwrap_or(Path::new("rejects"));
        return Err(io_err(path, e));
    }
    if let (Some(w), Some(p)) = (report.out.take(), pending_rejects) {
        let path = p.target.clone();
        w.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_data())
            .and_then(|()| p.commit())
            .map_err(|e| io_err(&path, e))?;
    }
    pending_out.commit().map_err(|e| io_err(&output, e))?;
    stats_dict(py, &stats)
}
