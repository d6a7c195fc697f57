//! Exit codes and the final error message.

use std::io;
use std::process::ExitCode;

/// Named exit codes (see the README's exit-code table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// Everything went fine (a closed output pipe counts as fine).
    Ok = 0,
    /// The run finished, but some lines were invalid and the user asked
    /// for that to be an error (`--on-invalid fail`, `--fail-on-invalid`).
    InvalidLines = 1,
    /// A usage or I/O error: the output is not complete.
    Error = 2,
    /// Ctrl-C, SIGTERM or SIGHUP: the run stopped, no output file was
    /// written (128 + SIGINT, as shells report it).
    Interrupted = 130,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e as u8)
    }
}

/// True when `err` (or its cause chain) is a broken pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// `err` and its causes joined by `: `, each cause once: a cause whose
/// words the message before it already holds (an OS error that a store's
/// message quotes) is not repeated.
pub fn message(err: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// Maps a command's result to the process exit code, printing errors as
/// `urikey: <message>: <cause>`.
pub fn finish(result: anyhow::Result<Exit>) -> Exit {
    match result {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => Exit::Ok,
        Err(err) => {
            super::report::say!("{}", message(&err));
            Exit::Error
        }
    }
}
