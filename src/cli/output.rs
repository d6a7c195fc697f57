//! Where the commands write: stdout (none or `-`), or a file that appears
//! whole or not at all ([`OutputFile`]); and what happens on Ctrl-C.
//!
//! Ctrl-C (or SIGTERM, SIGHUP) sets a flag the running command checks
//! between batches (`dedup`, through the engine's observer) or lines
//! (`normalize`): it then clears its progress line, says the run was
//! interrupted, removes its temporary files and exits with 130. A command
//! blocked on input that never comes cannot check the flag, so the handler
//! does the same itself when the command has not ended [`GRACE`] later (or
//! at a second Ctrl-C). Once a seen-store commit has begun
//! ([`begin_commit`]), a signal no longer ends the process: the commit and
//! the run finish, and exit 0 says the keys were committed.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use urikey::engine::OutputFile;

use super::report::say;

/// How long the Ctrl-C handler waits for the command to stop by itself.
const GRACE: Duration = Duration::from_millis(1500);

/// Where the run is, for the signal handler: [`RUNNING`], [`INTERRUPTED`]
/// (a signal came: no commit starts), or [`COMMITTING`] (a seen-store
/// commit began: the handler leaves the end to the run).
static PHASE: AtomicU8 = AtomicU8::new(RUNNING);
const RUNNING: u8 = 0;
const INTERRUPTED: u8 = 1;
const COMMITTING: u8 = 2;

/// True once the user pressed Ctrl-C (or the process got SIGTERM/SIGHUP)
/// before any commit began.
pub fn interrupted() -> bool {
    PHASE.load(Ordering::SeqCst) == INTERRUPTED
}

/// Called just before a seen-store commit: false when a signal came first
/// (the run must not commit, and exits 130). Once it returns true, signals
/// no longer end the process: the commit runs to its end and the run exits
/// as it went, so exit 0 and a made commit go together.
pub fn begin_commit() -> bool {
    PHASE
        .compare_exchange(RUNNING, COMMITTING, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

/// `Some(path)` for a file, `None` for stdout (`-`).
pub fn file_or_stdout(path: Option<&Path>) -> Option<&Path> {
    path.filter(|p| p.as_os_str() != "-")
}

/// Fails unless at most one of the named outputs is stdout: two streams
/// written at once would interleave.
///
/// # Errors
/// A usage message naming the options.
pub fn one_stdout(outputs: &[(&str, bool)]) -> anyhow::Result<()> {
    let on_stdout: Vec<&str> = outputs
        .iter()
        .filter(|(_, stdout)| *stdout)
        .map(|(name, _)| *name)
        .collect();
    if on_stdout.len() > 1 {
        bail!(
            "{} cannot share stdout: give all but one of them a FILE",
            on_stdout.join(" and ")
        );
    }
    Ok(())
}

/// Temporary files to delete when the run is interrupted.
#[derive(Clone, Default)]
pub struct Cleanup(Arc<Mutex<Vec<PathBuf>>>);

impl Cleanup {
    fn add(&self, path: &Path) {
        if let Ok(mut v) = self.0.lock() {
            v.push(path.to_owned());
        }
    }

    fn forget(&self, path: &Path) {
        if let Ok(mut v) = self.0.lock() {
            v.retain(|p| p != path);
        }
    }

    /// A private directory in `parent` (or the system's temporary
    /// directory) for the engine's spill files, removed when dropped and on
    /// Ctrl-C. `None` when it cannot be created: the engine then reports
    /// the failure itself, only if it needs the directory.
    pub fn temp_dir(&self, parent: Option<&Path>) -> Option<tempfile::TempDir> {
        let parent = parent.map_or_else(std::env::temp_dir, Path::to_owned);
        let dir = tempfile::Builder::new()
            .prefix("urikey-")
            .tempdir_in(parent)
            .ok()?;
        self.add(dir.path());
        Some(dir)
    }

    /// Stops tracking a spill directory (its `TempDir` removes it).
    pub fn forget_dir(&self, dir: &Path) {
        self.forget(dir);
    }

    fn remove_all(&self) {
        if let Ok(v) = self.0.lock() {
            for p in v.iter() {
                if p.is_dir() {
                    let _ = std::fs::remove_dir_all(p);
                } else {
                    let _ = std::fs::remove_file(p);
                }
            }
        }
    }

    /// Installs the Ctrl-C (and SIGTERM/SIGHUP) handler described in the
    /// [module docs](self).
    pub fn install(&self) {
        let files = self.clone();
        // Failing to install (a handler already exists) only loses cleanup.
        let _ = ctrlc::set_handler(move || {
            match PHASE.compare_exchange(RUNNING, INTERRUPTED, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => {
                    let deadline = Instant::now() + GRACE;
                    // The process ends when the command has stopped.
                    while Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                // A commit is under way: it ends, and the run with it.
                Err(COMMITTING) => {
                    static TOLD: AtomicBool = AtomicBool::new(false);
                    if !TOLD.swap(true, Ordering::SeqCst) {
                        say!("a signal came during the seen-store commit: finishing it first");
                    }
                    return;
                }
                // A second signal: at once.
                Err(_) => {}
            }
            clear_line();
            say!("interrupted");
            files.remove_all();
            std::process::exit(super::Exit::Interrupted as i32);
        });
    }
}

/// Syncs stdout when it is a regular file (a shell's `> FILE`), and the
/// directory that holds it, so that what was written to it is durable; a
/// pipe or a terminal has nothing to sync (what its reader does with the
/// lines is its own).
///
/// # Errors
/// `cannot write stdout` with the reason.
pub fn sync_stdout_file() -> anyhow::Result<()> {
    use std::os::fd::AsFd;
    let file = std::fs::File::from(
        io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .context("cannot write stdout")?,
    );
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Ok(());
    }
    file.sync_all()
        .context("cannot write stdout: it could not be synced")?;
    // Its name, made by the shell: synced where /proc names it.
    if let Ok(path) = std::fs::read_link("/proc/self/fd/1") {
        if let Some(dir) = path.parent().filter(|_| path.is_file()) {
            std::fs::File::open(dir)
                .and_then(|d| d.sync_all())
                .with_context(|| {
                    format!(
                        "cannot write stdout: the directory of {} could not be synced",
                        path.display()
                    )
                })?;
        }
    }
    Ok(())
}

/// Erases the current line of a terminal stderr (a progress bar).
pub fn clear_line() {
    let mut err = io::stderr();
    if err.is_terminal() {
        let _ = err.write_all(b"\r\x1b[2K");
    }
}

/// An output: stdout, or a file committed by [`Sink::commit`].
pub enum Sink {
    /// Standard output.
    Stdout(io::Stdout),
    /// A file, written under a temporary name until committed.
    File {
        /// The file.
        out: OutputFile,
        /// The path the user gave, for messages.
        path: PathBuf,
        /// Removes the temporary file on Ctrl-C.
        cleanup: Cleanup,
    },
}

impl Sink {
    /// Opens `path` (stdout for `None` or `-`).
    ///
    /// # Errors
    /// `cannot write <path>` with the reason.
    pub fn open(path: Option<&Path>, cleanup: &Cleanup) -> anyhow::Result<Self> {
        let Some(path) = file_or_stdout(path) else {
            return Ok(Sink::Stdout(io::stdout()));
        };
        let out =
            OutputFile::create(path).with_context(|| format!("cannot write {}", path.display()))?;
        if let Some(temp) = out.temp_path() {
            cleanup.add(temp);
        }
        Ok(Sink::File {
            out,
            path: path.to_owned(),
            cleanup: cleanup.clone(),
        })
    }

    /// The name for messages: the user's path, or `stdout`.
    pub fn name(&self) -> String {
        match self {
            Sink::Stdout(_) => "stdout".to_owned(),
            Sink::File { path, .. } => path.display().to_string(),
        }
    }

    /// The writer.
    pub fn writer(&mut self) -> &mut (dyn Write + Send) {
        match self {
            Sink::Stdout(s) => s,
            Sink::File { out, .. } => out,
        }
    }

    /// A second, independent writer on the same output (buffer it).
    ///
    /// # Errors
    /// The operating system's.
    pub fn try_clone(&self) -> io::Result<Box<dyn Write>> {
        Ok(match self {
            Sink::Stdout(_) => Box::new(io::stdout()),
            Sink::File { out, .. } => Box::new(out.try_clone()?),
        })
    }

    /// Flushes stdout, or renames the finished file into place.
    ///
    /// # Errors
    /// `cannot write <path>` with the reason (a closed stdout is a broken
    /// pipe, which the caller treats as success).
    pub fn commit(self) -> anyhow::Result<()> {
        match self {
            Sink::Stdout(mut s) => s.flush().context("cannot write stdout"),
            Sink::File { out, path, cleanup } => {
                if let Some(temp) = out.temp_path() {
                    cleanup.forget(temp);
                }
                out.commit()
                    .with_context(|| format!("cannot write {}", path.display()))
            }
        }
    }
}

/// Writes `bytes` to `path` whole (stdout for `-`).
///
/// # Errors
/// `cannot write <path>` with the reason.
pub fn write_whole(path: &Path, bytes: &[u8], cleanup: &Cleanup) -> anyhow::Result<()> {
    let mut sink = Sink::open(Some(path), cleanup)?;
    let name = sink.name();
    sink.writer()
        .write_all(bytes)
        .with_context(|| format!("cannot write {name}"))?;
    sink.commit()
}
