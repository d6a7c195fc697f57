//! `urikey dedup`: the first line of every canonical key, in input order.

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::Context;
use urikey::engine::{
    self, Config, Emit, Field, InvalidLine, Observer, OutputFile, Progress, Select, Stats, Warning,
};

use urikey::uri::key::Relative;

use super::lines::inputs;
use super::normalize_opts::NormalizeOpts;
use super::progress::ProgressBar;
use super::rss::peak_rss_bytes;
use super::Exit;

/// How many invalid lines are reported on stderr before only counting.
const MAX_REPORTED: u64 = 20;

/// What `--emit` prints.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitArg {
    /// The canonical key, in the `--key` form.
    Canonical,
    /// The first-seen line as it was (without a trailing CR).
    Original,
}

/// Arguments of `urikey dedup`.
#[derive(clap::Args, Debug)]
pub struct DedupArgs {
    /// Input files, read in order as one stream (`-` or none: stdin).
    /// gzip and zstd inputs are recognised by their content.
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub norm: NormalizeOpts,

    /// Print the canonical key, or the first-seen original line.
    #[arg(long, value_enum, default_value = "canonical")]
    pub emit: EmitArg,

    /// Take the URL from column N (1-based) and print whole lines (with
    /// --emit canonical, the URL column replaced by its key). An empty
    /// column is invalid (`empty-field`).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub field: Option<u64>,

    /// Column separator for --field: one byte (`\t` and `tab` mean TAB).
    /// Default: TAB, or `,` with --csv.
    #[arg(long, value_name = "C", value_parser = parse_delimiter)]
    pub delimiter: Option<u8>,

    /// Read --field columns with RFC 4180 quoting: `"http://a/?x=1,2"` is
    /// one column (a quoted field may not span lines).
    #[arg(long, requires = "field")]
    pub csv: bool,

    /// Resolve relative references (`/a`, `hello`) against this absolute
    /// URI (RFC 3986 §5.2) before keying them. Without it (and without
    /// --allow-relative) a relative reference is invalid.
    #[arg(long, value_name = "URL", conflicts_with = "allow_relative")]
    pub base: Option<String>,

    /// Key relative references as they are, like absolute URIs.
    #[arg(long)]
    pub allow_relative: bool,

    /// Print only the lines whose key was seen before.
    #[arg(long, conflicts_with = "count")]
    pub duplicates: bool,

    /// Prefix each unique line with its number of occurrences and a TAB
    /// (output comes at the end; memory holds every unique line).
    #[arg(long)]
    pub count: bool,

    /// Compare full keys instead of 128-bit fingerprints (no collision
    /// risk; memory grows with the total key length).
    #[arg(long)]
    pub exact: bool,

    /// Write to FILE (via a temporary file renamed on success).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Write every invalid line to FILE as `path:line:byte:reason<TAB>line`
    /// (lines longer than --max-line-bytes are cut to that length).
    #[arg(long, value_name = "FILE")]
    pub rejects: Option<PathBuf>,

    /// Print a summary on stderr.
    #[arg(long)]
    pub stats: bool,

    /// Write the run's statistics as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,

    /// Worker threads (0: one per core).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,

    /// Show a progress bar on stderr (default: when stderr is a terminal).
    #[arg(long, overrides_with = "no_progress")]
    pub progress: bool,

    /// Never show a progress bar.
    #[arg(long, overrides_with = "progress")]
    pub no_progress: bool,

    /// Do not report invalid lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,

    /// Exit with status 1 when any line is invalid.
    #[arg(long)]
    pub fail_on_invalid: bool,

    /// Reject lines longer than this many bytes.
    #[arg(long, value_name = "BYTES", default_value_t = 1 << 20)]
    pub max_line_bytes: usize,

    /// Target chunk size in bytes (tuning and testing).
    #[arg(long, value_name = "BYTES", default_value_t = 2 << 20, hide = true)]
    pub chunk_size: usize,
}

fn parse_delimiter(s: &str) -> Result<u8, String> {
    match s {
        "\\t" | "tab" | "TAB" => Ok(b'\t'),
        _ if s.len() == 1 => Ok(s.as_bytes()[0]),
        _ => Err(format!("the delimiter must be one byte, not {s:?}")),
    }
}

/// Opens `-o`/`--rejects` output: the engine's [`OutputFile`] (whole or
/// absent), its temporary file registered for removal on Ctrl-C.
fn create_output(target: &Path, cleanup: &Cleanup) -> anyhow::Result<OutputFile> {
    let out =
        OutputFile::create(target).with_context(|| format!("cannot write {}", target.display()))?;
    if let Some(temp) = out.temp_path() {
        cleanup.add(temp);
    }
    Ok(out)
}

/// Renames a finished output into place.
fn commit_output(out: OutputFile, target: &Path, cleanup: &Cleanup) -> anyhow::Result<()> {
    if let Some(temp) = out.temp_path() {
        cleanup.forget(temp);
    }
    out.commit()
        .with_context(|| format!("cannot write {}", target.display()))
}

/// Temporary files to delete when the user presses Ctrl-C.
#[derive(Clone, Default)]
struct Cleanup(Arc<Mutex<Vec<PathBuf>>>);

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

    /// Installs the Ctrl-C (and SIGTERM/SIGHUP) handler: remove the files,
    /// exit 130.
    fn install(&self) {
        let files = self.clone();
        // Failing to install (a handler already exists) only loses cleanup.
        let _ = ctrlc::set_handler(move || {
            if let Ok(v) = files.0.lock() {
                for p in v.iter() {
                    let _ = std::fs::remove_file(p);
                }
            }
            std::process::exit(130);
        });
    }
}

/// Invalid-line reports: the first few on stderr, all in `--rejects`.
struct Reporter {
    quiet: bool,
    shown: u64,
    rejects: Option<BufWriter<File>>,
    error: Option<io::Error>,
}

impl Reporter {
    fn report(&mut self, inv: &InvalidLine<'_>) {
        if !self.quiet && self.shown < MAX_REPORTED {
            self.shown += 1;
            eprintln!("urikey: {inv}");
        }
        if let (Some(w), None) = (&mut self.rejects, &self.error) {
            if let Err(e) = inv.write_record(w) {
                self.error = Some(e);
            }
        }
    }
}

/// What the command line does with the engine's reports.
struct CliObserver {
    reporter: Reporter,
    bar: ProgressBar,
}

impl Observer for CliObserver {
    fn invalid(&mut self, line: &InvalidLine<'_>) {
        self.reporter.report(line);
    }

    fn warning(&mut self, warning: &Warning<'_>) {
        eprintln!("urikey: warning: {warning}");
    }

    fn progress(&mut self, progress: &Progress) {
        self.bar.update(progress);
    }
}

/// Runs `urikey dedup`.
pub fn run(args: DedupArgs) -> anyhow::Result<Exit> {
    let relative = match (&args.base, args.allow_relative) {
        (Some(base), _) => Relative::resolve_against(base)
            .map_err(|e| anyhow::anyhow!("--base {base:?} is not an absolute URI: {e}"))?,
        (None, true) => Relative::Allow,
        // A URL dump holds absolute URLs: `hello` is not one.
        (None, false) => Relative::Reject,
    };
    let mut config = Config::new(args.norm.keyer()?.with_relative(relative));
    config.emit = match args.emit {
        EmitArg::Canonical => Emit::Key,
        EmitArg::Original => Emit::Original,
    };
    config.field = args.field.map(|n| Field {
        index: (n - 1) as usize,
        delimiter: args
            .delimiter
            .unwrap_or(if args.csv { b',' } else { b'\t' }),
        csv: args.csv,
    });
    config.select = if args.count {
        Select::Counts
    } else if args.duplicates {
        Select::Duplicates
    } else {
        Select::Unique
    };
    config.exact = args.exact;
    config.threads = args.threads;
    config.chunk_size = args.chunk_size;
    config.max_line_bytes = args.max_line_bytes;
    let show_progress = if args.no_progress {
        false
    } else {
        args.progress || io::stderr().is_terminal()
    };
    let inputs = inputs(&args.files);

    let cleanup = Cleanup::default();
    cleanup.install();
    let mut output = args
        .output
        .as_deref()
        .map(|p| create_output(p, &cleanup))
        .transpose()?;
    let mut rejects = args
        .rejects
        .as_deref()
        .map(|p| create_output(p, &cleanup))
        .transpose()?;
    let total = args
        .files
        .iter()
        .map(|p| {
            std::fs::metadata(p)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len())
        })
        .sum::<Option<u64>>()
        .filter(|_| !args.files.is_empty());
    let mut observer = CliObserver {
        reporter: Reporter {
            quiet: args.quiet,
            shown: 0,
            rejects: match &rejects {
                Some(r) => Some(BufWriter::with_capacity(1 << 16, r.try_clone()?)),
                None => None,
            },
            error: None,
        },
        bar: ProgressBar::new(show_progress, total),
    };

    let result = match &mut output {
        Some(out) => engine::run(&config, inputs, out.file(), &mut observer),
        None => engine::run(&config, inputs, &mut io::stdout(), &mut observer),
    };
    observer.bar.finish();
    let mut reporter = observer.reporter;
    let stats = match result {
        Ok(stats) => stats,
        Err(e) if e.is_broken_pipe() => return Ok(Exit::Ok),
        Err(e) => return Err(e.into()),
    };
    if stats.invalid > reporter.shown && !args.quiet {
        eprintln!(
            "urikey: {} more invalid lines not shown{}",
            stats.invalid - reporter.shown,
            if args.rejects.is_some() {
                ""
            } else {
                " (keep them all with --rejects FILE)"
            }
        );
    }
    if let Some(e) = reporter.error.take() {
        return Err(anyhow::Error::new(e).context("cannot write the rejects file"));
    }
    if let Some(w) = reporter.rejects.take() {
        w.into_inner()
            .map_err(|e| e.into_error())
            .context("cannot write the rejects file")?;
    }
    if let (Some(r), Some(path)) = (rejects.take(), &args.rejects) {
        commit_output(r, path, &cleanup)?;
    }
    if let (Some(out), Some(path)) = (output.take(), &args.output) {
        commit_output(out, path, &cleanup)?;
    }
    let peak_rss = peak_rss_bytes();
    if args.stats {
        eprint!("{}", human_summary(&stats, peak_rss));
    }
    if let Some(path) = &args.stats_json {
        std::fs::write(path, stats_json(&stats, peak_rss))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(if args.fail_on_invalid && stats.invalid > 0 {
        Exit::InvalidLines
    } else {
        Exit::Ok
    })
}

/// The `--stats` text.
fn human_summary(s: &Stats, peak_rss: Option<u64>) -> String {
    let mut text = format!(
        "urikey: {} lines, {:.1} MB in {:.3} s: {} unique, {} duplicates ({:.1}%), {} invalid, {} blank\n\
         urikey: {:.1} MB/s, {:.0} URLs/s, {} threads",
        s.lines,
        s.bytes as f64 / 1e6,
        s.wall.as_secs_f64(),
        s.unique,
        s.duplicates,
        s.duplicate_ratio() * 100.0,
        s.invalid,
        s.blank,
        s.mb_per_s(),
        s.lines_per_s(),
        s.threads,
    );
    if let Some(rss) = peak_rss {
        text.push_str(&format!(
            ", peak RSS {:.1} MiB",
            rss as f64 / (1u64 << 20) as f64
        ));
    }
    text.push('\n');
    for (reason, n) in &s.invalid_by_reason {
        text.push_str(&format!("urikey:   {reason}: {n}\n"));
    }
    text
}

/// The `--stats-json` document (reason names are `[a-z0-9-]`, so they need
/// no escaping).
fn stats_json(s: &Stats, peak_rss: Option<u64>) -> String {
    let reasons: Vec<String> = s
        .invalid_by_reason
        .iter()
        .map(|(k, v)| format!("\"{k}\": {v}"))
        .collect();
    format!(
        "{{\n  \"lines\": {},\n  \"bytes\": {},\n  \"blank\": {},\n  \"invalid\": {},\n  \
         \"invalid_by_reason\": {{{}}},\n  \"unique\": {},\n  \"duplicates\": {},\n  \
         \"duplicate_ratio\": {},\n  \"wall_seconds\": {},\n  \"mb_per_s\": {},\n  \
         \"urls_per_s\": {},\n  \"peak_rss_bytes\": {},\n  \"threads\": {}\n}}\n",
        s.lines,
        s.bytes,
        s.blank,
        s.invalid,
        reasons.join(", "),
        s.unique,
        s.duplicates,
        json_number(s.duplicate_ratio()),
        json_number(s.wall.as_secs_f64()),
        json_number(s.mb_per_s()),
        json_number(s.lines_per_s()),
        peak_rss.map_or("null".to_owned(), |v| v.to_string()),
        s.threads,
    )
}

/// A finite JSON number (JSON has no NaN or infinity).
fn json_number(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.6}")
    } else {
        "0".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedup_delimiter_parsing() {
        assert_eq!(parse_delimiter("\t"), Ok(b'\t'));
        assert_eq!(parse_delimiter("\\t"), Ok(b'\t'));
        assert_eq!(parse_delimiter(","), Ok(b','));
        assert!(parse_delimiter(",,").is_err());
        assert!(parse_delimiter("").is_err());
    }

    #[test]
    fn dedup_stats_json_shape() {
        let mut s = Stats {
            lines: 3,
            unique: 2,
            duplicates: 1,
            ..Stats::default()
        };
        s.invalid_by_reason.insert("invalid-path", 4);
        let j = stats_json(&s, Some(10));
        assert!(j.contains("\"invalid_by_reason\": {\"invalid-path\": 4}"));
        assert!(j.contains("\"peak_rss_bytes\": 10"));
        assert!(j.contains("\"duplicate_ratio\": 0.333333"));
    }
}
