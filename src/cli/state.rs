//! Seen-stores from the command line: `dedup --state DIR` (the [`State`]
//! of one run) and `urikey state init|info|verify|compact|merge|export`.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use urikey::engine::store::{Access, CommitReport, SeenStore, SessionStats, StoreSession};
use urikey::engine::PriorKeys;
use urikey::uri::key::KeyConfig;

use super::export_parquet::{FingerprintWriter, ROW_GROUP_ROWS};
use super::normalize_opts::NormalizeOpts;
use super::output::{Cleanup, Sink};
use super::redis_state::{self, RedisState, RedisStateReport};
use super::report::say_raw;
use super::Exit;
use urikey::engine::redis::is_redis_url;

/// The seen-store or Redis set of one `dedup` run.
pub enum State {
    /// A seen-store directory.
    Disk(DiskState),
    /// A Redis set (`redis://...`).
    Redis(RedisState),
}

/// What a run did to its store or set.
pub enum StateReport {
    /// A seen-store directory.
    Disk(DiskStateReport),
    /// A Redis set.
    Redis(RedisStateReport),
}

impl State {
    /// Opens the store in `dir`, or the Redis set when `dir` is a
    /// `redis://` URL (a connection to it for each of the run's `threads`),
    /// for keys of `config`.
    pub fn open(
        dir: &Path,
        config: &KeyConfig,
        readonly: bool,
        memory_limit: Option<u64>,
        buffer: Option<usize>,
        threads: usize,
    ) -> anyhow::Result<Self> {
        match dir.to_str().filter(|s| is_redis_url(s)) {
            Some(url) => Ok(State::Redis(RedisState::open(
                url, config, readonly, threads,
            )?)),
            None => Ok(State::Disk(DiskState::open(
                dir,
                config,
                readonly,
                memory_limit,
                buffer,
            )?)),
        }
    }

    /// The store or set as the run's prior set.
    pub fn prior(&self) -> Arc<dyn PriorKeys> {
        match self {
            State::Disk(s) => s.prior(),
            State::Redis(s) => s.prior(),
        }
    }

    /// True when the run's new keys are committed at its end (not
    /// read-only).
    pub fn commits(&self) -> bool {
        match self {
            State::Disk(s) => s.commits(),
            State::Redis(s) => s.commits(),
        }
    }

    /// The store or set as messages name it: the seen-store's directory,
    /// or the Redis set's URL without its password.
    pub fn describe(&self) -> String {
        match self {
            State::Disk(s) => format!("the seen-store {}", s.dir().display()),
            State::Redis(s) => format!("the Redis set {}", s.shown_url()),
        }
    }

    /// The run's memory limit once the store's share is taken out.
    pub fn memory_limit(&self, limit: Option<u64>) -> Option<u64> {
        match self {
            State::Disk(s) => s.memory_limit(limit),
            State::Redis(_) => limit,
        }
    }

    /// Commits the run's new keys.
    pub fn commit(self) -> anyhow::Result<StateReport> {
        match self {
            State::Disk(s) => s.commit().map(StateReport::Disk),
            State::Redis(s) => s.commit().map(StateReport::Redis),
        }
    }

    /// The report of a run whose keys are not committed.
    pub fn unchanged(self) -> StateReport {
        match self {
            State::Disk(s) => StateReport::Disk(s.unchanged()),
            State::Redis(s) => StateReport::Redis(s.unchanged()),
        }
    }
}

impl StateReport {
    /// The `--stats` lines.
    pub fn human(&self) -> String {
        match self {
            StateReport::Disk(r) => r.human(),
            StateReport::Redis(r) => r.human(),
        }
    }

    /// The `"state"` object of `--stats-json`.
    pub fn json(&self) -> String {
        match self {
            StateReport::Disk(r) => r.json(),
            StateReport::Redis(r) => r.json(),
        }
    }
}

/// The seen-store of one `dedup` run.
pub struct DiskState {
    store: SeenStore,
    session: Arc<StoreSession>,
    readonly: bool,
    keys_before: u64,
    opened_in: Duration,
    /// Bytes the additions' buffer may take.
    buffer: usize,
}

/// Least and most memory for the keys a run adds, before they go to
/// temporary files in the store.
const MIN_BUFFER: u64 = 4 << 20;
const MAX_BUFFER: u64 = 64 << 20;

/// What a run did to its store (`--stats`, `--stats-json`).
pub struct DiskStateReport {
    dir: PathBuf,
    readonly: bool,
    keys_before: u64,
    session: SessionStats,
    commit: Option<CommitReport>,
    opened_in: Duration,
    commit_time: Duration,
    index_bytes: u64,
    buffer: usize,
}

impl DiskState {
    /// Opens (or makes, for writing) the store in `dir` for keys of
    /// `config`.
    pub fn open(
        dir: &Path,
        config: &KeyConfig,
        readonly: bool,
        memory_limit: Option<u64>,
        buffer: Option<usize>,
    ) -> anyhow::Result<Self> {
        let started = Instant::now();
        let mut store = if readonly {
            SeenStore::open_for(dir, config, Access::ReadOnly)?
        } else {
            SeenStore::open_or_create(dir, config)?
        };
        // An eighth of the limit, within 4 to 64 MiB.
        let default = memory_limit.map_or(MAX_BUFFER, |l| (l / 8).clamp(MIN_BUFFER, MAX_BUFFER));
        let buffer = buffer.unwrap_or(usize::try_from(default).unwrap_or(usize::MAX));
        store.set_buffer_bytes(buffer);
        let session = store.session(!readonly);
        Ok(Self {
            keys_before: store.len(),
            store,
            session,
            readonly,
            opened_in: started.elapsed(),
            buffer,
        })
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        self.store.dir()
    }

    /// True when the run's new keys are committed at its end (not
    /// read-only).
    pub fn commits(&self) -> bool {
        !self.readonly
    }

    /// The store as the run's prior set.
    pub fn prior(&self) -> Arc<dyn PriorKeys> {
        self.session.clone()
    }

    /// The run's memory limit once the store's index and the additions'
    /// buffer are taken out.
    pub fn memory_limit(&self, limit: Option<u64>) -> Option<u64> {
        let taken = self.store.info().index_bytes + self.buffer as u64;
        limit.map(|l| l.saturating_sub(taken))
    }

    /// Commits the run's new keys.
    pub fn commit(mut self) -> anyhow::Result<DiskStateReport> {
        let started = Instant::now();
        let commit = match self.session.take_additions() {
            Some(additions) => Some(self.store.commit(additions).map_err(|e| {
                let what = if e.committed() {
                    "the output is complete and its new keys were added to the store, but not \
                     durably"
                } else {
                    "the output is complete, but its new keys were not added to the store (a \
                     next run prints them again)"
                };
                anyhow::Error::new(e).context(what)
            })?),
            None => None,
        };
        let mut report = self.report();
        report.commit = commit;
        report.commit_time = started.elapsed();
        Ok(report)
    }

    /// The report of a run whose keys are not committed.
    pub fn unchanged(self) -> DiskStateReport {
        self.report()
    }

    fn report(&self) -> DiskStateReport {
        DiskStateReport {
            dir: self.store.dir().to_owned(),
            readonly: self.readonly,
            keys_before: self.keys_before,
            session: self.session.stats(),
            commit: None,
            opened_in: self.opened_in,
            commit_time: Duration::ZERO,
            index_bytes: self.store.info().index_bytes,
            buffer: self.buffer,
        }
    }
}

impl DiskStateReport {
    /// Keys in the store after the run.
    fn keys_after(&self) -> u64 {
        self.commit.as_ref().map_or(self.keys_before, |c| c.keys)
    }

    /// The `--stats` lines.
    pub fn human(&self) -> String {
        let s = &self.session;
        let what = match (&self.commit, self.readonly) {
            (_, true) => "read-only, nothing added".to_owned(),
            (Some(c), _) if c.added > 0 => format!(
                "{} added in commit {} ({:.3} s{})",
                c.added,
                c.commit,
                self.commit_time.as_secs_f64(),
                if c.merged_runs > 0 {
                    format!(", {} runs merged", c.merged_runs)
                } else {
                    String::new()
                }
            ),
            (Some(_), _) => "nothing new to add".to_owned(),
            (None, _) => "not committed".to_owned(),
        };
        format!(
            "urikey: state {}: {} keys before, {} after; {} first-seen keys looked up, {} \
             known ({:.3} s summed over threads); {what}\n\
             urikey: state: opened in {:.3} s, index {:.1} MiB in memory\n",
            self.dir.display(),
            self.keys_before,
            self.keys_after(),
            s.lookups,
            s.known,
            s.lookup_time.as_secs_f64(),
            self.opened_in.as_secs_f64(),
            self.index_bytes as f64 / (1u64 << 20) as f64,
        )
    }

    /// The `"state"` object of `--stats-json`.
    pub fn json(&self) -> String {
        let c = self.commit.as_ref();
        format!(
            "{{\"dir\": {}, \"readonly\": {}, \"keys_before\": {}, \"keys_after\": {}, \
             \"lookups\": {}, \"known\": {}, \"added\": {}, \"commit\": {}, \
             \"merged_runs\": {}, \"lookup_seconds\": {:.6}, \"commit_seconds\": {:.6}, \
             \"open_seconds\": {:.6}, \"index_bytes\": {}, \"buffer_bytes\": {}}}",
            super::json::string(&self.dir.display().to_string()),
            self.readonly,
            self.keys_before,
            self.keys_after(),
            self.session.lookups,
            self.session.known,
            c.map_or(0, |c| c.added),
            c.map_or("null".to_owned(), |c| c.commit.to_string()),
            c.map_or(0, |c| c.merged_runs),
            self.session.lookup_time.as_secs_f64(),
            self.commit_time.as_secs_f64(),
            self.opened_in.as_secs_f64(),
            self.index_bytes,
            self.buffer,
        )
    }
}

/// `urikey state ...`.
#[derive(clap::Subcommand, Debug)]
pub enum StateCommand {
    /// Make an empty seen-store for a key configuration (dedup --state
    /// makes one too, with the run's options).
    Init(InitArgs),
    /// Show a store's keys, size, configuration, runs and commits.
    Info(InfoArgs),
    /// Check every checksum of a store, and that its runs are sorted and
    /// disjoint (exit 1 when a problem is found).
    Verify(DirArgs),
    /// Merge a store's runs into one.
    Compact(DirArgs),
    /// Add the keys of other stores (the same configuration: parallel
    /// crawlers) to a store.
    Merge(MergeArgs),
    /// Write a store's fingerprints, ascending: 32 hex digits a line, or
    /// `fp_hi, fp_lo` (signed 64-bit halves, as urikey.spark's `with_keys`
    /// columns) as CSV or Parquet.
    Export(ExportArgs),
    /// Grow a Redis set past its plan (while clients write), so that its
    /// buckets stay compact.
    Grow(GrowArgs),
}

/// `state grow`.
#[derive(clap::Args, Debug)]
pub struct GrowArgs {
    /// The set's URL (`redis://HOST:PORT/DB?name=NAME`).
    pub url: String,
    /// The keys the set is to hold (at least one level deeper than now).
    #[arg(long, value_name = "N")]
    pub expected_keys: u64,
}

/// `state init`.
#[derive(clap::Args, Debug)]
pub struct InitArgs {
    /// The new store's directory (missing or empty), or a Redis set's URL
    /// (`redis://HOST:PORT/DB?name=NAME`, a new name).
    pub dir: PathBuf,

    /// A Redis set: the keys it is planned for (10 million by default;
    /// `state grow` grows it later).
    #[arg(long, value_name = "N")]
    pub expected_keys: Option<u64>,

    #[command(flatten)]
    pub norm: NormalizeOpts,

    /// The key configuration as one string instead (as `state info` shows
    /// it: `crawl +sort-query lenient`, `compat=w3lib`).
    #[arg(
        long,
        value_name = "CONFIG",
        conflicts_with_all = ["profile", "with", "without", "lenient", "key", "compat"]
    )]
    pub config: Option<String>,
}

/// `state info`.
#[derive(clap::Args, Debug)]
pub struct InfoArgs {
    /// The store's directory, or a Redis set's URL.
    pub dir: PathBuf,

    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// A command on one store.
#[derive(clap::Args, Debug)]
pub struct DirArgs {
    /// The store's directory.
    pub dir: PathBuf,
}

/// `state merge`.
#[derive(clap::Args, Debug)]
pub struct MergeArgs {
    /// The store to add to, or a Redis set's URL.
    pub dir: PathBuf,
    /// The stores (or Redis sets) whose keys are added (left unchanged).
    #[arg(required = true)]
    pub others: Vec<PathBuf>,
}

/// What `state export` writes.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// 32 lower-case hex digits a line (what `--key hash` prints).
    Hex,
    /// `fp_hi,fp_lo` with a header line: the halves as signed 64-bit
    /// integers (Spark's bigint).
    Csv,
    /// Parquet (zstd): the same halves in required INT64 columns `fp_hi`
    /// and `fp_lo`, row groups of 2^20 keys, the store's key configuration
    /// in the footer (`urikey.config`, `urikey.identity`).
    Parquet,
}

/// `state export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// The store's directory, or a Redis set's URL.
    pub dir: PathBuf,
    /// The format.
    #[arg(long, value_enum, default_value = "hex")]
    pub format: ExportFormat,
    /// Write to FILE (`-`: stdout).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Runs `urikey state ...`.
pub fn run(cmd: StateCommand) -> anyhow::Result<Exit> {
    match cmd {
        StateCommand::Init(a) => init(a),
        StateCommand::Info(a) => info(a),
        StateCommand::Verify(a) => verify(&a.dir),
        StateCommand::Compact(a) => {
            let mut store = SeenStore::open(&a.dir, Access::Write)?;
            let r = store.compact()?;
            say_raw(&if r.merged_runs == 0 {
                format!(
                    "urikey: {}: nothing to merge ({} keys in {}), commit {}\n",
                    a.dir.display(),
                    r.keys,
                    plural(store.info().runs.len() as u64, "run"),
                    r.commit
                )
            } else {
                format!(
                    "urikey: {}: {} runs merged into one, {} keys, commit {}\n",
                    a.dir.display(),
                    r.merged_runs,
                    r.keys,
                    r.commit
                )
            });
            Ok(Exit::Ok)
        }
        StateCommand::Grow(a) => redis_state::grow_set(&a.url, a.expected_keys),
        StateCommand::Merge(a)
            if std::iter::once(&a.dir)
                .chain(&a.others)
                .any(|p| p.to_str().is_some_and(is_redis_url)) =>
        {
            let others: Vec<&str> = a.others.iter().filter_map(|p| p.to_str()).collect();
            redis_state::merge(a.dir.to_str().unwrap_or(""), &others)
        }
        StateCommand::Merge(a) => {
            let mut store = SeenStore::open(&a.dir, Access::Write)?;
            for other in &a.others {
                let o = SeenStore::open(other, Access::ReadOnly)?;
                let r = store.merge_from(&o)?;
                say_raw(&format!(
                    "urikey: {}: {} keys added from {} ({} keys), {} keys, commit {}\n",
                    a.dir.display(),
                    r.added,
                    other.display(),
                    o.len(),
                    r.keys,
                    r.commit
                ));
            }
            Ok(Exit::Ok)
        }
        StateCommand::Export(a) => export(a),
    }
}

fn init(a: InitArgs) -> anyhow::Result<Exit> {
    let config: KeyConfig = match &a.config {
        Some(c) => c.parse()?,
        None => a.norm.config()?,
    };
    config.validate()?;
    if let Some(url) = a.dir.to_str().filter(|s| is_redis_url(s)) {
        return redis_state::init(url, &config, a.expected_keys);
    }
    if a.expected_keys.is_some() {
        bail!("--expected-keys plans a Redis set; a seen-store needs no plan");
    }
    SeenStore::create(&a.dir, &config)?;
    say_raw(&format!(
        "urikey: made seen-store {} for keys of `{config}`\n",
        a.dir.display()
    ));
    Ok(Exit::Ok)
}

fn info(a: InfoArgs) -> anyhow::Result<Exit> {
    if let Some(url) = a.dir.to_str().filter(|s| is_redis_url(s)) {
        return redis_state::info(url, a.json);
    }
    let store = SeenStore::open(&a.dir, Access::ReadOnly)?;
    let i = store.info();
    let mut out = String::new();
    if a.json {
        let runs: Vec<String> = i
            .runs
            .iter()
            .map(|r| {
                format!(
                    "{{\"name\": {}, \"keys\": {}, \"bytes\": {}}}",
                    super::json::string(&r.name),
                    r.keys,
                    r.bytes
                )
            })
            .collect();
        out.push_str(&format!(
            "{{\n  \"dir\": {},\n  \"keys\": {},\n  \"bytes\": {},\n  \"bytes_per_key\": {:.3},\n  \
             \"commits\": {},\n  \"config\": {},\n  \"identity\": {},\n  \"key_format\": {},\n  \
             \"key_version\": {},\n  \"index_bytes\": {},\n  \"locked_by\": {},\n  \
             \"runs\": [{}]\n}}\n",
            super::json::string(&a.dir.display().to_string()),
            i.keys,
            i.bytes,
            per_key(i.bytes, i.keys),
            i.commits,
            super::json::string(&i.config),
            super::json::string(i.identity.as_str()),
            super::json::string(&i.key_format),
            i.key_version,
            i.index_bytes,
            i.locked_by
                .as_deref()
                .map_or("null".to_owned(), super::json::string),
            runs.join(", ")
        ));
    } else {
        out.push_str(&format!(
            "store:       {}\nkeys:        {}\nbytes:       {} ({:.2} a key)\ncommits:     {}\n\
             config:      {}\nidentity:    {}\nkey format:  {} (recorded; fingerprints are of \
             the uri key)\nkey version: {}\nindex:       {} bytes in memory when open\n\
             writer:      {}\nruns:        {}\n",
            a.dir.display(),
            i.keys,
            i.bytes,
            per_key(i.bytes, i.keys),
            i.commits,
            i.config,
            i.identity,
            i.key_format,
            i.key_version,
            i.index_bytes,
            i.locked_by.as_deref().unwrap_or("none"),
            i.runs.len()
        ));
        for r in &i.runs {
            out.push_str(&format!(
                "  {}  {} keys  {} bytes\n",
                r.name, r.keys, r.bytes
            ));
        }
    }
    std::io::stdout()
        .write_all(out.as_bytes())
        .context("cannot write stdout")?;
    Ok(Exit::Ok)
}

/// `1 run`, `2 runs`.
fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn per_key(bytes: u64, keys: u64) -> f64 {
    if keys == 0 {
        0.0
    } else {
        bytes as f64 / keys as f64
    }
}

fn verify(dir: &Path) -> anyhow::Result<Exit> {
    // No store at all is a usage error (exit 2, as for `info` and `dedup`);
    // exit 1 is for damage found.
    urikey::engine::store::check_is_store(dir)?;
    let r = urikey::engine::store::verify(dir);
    let mut text = String::new();
    for p in &r.problems {
        text.push_str(&format!("urikey: problem: {p}\n"));
    }
    for n in &r.notes {
        text.push_str(&format!("urikey: note: {n}\n"));
    }
    if r.is_ok() {
        text.push_str(&format!(
            "urikey: {}: sound: {} in {}, {} blocks checked\n",
            dir.display(),
            plural(r.keys, "key"),
            plural(r.runs as u64, "run"),
            r.blocks
        ));
        say_raw(&text);
        Ok(Exit::Ok)
    } else {
        text.push_str(&format!(
            "urikey: {}: {} problem(s) found; restore the store from a copy, or rebuild it \
             from the inputs it was fed: {}\n",
            dir.display(),
            r.problems.len(),
            super::messages::rebuild("NEW", None)
        ));
        say_raw(&text);
        // Exit 1: the check ran and found damage.
        Ok(Exit::InvalidLines)
    }
}

/// What `state export` reads: a store, or a Redis set.
enum Source {
    Disk(SeenStore),
    Redis(String),
}

impl Source {
    /// Every fingerprint, ascending, passed to `each`.
    fn for_each(
        &self,
        name: &Path,
        each: impl FnMut(u128) -> std::io::Result<()>,
    ) -> anyhow::Result<u64> {
        match self {
            Source::Disk(store) => Ok(store.for_each(name, each)?),
            Source::Redis(url) => Ok(redis_state::for_each(url, name, each)?.0),
        }
    }
}

fn export(a: ExportArgs) -> anyhow::Result<Exit> {
    let source = match a.dir.to_str().filter(|s| is_redis_url(s)) {
        Some(url) => Source::Redis(url.to_owned()),
        None => Source::Disk(SeenStore::open(&a.dir, Access::ReadOnly)?),
    };
    let cleanup = Cleanup::default();
    cleanup.install();
    let mut sink = Sink::open(a.output.as_deref(), &cleanup)?;
    let name = PathBuf::from(sink.name());
    let cannot = || format!("cannot write {}", name.display());
    {
        let w = BufWriter::with_capacity(1 << 20, sink.writer());
        match a.format {
            ExportFormat::Hex | ExportFormat::Csv => export_text(&source, a.format, &name, w)?,
            ExportFormat::Parquet => {
                let metadata = match &source {
                    Source::Disk(store) => {
                        let info = store.info();
                        vec![
                            ("urikey.config".to_owned(), info.config),
                            ("urikey.identity".to_owned(), info.identity.to_string()),
                            (
                                "urikey.key_version".to_owned(),
                                info.key_version.to_string(),
                            ),
                        ]
                    }
                    Source::Redis(url) => {
                        let m = redis_state::meta(url)?;
                        vec![
                            ("urikey.config".to_owned(), m.config.clone()),
                            ("urikey.identity".to_owned(), m.identity.to_string()),
                            ("urikey.key_version".to_owned(), m.key_version.to_string()),
                            ("urikey.compared_bits".to_owned(), (m.base + 64).to_string()),
                        ]
                    }
                };
                let mut out =
                    FingerprintWriter::new(w, metadata, ROW_GROUP_ROWS).with_context(cannot)?;
                source.for_each(&name, |fp| out.push(fp))?;
                out.finish()
                    .and_then(|mut w| w.flush())
                    .with_context(cannot)?;
            }
        }
    }
    sink.commit()?;
    if super::output::interrupted() {
        bail!("interrupted");
    }
    Ok(Exit::Ok)
}

/// Hex or CSV lines, one a fingerprint.
fn export_text(
    store: &Source,
    format: ExportFormat,
    name: &Path,
    mut w: impl Write,
) -> anyhow::Result<()> {
    if format == ExportFormat::Csv {
        w.write_all(b"fp_hi,fp_lo\n")
            .with_context(|| format!("cannot write {}", name.display()))?;
    }
    let mut line = Vec::with_capacity(48);
    store.for_each(name, |fp| {
        line.clear();
        if format == ExportFormat::Csv {
            let (hi, lo) = ((fp >> 64) as u64 as i64, fp as u64 as i64);
            line.extend_from_slice(format!("{hi},{lo}\n").as_bytes());
        } else {
            line.extend_from_slice(format!("{fp:032x}\n").as_bytes());
        }
        w.write_all(&line)
    })?;
    w.flush()
        .with_context(|| format!("cannot write {}", name.display()))
}
