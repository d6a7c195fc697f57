//! `urikey normalize`: one canonical key per input line, in order.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use urikey::engine::formats::for_each_record;
use urikey::engine::lines::MAX_LINE_BYTES;
use urikey::engine::{InvalidLine, Problem};
use urikey::uri::key::{KeyErrorKind, KeyScratch};

use super::format_opts::FormatOpts;
use super::lines::{check_inputs, inputs};
use super::normalize_opts::NormalizeOpts;
use super::output::{self, one_stdout, Cleanup, Sink};
use super::report::{say, Reporter};
use super::Exit;

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

    #[command(flatten)]
    input: FormatOpts,

    /// What to print for an invalid line (reported on stderr: the first 20,
    /// then a count).
    #[arg(long, value_enum, default_value_t = OnInvalid::Empty)]
    on_invalid: OnInvalid,

    /// Write to FILE (via a temporary file renamed on success; `-`:
    /// stdout).
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// Write every invalid line to FILE as `path:line:byte:reason<TAB>line`
    /// (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    rejects: Option<PathBuf>,

    /// Do not report invalid lines on stderr.
    #[arg(short, long)]
    quiet: bool,

    /// Input files (stdin when none or `-`).
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
}

/// Runs `urikey normalize`.
pub fn run(args: NormalizeArgs) -> anyhow::Result<Exit> {
    let keyer = args.opts.keyer()?;
    let format = args.input.input_format(keyer.clone())?;
    let is_stdout = |p: &Option<PathBuf>| p.as_deref().is_some_and(|p| p.as_os_str() == "-");
    one_stdout(&[
        ("-o", args.output.is_none() || is_stdout(&args.output)),
        ("--rejects", is_stdout(&args.rejects)),
    ])?;
    check_inputs(&args.files)?;
    let cleanup = Cleanup::default();
    cleanup.install();
    let mut sink = Sink::open(args.output.as_deref(), &cleanup)?;
    let rejects = args
        .rejects
        .as_deref()
        .map(|p| Sink::open(Some(p), &cleanup))
        .transpose()?;
    let mut reporter = Reporter::new(
        args.quiet,
        match &rejects {
            Some(r) => Some(Box::new(BufWriter::with_capacity(1 << 16, r.try_clone()?))),
            None => None,
        },
    );
    let name = sink.name();
    let mut out = BufWriter::with_capacity(1 << 16, sink.writer());
    let mut scratch = KeyScratch::default();
    let mut line_out = Vec::with_capacity(256);
    let result: anyhow::Result<()> = for_each_record(
        inputs(&args.files),
        &format,
        None,
        MAX_LINE_BYTES,
        |record| {
            if output::interrupted() {
                return Err(Stop::Interrupted.into());
            }
            line_out.clear();
            let key = match record.url {
                Err(e) => Err(e),
                Ok(url) => keyer
                    .key(url, &mut scratch)
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
                    reporter.report(&InvalidLine::new(
                        record.source,
                        record.number,
                        record.byte_of(index),
                        problem,
                        record.original,
                    ));
                    match args.on_invalid {
                        OnInvalid::Empty => line_out.push(b'\n'),
                        OnInvalid::Skip => {}
                        OnInvalid::Keep => {
                            if problem != Problem::LineTooLong {
                                line_out.extend_from_slice(record.original);
                            }
                            line_out.push(b'\n');
                        }
                        OnInvalid::Fail => return Err(Stop::Invalid.into()),
                    }
                }
            }
            out.write_all(&line_out)
                .with_context(|| format!("cannot write {name}"))?;
            Ok(())
        },
    );
    let stopped = match result {
        Ok(()) => false,
        Err(e) => match e.downcast_ref::<Stop>() {
            Some(Stop::Invalid) => true,
            Some(Stop::Interrupted) => {
                say!("interrupted");
                return Ok(Exit::Interrupted);
            }
            None => return Err(e),
        },
    };
    out.flush()
        .with_context(|| format!("cannot write {name}"))?;
    drop(out);
    let rejects_name = rejects.as_ref().map_or_else(String::new, Sink::name);
    reporter
        .finish()
        .with_context(|| format!("cannot write {rejects_name}"))?;
    if let Some(r) = rejects {
        r.commit()?;
    }
    sink.commit()?;
    Ok(if stopped {
        Exit::InvalidLines
    } else {
        Exit::Ok
    })
}

/// Ends the line loop early.
#[derive(Debug)]
enum Stop {
    /// At the first invalid line under `--on-invalid fail`.
    Invalid,
    /// At Ctrl-C.
    Interrupted,
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stop::Invalid => "stopped at an invalid line",
            Stop::Interrupted => "interrupted",
        })
    }
}

impl std::error::Error for Stop {}
