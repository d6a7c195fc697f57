//! `urikey normalize`: one canonical key per input line, in order.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use urikey::uri::key::{KeyErrorKind, KeyScratch};

use super::lines::{for_each_line, report_invalid, too_long};
use super::normalize_opts::NormalizeOpts;
use super::Exit;
use urikey::engine::Problem;

/// What to write for a line that is not a valid URI-reference.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OnInvalid {
    /// An empty output line, so output lines match input lines.
    #[default]
    Empty,
    /// No output line.
    Skip,
    /// The input line unchanged (a line over 1 MiB, which is not kept in
    /// memory whole, prints as an empty line).
    Keep,
    /// Stop at the first invalid line, exit status 1.
    Fail,
}

/// Arguments of `urikey normalize`.
#[derive(clap::Args, Debug)]
pub struct NormalizeArgs {
    #[command(flatten)]
    opts: NormalizeOpts,

    /// What to print for an invalid line (always reported on stderr).
    #[arg(long, value_enum, default_value_t = OnInvalid::Empty)]
    on_invalid: OnInvalid,

    /// Input files (stdin when none or `-`).
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// Runs `urikey normalize`.
pub fn run(args: NormalizeArgs) -> anyhow::Result<Exit> {
    let keyer = args.opts.keyer()?;
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut scratch = KeyScratch::default();
    let mut line_out = Vec::with_capacity(256);
    let result = for_each_line(&args.files, |line| {
        line_out.clear();
        let key = match too_long(line) {
            Some(problem) => Err(problem),
            None => keyer
                .key(line.bytes, &mut scratch)
                .map_err(|e| (e.index(), Problem::Key(e.kind()))),
        };
        match key {
            Ok(key) => {
                line_out.extend_from_slice(&key);
                line_out.push(b'\n');
            }
            // Whitespace only under --lenient: a blank line in, one out.
            Err((_, Problem::Key(KeyErrorKind::Blank))) => line_out.push(b'\n'),
            Err((index, problem)) => {
                report_invalid(line, index, problem);
                match args.on_invalid {
                    OnInvalid::Empty => line_out.push(b'\n'),
                    OnInvalid::Skip => {}
                    OnInvalid::Keep => {
                        if !line.too_long {
                            line_out.extend_from_slice(line.bytes);
                        }
                        line_out.push(b'\n');
                    }
                    OnInvalid::Fail => return Err(StopOnInvalid.into()),
                }
            }
        }
        out.write_all(&line_out)?;
        Ok(())
    });
    let stopped = match result {
        Ok(()) => false,
        Err(e) if e.is::<StopOnInvalid>() => true,
        Err(e) => return Err(e),
    };
    out.flush()?;
    Ok(if stopped {
        Exit::InvalidLines
    } else {
        Exit::Ok
    })
}

/// Ends the line loop at the first invalid line under `--on-invalid fail`.
#[derive(Debug)]
struct StopOnInvalid;

impl std::fmt::Display for StopOnInvalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped at an invalid line")
    }
}

impl std::error::Error for StopOnInvalid {}
