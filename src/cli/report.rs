//! Everything the commands say on stderr, and the invalid-line reports
//! `dedup` and `normalize` share.
//!
//! A closed or failing stderr must not end a run that writes its output
//! elsewhere (`urikey dedup -o out.txt big.txt 2>&1 | head -2`): every
//! message goes through [`say!`](say), which drops write errors, where
//! `eprintln!` would panic and lose the output file.

use std::fmt;
use std::io::{self, Write};

use urikey::engine::InvalidLine;

/// How many invalid lines are reported on stderr before only counting.
pub const MAX_REPORTED: u64 = 20;

/// Writes `urikey: <message>` and a newline to stderr, ignoring errors.
pub fn say_args(message: fmt::Arguments<'_>) {
    let mut err = io::stderr().lock();
    let _ = writeln!(err, "urikey: {message}");
}

/// Writes `text` to stderr as it is, ignoring errors.
pub fn say_raw(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// `say!("...", args)`: [`say_args`] with `format!` arguments.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cli::report::say_args(format_args!($($arg)*))
    };
}
pub(crate) use say;

/// Invalid-line reports: the first [`MAX_REPORTED`] on stderr (none with
/// `-q`), every one in the rejects output when there is one.
pub struct Reporter {
    quiet: bool,
    shown: u64,
    seen: u64,
    rejects: Option<Box<dyn Write>>,
    error: Option<io::Error>,
}

impl Reporter {
    /// A reporter writing rejects records to `rejects` when given.
    pub fn new(quiet: bool, rejects: Option<Box<dyn Write>>) -> Self {
        Self {
            quiet,
            shown: 0,
            seen: 0,
            rejects,
            error: None,
        }
    }

    /// Reports one invalid line.
    pub fn report(&mut self, inv: &InvalidLine<'_>) {
        self.seen += 1;
        if !self.quiet && self.shown < MAX_REPORTED {
            self.shown += 1;
            say!("{inv}");
        }
        if let (Some(w), None) = (&mut self.rejects, &self.error) {
            if let Err(e) = inv.write_record(w) {
                self.error = Some(e);
            }
        }
    }

    /// Says how many invalid lines were not shown (when some were not),
    /// then flushes the rejects output.
    ///
    /// # Errors
    /// The first error writing the rejects output.
    pub fn finish(mut self) -> io::Result<()> {
        if self.seen > self.shown && !self.quiet {
            say!(
                "{} more invalid lines not shown{}",
                self.seen - self.shown,
                if self.rejects.is_some() {
                    ""
                } else {
                    " (keep them all with --rejects FILE)"
                }
            );
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        match self.rejects.take() {
            Some(mut w) => w.flush(),
            None => Ok(()),
        }
    }
}
