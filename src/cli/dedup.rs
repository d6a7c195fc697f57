//! `urikey dedup`: the first line of every canonical key, in input order.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context};
use urikey::engine::{
    self, Config, ConfigError, Emit, Input, InvalidLine, Observer, Progress, Select, Stats, Warning,
};
use urikey::uri::key::Relative;

use super::format_opts::FormatOpts;
use super::lines::inputs;
use super::normalize_opts::NormalizeOpts;
use super::output::{self, one_stdout, write_whole, Cleanup, Sink};
use super::progress::{self, ProgressBar};
use super::report::{say, say_raw, Reporter};
use super::state::{State, StateReport};
use super::Exit;
use urikey::engine::peak_rss_bytes;

/// What `--emit` prints.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitArg {
    /// The canonical key, in the `--key` form.
    Canonical,
    /// The first-seen line as it was (without a trailing CR); for WARC
    /// the target URI, for WAT `page<TAB>link`, for Parquet the value.
    Original,
}

/// Which duplicates `--duplicates` prints.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DuplicatesArg {
    /// Every line whose key was seen before, in input order.
    All,
    /// The first-seen line of every key that occurs more than once, in
    /// first-seen order.
    First,
}

/// Arguments of `urikey dedup`.
#[derive(clap::Args, Debug)]
pub struct DedupArgs {
    /// Input files, read in order as one stream (`-` or none: stdin).
    /// gzip, zstd, xz and bzip2 inputs, and the formats of --format, are
    /// recognised by their content.
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub norm: NormalizeOpts,

    #[command(flatten)]
    pub input: FormatOpts,

    /// Print the canonical key, or the first-seen original line.
    #[arg(long, value_enum, default_value = "canonical")]
    pub emit: EmitArg,

    /// Take the URL from column N (1-based) and print whole lines (with
    /// --emit canonical, the URL column replaced by its key). An empty
    /// column is invalid (`empty-field`).
    #[arg(long, value_name = "N", value_parser = parse_field)]
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

    /// Print only duplicates: `all` (the default) every line whose key was
    /// seen before; `first` one line per duplicated key, the first-seen
    /// one (output comes at the end, like --count).
    #[arg(
        long,
        value_enum,
        value_name = "WHICH",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "all"
    )]
    pub duplicates: Option<DuplicatesArg>,

    /// Prefix each printed line with its key's number of occurrences and a
    /// TAB (output comes at the end; memory holds every unique line). With
    /// --duplicates=first: only keys seen twice or more.
    #[arg(long)]
    pub count: bool,

    /// Compare full keys instead of fingerprints (no collision risk;
    /// memory grows with the total key length).
    #[arg(long)]
    pub exact: bool,

    /// Write to FILE (via a temporary file renamed on success; `-`:
    /// stdout).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Write every invalid line to FILE as `path:line:byte:reason<TAB>line`
    /// (lines longer than --max-line-bytes are cut to that length; `-`:
    /// stdout).
    #[arg(long, value_name = "FILE")]
    pub rejects: Option<PathBuf>,

    /// Print a summary on stderr.
    #[arg(long)]
    pub stats: bool,

    /// Write the run's statistics as JSON to FILE (`-`: stdout).
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,

    /// Worker threads (0: one per core; at most 4096).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,

    /// Show a progress bar on stderr (default: when stderr is a terminal);
    /// when stderr is not a terminal, print a progress line every 5 s.
    #[arg(long, overrides_with = "no_progress")]
    pub progress: bool,

    /// Seconds between two plain progress lines (testing).
    #[arg(long, value_name = "SECS", default_value_t = progress::PLAIN_INTERVAL.as_secs_f64(), hide = true)]
    pub progress_interval: f64,

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

    /// Memory the run may use (e.g. 512M, 4G); past it, the rest of the
    /// input is deduplicated through temporary files. Default: half of
    /// physical memory or three quarters of the cgroup limit.
    #[arg(long, value_name = "SIZE", value_parser = engine::memory::parse_size)]
    pub memory_limit: Option<u64>,

    /// Directory for the temporary files of a run past --memory-limit
    /// (default: $TMPDIR or /tmp).
    #[arg(long, value_name = "DIR")]
    pub temp_dir: Option<PathBuf>,

    /// Target chunk size in bytes (tuning and testing).
    #[arg(long, value_name = "BYTES", default_value_t = urikey::engine::DEFAULT_CHUNK_BYTES, hide = true)]
    pub chunk_size: usize,

    /// Deduplicate against the seen-store in DIR too (every key of earlier
    /// runs), and add this run's new keys to it when urikey exits 0: the
    /// output is what one run over all earlier inputs, then these, prints
    /// for these. DIR is made when missing or empty (`urikey state`). With
    /// --count: keys new to the store only, counted over this run.
    #[arg(long, value_name = "DIR", conflicts_with = "state_readonly")]
    pub state: Option<PathBuf>,

    /// Like --state, but adds nothing to the store (no lock: may run beside
    /// a writer).
    #[arg(long, value_name = "DIR")]
    pub state_readonly: Option<PathBuf>,

    /// Memory for the new keys of a --state run before they go to
    /// temporary files in the store (testing; default: an eighth of
    /// --memory-limit, within 4 to 64 MiB).
    #[arg(long, value_name = "BYTES", hide = true)]
    pub state_buffer: Option<usize>,
}

fn parse_delimiter(s: &str) -> Result<u8, String> {
    match s {
        "\\t" | "tab" | "TAB" => Ok(b'\t'),
        _ if s.len() == 1 => Ok(s.as_bytes()[0]),
        _ => Err(format!("the delimiter must be one byte, not {s:?}")),
    }
}

fn parse_field(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("fields count from 1 (the first column is 1)".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("not a column number: {s:?}")),
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
        say!("warning: {warning}");
    }

    fn progress(&mut self, progress: &Progress) {
        self.bar.update(progress);
    }

    fn should_stop(&mut self) -> bool {
        output::interrupted()
    }
}

/// Keeps the lines of the counts output whose count is 2 or more, with or
/// without the count: `--duplicates=first`.
struct FirstDuplicates<'a> {
    inner: &'a mut (dyn Write + Send),
    keep_count: bool,
    /// The start of a line not yet complete.
    partial: Vec<u8>,
    out: Vec<u8>,
}

impl<'a> FirstDuplicates<'a> {
    fn new(inner: &'a mut (dyn Write + Send), keep_count: bool) -> Self {
        Self {
            inner,
            keep_count,
            partial: Vec::new(),
            out: Vec::new(),
        }
    }

    /// One `count<TAB>line` record, without its newline.
    fn line(&mut self, record: &[u8]) {
        let Some(tab) = memchr::memchr(b'\t', record) else {
            return;
        };
        let count = &record[..tab];
        // The engine writes counts in decimal without leading zeros.
        if count.len() == 1 && count[0] < b'2' {
            return;
        }
        let keep = if self.keep_count {
            record
        } else {
            &record[tab + 1..]
        };
        self.out.extend_from_slice(keep);
        self.out.push(b'\n');
    }
}

impl Write for FirstDuplicates<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while let Some(nl) = memchr::memchr(b'\n', rest) {
            if self.partial.is_empty() {
                self.line(&rest[..nl]);
            } else {
                let mut record = std::mem::take(&mut self.partial);
                record.extend_from_slice(&rest[..nl]);
                self.line(&record);
                record.clear();
                self.partial = record;
            }
            rest = &rest[nl + 1..];
        }
        self.partial.extend_from_slice(rest);
        self.inner.write_all(&self.out)?;
        self.out.clear();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
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
    let key_config = args.norm.config()?;
    let select = select(&args)?;
    let mut builder = Config::builder(key_config.keyer().with_relative(relative))
        .mmap(super::lines::mmap())
        .emit(match args.emit {
            EmitArg::Canonical => Emit::Key,
            EmitArg::Original => Emit::Original,
        })
        .select(select)
        .exact(args.exact)
        .threads(args.threads)
        .chunk_size(args.chunk_size)
        .max_line_bytes(args.max_line_bytes);
    if let Some(n) = args.field {
        let delimiter = args
            .delimiter
            .unwrap_or(if args.csv { b',' } else { b'\t' });
        builder = builder.field(n, delimiter, args.csv)?;
    }
    let mut config = args.input.apply(builder).build().map_err(|e| match e {
        ConfigError::FieldNeedsLines(f) => {
            anyhow::anyhow!("--field reads plain lines, not --format {f}")
        }
        other => other.into(),
    })?;
    let first_duplicates = args.duplicates == Some(DuplicatesArg::First);
    let is_stdout = |p: &Option<PathBuf>| p.as_deref().is_some_and(|p| p.as_os_str() == "-");
    one_stdout(&[
        ("-o", args.output.is_none() || is_stdout(&args.output)),
        ("--rejects", is_stdout(&args.rejects)),
        ("--stats-json", is_stdout(&args.stats_json)),
    ])?;
    let mode = progress_mode(&args)?;
    let inputs = inputs(&args.files);
    if let Some(rejects) = args.rejects.as_deref().filter(|p| p.as_os_str() != "-") {
        if engine::rejects_would_replace(rejects, &inputs, args.output.as_deref()) {
            bail!(
                "--rejects {} names an input or the output, which the invalid lines would replace",
                rejects.display()
            );
        }
    }

    // The store first: a locked or mismatched store fails before any
    // output is made.
    let state = match (&args.state, &args.state_readonly) {
        (Some(dir), _) => Some((dir, false)),
        (None, Some(dir)) => Some((dir, true)),
        (None, None) => None,
    }
    .map(|(dir, readonly)| {
        State::open(
            dir,
            &key_config,
            readonly,
            args.memory_limit,
            args.state_buffer,
            engine::worker_threads(args.threads),
        )
    })
    .transpose()?;
    let cleanup = Cleanup::default();
    cleanup.install();
    config.memory_limit = args.memory_limit;
    if let Some(state) = &state {
        config.prior = Some(state.prior());
        config.memory_limit = state.memory_limit(args.memory_limit);
    }
    let spill_dir = cleanup.temp_dir(args.temp_dir.as_deref());
    config.temp_dir = match &spill_dir {
        Some(dir) => Some(dir.path().to_owned()),
        None => args.temp_dir.clone(),
    };
    let mut sink = Sink::open(args.output.as_deref(), &cleanup)?;
    let rejects = args
        .rejects
        .as_deref()
        .map(|p| Sink::open(Some(p), &cleanup))
        .transpose()?;
    let total = inputs.iter().map(Input::size_hint).sum::<Option<u64>>();
    let rejects_writer: Option<Box<dyn Write>> = match &rejects {
        Some(r) => Some(Box::new(BufWriter::with_capacity(1 << 16, r.try_clone()?))),
        None => None,
    };
    let mut observer = CliObserver {
        reporter: Reporter::new(args.quiet, rejects_writer),
        bar: ProgressBar::new(mode, total),
    };

    let result = if first_duplicates {
        let mut filter = FirstDuplicates::new(sink.writer(), args.count);
        engine::run(&config, inputs, &mut filter, &mut observer)
    } else {
        engine::run(&config, inputs, sink.writer(), &mut observer)
    };
    if let Some(dir) = spill_dir {
        cleanup.forget_dir(dir.path());
    }
    let mut stats = match result {
        Ok(stats) => stats,
        Err(engine::Error::Interrupted) => {
            observer.bar.clear();
            output::clear_line();
            say!("interrupted");
            // Dropping the outputs removes their temporary files.
            return Ok(Exit::Interrupted);
        }
        Err(e) if e.is_broken_pipe() => return closed_stdout(state.as_ref()),
        Err(engine::Error::Write(e)) => {
            observer.bar.clear();
            return Err(anyhow::Error::new(e).context(format!("cannot write {}", sink.name())));
        }
        Err(e) => {
            observer.bar.clear();
            return Err(e.into());
        }
    };
    observer.bar.finish();
    let rejects_name = rejects.as_ref().map_or_else(String::new, Sink::name);
    observer
        .reporter
        .finish()
        .with_context(|| format!("cannot write {rejects_name}"))?;
    if let Some(r) = rejects {
        r.commit()?;
    }
    let exit = if args.fail_on_invalid && stats.invalid > 0 {
        Exit::InvalidLines
    } else {
        Exit::Ok
    };
    let to_stdout = matches!(sink, Sink::Stdout(_));
    match sink.commit() {
        Err(e) if super::messages::is_broken_pipe(&e) => return closed_stdout(state.as_ref()),
        r => r?,
    }
    if state.as_ref().is_some_and(State::commits) {
        // The output must be on disk before its keys are: a crash between
        // them then prints the keys again, never loses them.
        match args.output.as_deref() {
            Some(path) if !to_stdout => sync_parent(path)?,
            _ => output::sync_stdout_file()?,
        }
    }
    // The store's keys change only when urikey exits 0, and a commit
    // that began is not cut short by a signal.
    let state_report = match state {
        Some(state) if exit == Exit::Ok && state.commits() => {
            if !output::begin_commit() {
                say!(
                    "interrupted: the output is complete, but its keys were not added to the store"
                );
                return Ok(Exit::Interrupted);
            }
            Some(state.commit()?)
        }
        Some(state) => Some(state.unchanged()),
        None => None,
    };
    // The run is timed from the start of the process to the committed
    // output, so the summary's wall time is what the user waited.
    stats.wall = super::started().elapsed();
    let peak_rss = peak_rss_bytes();
    if args.stats {
        let mut text = human_summary(&stats, peak_rss);
        if let Some(r) = &state_report {
            text.push_str(&r.human());
        }
        say_raw(&text);
    }
    if let Some(path) = &args.stats_json {
        let json = stats_json(&stats, peak_rss, state_report.as_ref());
        write_whole(path, json.as_bytes(), &cleanup)?;
    }
    Ok(exit)
}

/// Which lines the run writes, as `--duplicates` and `--count` ask.
fn select(args: &DedupArgs) -> anyhow::Result<Select> {
    Ok(match (args.duplicates, args.count) {
        (Some(DuplicatesArg::All), true) => {
            bail!("--count works with --duplicates=first, not with every duplicate")
        }
        (Some(DuplicatesArg::All), false) => Select::Duplicates,
        (Some(DuplicatesArg::First), _) | (None, true) => Select::Counts,
        (None, false) => Select::Unique,
    })
}

/// How progress is shown: a bar on a terminal, plain lines when asked.
fn progress_mode(args: &DedupArgs) -> anyhow::Result<progress::Mode> {
    Ok(if args.no_progress {
        progress::Mode::Off
    } else if io::stderr().is_terminal() {
        progress::Mode::Bar
    } else if args.progress {
        progress::Mode::Plain {
            interval: Duration::try_from_secs_f64(args.progress_interval)
                .context("--progress-interval takes seconds")?,
        }
    } else {
        progress::Mode::Off
    })
}

/// A closed output pipe (`| head`): success, unless the run was to add its
/// keys to a store, which it then does not: that must not look like
/// success.
fn closed_stdout(state: Option<&State>) -> anyhow::Result<Exit> {
    match state {
        Some(s) if s.commits() => bail!(
            "stdout was closed before the output was complete: nothing was added to {} (a \
             next run prints these lines again)",
            s.describe()
        ),
        _ => Ok(Exit::Ok),
    }
}

/// Syncs the directory of `path`, so that its new name is durable.
///
/// # Errors
/// `cannot write <path>` with the reason: the keys are then not committed.
fn sync_parent(path: &std::path::Path) -> anyhow::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    std::fs::File::open(parent)
        .and_then(|d| d.sync_all())
        .with_context(|| {
            format!(
                "cannot write {}: its directory could not be synced",
                path.display()
            )
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
    let p = &s.phases;
    text.push_str(&format!(
        "urikey: time: keys {:.3} s, inserts {:.3} s, waiting for input {:.3} s, \
         for the writer {:.3} s, other {:.3} s\n",
        p.keys.as_secs_f64(),
        p.inserts.as_secs_f64(),
        p.input_wait.as_secs_f64(),
        p.writer_wait.as_secs_f64(),
        s.other_time().as_secs_f64(),
    ));
    for (reason, n) in &s.invalid_by_reason {
        text.push_str(&format!("urikey:   {reason}: {n}\n"));
    }
    text
}

/// The `--stats-json` document (reason names are `[a-z0-9-]`, so they need
/// no escaping).
fn stats_json(s: &Stats, peak_rss: Option<u64>, state: Option<&StateReport>) -> String {
    let reasons: Vec<String> = s
        .invalid_by_reason
        .iter()
        .map(|(k, v)| format!("\"{k}\": {v}"))
        .collect();
    let phases: Vec<String> = s
        .phase_seconds()
        .iter()
        .map(|(name, seconds)| format!("\"{name}\": {}", json_number(*seconds)))
        .collect();
    format!(
        "{{\n  \"lines\": {},\n  \"bytes\": {},\n  \"blank\": {},\n  \"invalid\": {},\n  \
         \"invalid_by_reason\": {{{}}},\n  \"unique\": {},\n  \"duplicates\": {},\n  \
         \"duplicate_ratio\": {},\n  \"wall_seconds\": {},\n  \"mb_per_s\": {},\n  \
         \"urls_per_s\": {},\n  \"peak_rss_bytes\": {},\n  \"threads\": {},\n  \
         \"phases\": {{{}}}{}\n}}\n",
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
        phases.join(", "),
        state.map_or_else(String::new, |r| format!(",\n  \"state\": {}", r.json())),
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
    fn dedup_first_duplicates_filter_any_split() {
        let counts = b"1\ta\tx\n2\tb\n10\tc\n1\td\n3\te\tf\n";
        for keep_count in [false, true] {
            for piece in [1, 2, 5, counts.len()] {
                let mut out: Vec<u8> = Vec::new();
                let mut filter = FirstDuplicates::new(&mut out, keep_count);
                for part in counts.chunks(piece) {
                    filter.write_all(part).unwrap();
                }
                filter.flush().unwrap();
                let want: &[u8] = if keep_count {
                    b"2\tb\n10\tc\n3\te\tf\n"
                } else {
                    b"b\nc\ne\tf\n"
                };
                assert_eq!(out, want, "pieces of {piece}");
            }
        }
    }

    #[test]
    fn dedup_stats_json_shape() {
        let mut s = Stats::default();
        (s.lines, s.unique, s.duplicates) = (3, 2, 1);
        s.invalid_by_reason.insert("invalid-path", 4);
        let j = stats_json(&s, Some(10), None);
        assert!(j.contains("\"invalid_by_reason\": {\"invalid-path\": 4}"));
        assert!(j.contains("\"peak_rss_bytes\": 10"));
        assert!(j.contains("\"duplicate_ratio\": 0.333333"));
        assert!(j.contains("\"phases\": {\"keys_seconds\": 0.000000,"));
    }
}
