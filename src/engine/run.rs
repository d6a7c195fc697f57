//! The pipeline: a reader thread cuts inputs into chunks, the calling
//! thread drives phases 1 and 2 on a local rayon pool batch by batch, and
//! a writer thread writes the selected lines of each batch in order while
//! the next batch is processed, then hands the batch back for reuse.

use std::io::{self, Write};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::uri::key::KeyScratch;

use super::batch::{ChunkState, Render, ScanConfig, ShardState, UniqueSpan, Uniques};
use super::chunk::{Chunk, ChunkShape, Limits, SliceChunker, StreamChunker};
use super::counted;
use super::error::Error;
use super::formats::records::{Lines, RecordReader};
use super::formats::{self, Format, InputFormat};
use super::fpset;
use super::input::{self, Input, SharedBytes, Source};
use super::lines;
use super::memory;
use super::observe::{Observer, Progress, Warning};
use super::out_buf::OutBuf;
use super::projection::Projection;
use super::shard::{SHARDS, SHARD_BITS};
use super::share::{self, share_out};
use super::spill::{
    self, EntryWriter, Partitions, SpillDir, SpillTuning, SpillWriter, Spilled, PARTITION_BUFFER,
    RESOLVE_BYTES_PER_KEY,
};
use super::stats::Stats;
use super::{Config, Emit, Field, InvalidLine, Select, MAX_CHUNK_BYTES, MAX_THREADS};

/// The writer thread writes its gathered output in pieces of at least this
/// many bytes (one chunk's output can take it past that).
const WRITE_BYTES: usize = 1 << 20;

/// Write buffer of the lines file once a run spills.
const LINES_BUFFER: usize = 1 << 20;

/// Fewest distinct keys a partition may hold while it is resolved,
/// however low the memory limit (4 MiB).
const MIN_PARTITION_KEYS: usize = 1 << 16;

/// Deduplicates `inputs` (one logical stream, in order) into `output`.
///
/// Every invalid line is passed to `observer`, in input order, and the
/// run goes on; the observer also hears the progress after each batch and
/// can stop the run. Returns the run's statistics once the output is flushed.
///
/// # Errors
/// [`Error::Open`] before anything is written when an input path cannot be
/// opened; [`Error::Read`] when an input fails midway (the output is then
/// incomplete); [`Error::Write`] when the output cannot be written;
/// [`Error::Config`] for unusable settings; [`Error::Interrupted`] when
/// the observer asked to stop.
pub fn run(
    config: &Config,
    inputs: Vec<Input>,
    output: &mut (dyn Write + Send),
    observer: &mut dyn Observer,
) -> Result<Stats, Error> {
    let started = Instant::now();
    check_config(config)?;
    for input in &inputs {
        if let Input::Path(path) = input {
            input::check_path(path)?;
        }
    }
    let names: Vec<String> = inputs.iter().map(Input::name).collect();
    let total: Option<u64> = inputs.iter().map(Input::size_hint).sum();
    let threads = if config.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        config.threads
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("urikey-worker-{i}"))
        .build()
        .map_err(|e| Error::Config(format!("cannot start worker threads: {e}")))?;
    let batch_len = (threads * 4).max(8);
    let limit = config.memory_limit.or_else(memory::default_limit);
    let limits = Limits {
        chunk_size: chunk_size_under(config.chunk_size, limit, batch_len),
        max_line_bytes: config.max_line_bytes,
    };
    let raw_read = Arc::new(AtomicU64::new(0));

    let mut driver = Driver::new(config, &names, threads, &pool);
    driver.limit(limit, limits.chunk_size, batch_len);
    driver.project(total, Arc::clone(&raw_read));
    let render = driver.render();
    let result = std::thread::scope(|scope| {
        // A batch is handed over when the driver asks for it: the reader
        // cuts at most one batch ahead.
        let (chunk_tx, chunk_rx) = mpsc::sync_channel(0);
        let reader_raw = Arc::clone(&raw_read);
        let shape = ChunkShape {
            chunk_size: limits.chunk_size,
            batch_len,
            threads,
        };
        let format = &config.format;
        let field = config.field;
        spawn_named(scope, "urikey-reader", move || {
            read_inputs(
                inputs,
                format,
                field,
                threads,
                limits,
                shape,
                &reader_raw,
                &chunk_tx,
            );
        })?;
        // A batch is handed over only when the writer is free, so at most
        // two batches exist: one being written, one being processed.
        let (out_tx, out_rx) = mpsc::sync_channel::<ToWriter>(0);
        let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<ChunkState>>();
        let render = &render;
        let pool = &pool;
        let writer = spawn_named(scope, "urikey-writer", move || {
            write_all(output, &out_rx, &recycle_tx, render, pool)
        })?;

        let driven = driver.drive(
            &chunk_rx,
            batch_len,
            &out_tx,
            &recycle_rx,
            observer,
            |lines| Progress {
                bytes_read: raw_read.load(Ordering::Relaxed),
                total_bytes: total,
                lines,
                elapsed: started.elapsed(),
            },
        );
        drop(chunk_rx);
        drop(out_tx);
        let joined = Instant::now();
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(Error::Write(io::Error::other("writer thread panicked"))));
        let last_writes = joined.elapsed();
        // A write failure explains a failed send, so it comes first.
        let new = written?;
        let (mut stats, undecided) = driven?;
        stats.phases.writer_wait += last_writes;
        // Undecided lines were counted as unique; the writer found which.
        stats.unique -= undecided - new.min(undecided);
        stats.duplicates += undecided - new.min(undecided);
        Ok(stats)
    });
    // Freeing the seen-set of a large run takes seconds (--exact: one
    // allocation per key): the wall time includes it.
    drop(driver);
    drop(pool);
    let mut stats = result?;
    stats.wall = started.elapsed();
    Ok(stats)
}

/// Starts a thread of the run under `name` (what `top -H` and profilers
/// show).
fn spawn_named<'scope, T: Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    name: &str,
    f: impl FnOnce() -> T + Send + 'scope,
) -> Result<std::thread::ScopedJoinHandle<'scope, T>, Error> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn_scoped(scope, f)
        .map_err(|e| Error::Config(format!("cannot start thread {name}: {e}")))
}

/// Chunks in flight at most: two batches and the one the reader cuts
/// ahead.
fn chunks_in_flight(batch_len: usize) -> u64 {
    3 * batch_len as u64
}

/// Memory a chunk in flight takes with its line records, shard buckets
/// and key arena, per byte of chunk: about 2 (the records alone take 52
/// bytes per line).
const CHUNK_COST: u64 = 2;

/// The shards, with their indexes, in the order phase 2 takes them, longest
/// task first, so that no worker is left with a long one while the others
/// wait: those whose table grows in this batch, the largest first (at 8 GiB
/// a growth took 5 to 76 ms, a shard's inserts of one batch about half a
/// millisecond), then the rest by entries.
fn longest_first<'s>(
    shards: &'s mut [ShardState],
    works: &[ChunkState],
) -> Vec<(usize, &'s mut ShardState)> {
    let mut order: Vec<(usize, &mut ShardState)> = shards.iter_mut().enumerate().collect();
    order.sort_by_cached_key(|(s, shard)| {
        let more: usize = works.iter().map(|w| w.bucket_len(*s)).sum();
        let after = shard.bytes_after(more);
        let grows = after > shard.bytes_after(0);
        std::cmp::Reverse((grows, if grows { after } else { 0 }, more))
    });
    order
}

/// What the process takes besides chunks, buffers and the seen-set (code,
/// thread stacks, allocator).
const BASE_BYTES: u64 = 8 << 20;

/// The chunk size for a run under `limit`: `chunk_size`, or less when the
/// chunks in flight would take more than a third of the limit plus
/// [`memory::SLACK`] (so that `--memory-limit 0` still runs within 64 MiB),
/// but never below 64 KiB.
fn chunk_size_under(chunk_size: usize, limit: Option<u64>, batch_len: usize) -> usize {
    let Some(limit) = limit else {
        return chunk_size;
    };
    let share = (limit.saturating_add(memory::SLACK)) / 3;
    let most = share / (chunks_in_flight(batch_len) * CHUNK_COST);
    chunk_size.min(usize::try_from(most).unwrap_or(usize::MAX).max(64 << 10))
}

fn check_config(config: &Config) -> Result<(), Error> {
    if config.chunk_size == 0 || config.chunk_size > MAX_CHUNK_BYTES {
        return Err(Error::Config(format!(
            "chunk size must be between 1 and {MAX_CHUNK_BYTES} bytes"
        )));
    }
    if config.max_line_bytes == 0 || config.max_line_bytes > MAX_CHUNK_BYTES {
        return Err(Error::Config(format!(
            "line limit must be between 1 and {MAX_CHUNK_BYTES} bytes"
        )));
    }
    if config.threads > MAX_THREADS {
        return Err(Error::Config(format!(
            "threads must be at most {MAX_THREADS} (0: one per core)"
        )));
    }
    Ok(())
}

/// The reader thread: every input in order, cut into chunks, sent to the
/// driver a batch at a time (the last one may be shorter).
#[allow(clippy::too_many_arguments)]
fn read_inputs(
    inputs: Vec<Input>,
    format: &InputFormat,
    field: Option<Field>,
    threads: usize,
    limits: Limits,
    shape: ChunkShape,
    raw_read: &Arc<AtomicU64>,
    tx: &SyncSender<Result<Vec<Chunk>, Error>>,
) {
    let mut out = BatchSender {
        tx,
        batch: Vec::with_capacity(shape.batch_len),
        shape,
    };
    for (index, input) in inputs.into_iter().enumerate() {
        let opened = match formats::records::open(input, format, field, raw_read) {
            Ok(s) => s,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        let name = opened.name;
        let extract = opened.extract;
        match (opened.format, opened.source) {
            (Format::Warc | Format::Wat, source) => {
                let (reader, compression) = formats::records::into_reader(source);
                let mut records = RecordReader::new(opened.format, reader, format);
                let mut lines = Lines::new(index, formats::records::record_extract(opened.format));
                loop {
                    let more = records.next_record(&mut |item| lines.push(item));
                    if lines.len() >= out.next_size() || !matches!(more, Ok(true)) {
                        if let Some(chunk) = lines.take(records.offset()) {
                            if !out.push(chunk) {
                                return;
                            }
                        }
                    }
                    match more {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(e) => {
                            out.flush();
                            let _ =
                                tx.send(Err(records.error(e, &name, opened.format, compression)));
                            return;
                        }
                    }
                }
            }
            (Format::Parquet, source) => {
                if !read_parquet(&name, index, source, format, &mut out, threads) {
                    return;
                }
            }
            (_, Source::Slice(bytes)) => {
                let mut chunker = SliceChunker::new(bytes, index, limits);
                chunker.extract = extract;
                loop {
                    chunker.set_chunk_size(out.next_size());
                    let Some((chunk, consumed)) = chunker.next_chunk() else {
                        break;
                    };
                    raw_read.fetch_add(consumed, Ordering::Relaxed);
                    if !out.push(chunk) {
                        return;
                    }
                }
            }
            (
                _,
                Source::Stream {
                    reader,
                    compression,
                },
            ) => {
                let mut chunker = StreamChunker::new(reader, index, limits);
                chunker.extract = extract;
                loop {
                    chunker.set_chunk_size(out.next_size());
                    match chunker.next_chunk() {
                        Ok(Some(chunk)) => {
                            if !out.push(chunk) {
                                return;
                            }
                        }
                        Ok(None) => break,
                        Err(source) => {
                            out.flush();
                            let _ = tx.send(Err(Error::Read {
                                path: name,
                                compression,
                                offset: chunker.position(),
                                source,
                            }));
                            return;
                        }
                    }
                }
            }
        }
    }
    out.finish();
}

/// Groups the reader's chunks into batches. One message a batch rather
/// than one a chunk: with a channel of eight chunks the reader blocked on
/// nearly every send (1,700 context switches on the 1 GiB crawl dump, half
/// of them on the channel's own lock), and each chunk the driver took woke
/// it again. Every batch but the last is full, so the chunks of the one
/// being filled say where the next chunk falls in the [`ChunkShape`].
struct BatchSender<'a> {
    tx: &'a SyncSender<Result<Vec<Chunk>, Error>>,
    batch: Vec<Chunk>,
    shape: ChunkShape,
}

impl BatchSender<'_> {
    /// The size to cut the next chunk at.
    fn next_size(&self) -> usize {
        self.shape.size(self.batch.len())
    }

    /// Adds `chunk`, sending the batch when it is full. False when the
    /// driver is gone.
    fn push(&mut self, chunk: Chunk) -> bool {
        self.batch.push(chunk);
        if self.batch.len() < self.shape.batch_len {
            return true;
        }
        let full = std::mem::replace(&mut self.batch, Vec::with_capacity(self.shape.batch_len));
        self.tx.send(Ok(full)).is_ok()
    }

    /// Sends the last, shorter batch, if any.
    fn finish(mut self) {
        self.flush();
    }

    /// Sends the batch being filled, if any (before an error, so that
    /// the lines before it are written).
    fn flush(&mut self) {
        if !self.batch.is_empty() {
            let batch = std::mem::take(&mut self.batch);
            let _ = self.tx.send(Ok(batch));
        }
    }
}

/// Reads a Parquet input's column into the batches, row groups on
/// `threads` threads; false when the run is to stop (the driver is gone,
/// or an error was sent).
fn read_parquet(
    name: &str,
    index: usize,
    source: Source,
    format: &InputFormat,
    out: &mut BatchSender<'_>,
    threads: usize,
) -> bool {
    #[cfg(feature = "parquet")]
    {
        let bytes = match formats::records::into_bytes(source) {
            Ok(b) => b,
            Err(source) => {
                let _ = out.tx.send(Err(Error::Read {
                    path: name.to_owned(),
                    compression: None,
                    offset: 0,
                    source,
                }));
                return false;
            }
        };
        let mut lines = Lines::new(index, formats::Extract::Line);
        let mut alive = true;
        let read =
            formats::parquet::for_each_value(name, bytes, &format.column, threads, &mut |item| {
                lines.push(item);
                if lines.len() >= out.next_size() {
                    if let Some(chunk) = lines.take(0) {
                        alive = out.push(chunk);
                    }
                }
                alive
            });
        if let Some(chunk) = lines.take(0) {
            alive = alive && out.push(chunk);
        }
        if let Err(e) = read {
            out.flush();
            let _ = out.tx.send(Err(e));
            return false;
        }
        alive
    }
    #[cfg(not(feature = "parquet"))]
    {
        let _ = (source, format, threads, index);
        out.flush();
        let _ = out.tx.send(Err(Error::Config(format!(
            "{name} is a Parquet file; this build reads no Parquet (feature `parquet`)"
        ))));
        false
    }
}

/// What the writer thread is sent, in output order.
enum ToWriter {
    /// A processed batch: its selected lines are written, then the batch
    /// is sent back for reuse.
    Batch(Vec<ChunkState>),
    /// The first-seen lines and their counts, to write (`--count`).
    /// Each shard's counts, by id.
    Counts {
        uniques: Uniques,
        counts: Vec<Vec<u64>>,
    },
    /// The run spills from now on: the lines file to append to.
    StartSpill(SpillWriter),
    /// A batch processed after the run spilled: its lines that may be
    /// printed go to the lines file.
    SpillBatch(Vec<ChunkState>),
    /// The input has ended: resolve the partitions and print the selected
    /// lines of the lines file.
    Resolve {
        dir: Arc<SpillDir>,
        partitions: Vec<PathBuf>,
        /// Sequence numbers of the lines since the run spilled.
        seqs: Range<u64>,
        tuning: SpillTuning,
    },
}

/// The writer thread: batches and buffers in order, then a flush. The
/// selected lines are gathered into one buffer, written whenever it holds
/// [`WRITE_BYTES`] or more (and at the end). Once the run spills, batches
/// go to the lines file, and the output is written when the input has
/// ended. Returns the number of keys first seen after the run spilled.
fn write_all(
    output: &mut (dyn Write + Send),
    rx: &Receiver<ToWriter>,
    recycle: &mpsc::Sender<Vec<ChunkState>>,
    render: &Render<'_>,
    pool: &rayon::ThreadPool,
) -> Result<u64, Error> {
    let mut pending = OutBuf::with_capacity(2 * WRITE_BYTES);
    let mut lines: Option<SpillWriter> = None;
    let mut entries: Vec<u8> = Vec::new();
    let mut entry_writer = EntryWriter::default();
    // Each input's shared buffer (a mapped file), kept for the lines file's
    // slice entries.
    let mut maps: Vec<Option<SharedBytes>> = Vec::new();
    let mut new = 0u64;
    for msg in rx {
        match msg {
            ToWriter::Counts { uniques, counts } => {
                let threads = share::threads(Some(pool));
                counted::write_counted(
                    &uniques,
                    &counts,
                    &mut pending,
                    output,
                    WRITE_BYTES,
                    threads,
                )
                .map_err(Error::Write)?;
            }
            ToWriter::StartSpill(file) => lines = Some(file),
            ToWriter::SpillBatch(mut works) => {
                // What earlier batches selected goes out first.
                pending.write_all(output).map_err(Error::Write)?;
                for work in &mut works {
                    if let Some((chunk, (all, _))) =
                        work.chunk.as_ref().and_then(|c| Some((c, c.shared()?)))
                    {
                        if maps.len() <= chunk.input {
                            maps.resize(chunk.input + 1, None);
                        }
                        maps[chunk.input].get_or_insert_with(|| all.clone());
                    }
                    entries.clear();
                    work.spill_lines(render, &mut entry_writer, &mut entries);
                    if let Some(file) = &mut lines {
                        file.write(&entries)?;
                    }
                }
                release_chunks(&mut works);
                let _ = recycle.send(works);
            }
            ToWriter::Resolve {
                dir,
                partitions,
                seqs,
                tuning,
            } => {
                pending.write_all(output).map_err(Error::Write)?;
                if let Some(file) = lines.take() {
                    let spilled = Spilled {
                        partitions,
                        lines: file.finish()?,
                        seqs,
                        maps: std::mem::take(&mut maps),
                    };
                    let select = render.select;
                    new = spill::finish(&dir, spilled, select, tuning, output, pool)?;
                }
            }
            ToWriter::Batch(mut works) => {
                for work in &mut works {
                    work.gather_selected(render, pending.append());
                    if pending.len() >= WRITE_BYTES {
                        pending.write_some(output).map_err(Error::Write)?;
                    }
                }
                release_chunks(&mut works);
                let _ = recycle.send(works);
            }
        }
    }
    pending.write_all(output).map_err(Error::Write)?;
    output.flush().map_err(Error::Write)?;
    Ok(new)
}

/// Drops the chunks of a written batch (its lines were copied, or their
/// places noted for a spilled run, whose mapped inputs stay alive). Their
/// mapped pages are released once per input, through the input's
/// last chunk of the batch: a release covers every byte before its range
/// that is not released yet (see [`SharedBytes::release`]), and each
/// release flushes the other core's TLB (an interprocessor interrupt,
/// slow in a virtual machine), so one per chunk cost N times that.
fn release_chunks(works: &mut [ChunkState]) {
    let mut chunks = works.iter_mut().filter_map(|w| w.chunk.take()).peekable();
    while let Some(chunk) = chunks.next() {
        if chunks.peek().is_none_or(|next| next.input != chunk.input) {
            chunk.release();
        }
    }
}

/// A run that spills: the directory, each shard's partition files, and
/// the sequence number of the first line since it spilled.
struct Spilling {
    dir: Arc<SpillDir>,
    parts: Vec<Partitions>,
    base: u64,
}

/// The state of the calling thread between batches.
struct Driver<'a> {
    config: &'a Config,
    names: &'a [String],
    pool: &'a rayon::ThreadPool,
    shards: Vec<ShardState>,
    scratches: Vec<Mutex<KeyScratch>>,
    /// Lines seen so far in each input.
    lines_in: Vec<u64>,
    /// End offset of the last chunk of each input.
    input_end: Vec<u64>,
    spare: Vec<ChunkState>,
    uniques: Uniques,
    stats: Stats,
    /// Bytes the seen-set may take before the run spills (`None`: no limit).
    budget: Option<u64>,
    tuning: SpillTuning,
    /// Valid lines so far (the next sequence number).
    seq: u64,
    /// Lines left undecided since the run spilled.
    undecided: u64,
    spilling: Option<Spilling>,
    /// The final number of distinct keys, projected from the input read.
    projection: Projection,
    /// Bytes of input read so far (by the reader thread, a few chunks
    /// ahead of the batch in hand).
    raw_read: Arc<AtomicU64>,
}

impl<'a> Driver<'a> {
    fn new(
        config: &'a Config,
        names: &'a [String],
        threads: usize,
        pool: &'a rayon::ThreadPool,
    ) -> Self {
        let counting = config.select == Select::Counts;
        Self {
            config,
            names,
            pool,
            shards: (0..SHARDS)
                .map(|s| ShardState::new(s, config.exact, counting))
                .collect(),
            scratches: (0..threads)
                .map(|_| Mutex::new(KeyScratch::default()))
                .collect(),
            lines_in: vec![0; names.len()],
            input_end: vec![0; names.len()],
            spare: Vec::new(),
            uniques: Uniques::default(),
            stats: Stats {
                threads,
                ..Stats::default()
            },
            budget: None,
            tuning: SpillTuning {
                partition_keys: MIN_PARTITION_KEYS,
                fail_after_bytes: None,
                exact: config.exact,
            },
            seq: 0,
            undecided: 0,
            spilling: None,
            projection: Projection::new(None),
            raw_read: Arc::default(),
        }
    }

    /// Projects the run's final number of distinct keys from `raw_read`,
    /// the bytes read of inputs of `total` bytes (`None`: unknown, and the
    /// seen-set grows step by step).
    fn project(&mut self, total: Option<u64>, raw_read: Arc<AtomicU64>) {
        self.projection = Projection::new(total);
        self.raw_read = raw_read;
    }

    /// The number of distinct keys each shard is expected to end with: its
    /// share of the projected final count (0 when there is none). No more:
    /// sizes come in steps of 1.3, so a margin of a few percent would take
    /// some shards a whole step further. A shard that ends a little past its
    /// expected size grows once more, as it would have without one.
    fn expected_per_shard(&mut self) -> usize {
        let read = self.raw_read.load(Ordering::Relaxed);
        let projected = self.projection.update(read, self.stats.unique);
        projected.map_or(0, |p| {
            usize::try_from(p / SHARDS as u64).unwrap_or(usize::MAX)
        })
    }

    /// Tells every shard's set to expect `keys` distinct keys.
    fn expect_keys(&mut self, keys: usize) {
        for shard in &mut self.shards {
            shard.expect(keys);
        }
    }

    /// Tells the sets the projected size to grow to, if every shard at that
    /// size fits the budget (with the lines of `batch`, for counts). If not,
    /// the run will likely spill; until it must, the sets grow by steps,
    /// which keeps them as small as they can be (with a limit just above
    /// what the steps reach, sets sized by the projection would have
    /// spilled where steps did not).
    fn expect_projected(&mut self, batch: &[ChunkState]) {
        let expected = self.expected_per_shard();
        self.expect_keys(expected);
        if expected > 0 && !self.fits_budget(batch, |_, shard| expected.saturating_sub(shard.len()))
        {
            self.expect_keys(0);
        }
    }

    /// Sets the seen-set's budget from the memory limit: the limit less
    /// what the batches of `batch_len` chunks in flight, the spill buffers
    /// and each worker's growing table's set-aside take.
    fn limit(&mut self, limit: Option<u64>, chunk_size: usize, batch_len: usize) {
        let chunks = chunks_in_flight(batch_len) * chunk_size as u64 * CHUNK_COST;
        let buffers = (256 * PARTITION_BUFFER + LINES_BUFFER + 2 * WRITE_BYTES) as u64
            + self.stats.threads as u64 * fpset::REBUILD_ASIDE_BYTES as u64;
        self.budget = limit.map(|l| memory::budget(l, chunks + buffers + BASE_BYTES));
        self.tuning.partition_keys = self.partition_keys(0);
        #[cfg(feature = "testing")]
        {
            self.tuning.fail_after_bytes = self.config.spill_hooks.fail_after_bytes;
        }
    }

    /// Most distinct keys a partition may hold while it is resolved: the
    /// budget, less `taken` bytes, shared by the worker threads, which
    /// resolve partitions all at once.
    fn partition_keys(&self, taken: u64) -> usize {
        #[cfg(feature = "testing")]
        if let Some(k) = self.config.spill_hooks.partition_keys {
            return k;
        }
        let threads = self.pool.current_num_threads().max(1) as u64;
        let budget = self.budget.unwrap_or(u64::MAX).saturating_sub(taken);
        let keys = budget / RESOLVE_BYTES_PER_KEY as u64 / threads;
        usize::try_from(keys)
            .unwrap_or(usize::MAX)
            .max(MIN_PARTITION_KEYS)
    }

    /// True when the seen-set stays within its budget with `more(s, shard)`
    /// new keys in each shard `s` (every shard at its size after them), and
    /// with counts, the lines of `batch` kept.
    fn fits_budget(
        &self,
        batch: &[ChunkState],
        more: impl Fn(usize, &ShardState) -> usize,
    ) -> bool {
        #[cfg(feature = "testing")]
        if let Some(k) = self.config.spill_hooks.after_keys {
            if self.stats.unique >= k {
                return false;
            }
        }
        let Some(budget) = self.budget else {
            return true;
        };
        let mut total = 0usize;
        for (s, shard) in self.shards.iter().enumerate() {
            total = total.saturating_add(shard.bytes_after(more(s, shard)));
        }
        if self.config.select == Select::Counts {
            // At worst every line of the batch is new and copied.
            let bytes: usize = batch.iter().map(|w| w.bytes().len()).sum();
            let keys: usize = batch.iter().map(|w| w.valid() as usize).sum();
            let uniques = &self.uniques;
            total = total
                .saturating_add(memory::grown_capacity(
                    uniques.bytes.capacity(),
                    uniques.bytes.len().saturating_add(bytes),
                ))
                .saturating_add(
                    memory::grown_capacity(
                        uniques.spans.capacity(),
                        uniques.spans.len().saturating_add(keys),
                    )
                    .saturating_mul(size_of::<UniqueSpan>()),
                )
                .saturating_add(memory::grown_capacity(
                    uniques.shards.capacity(),
                    uniques.shards.len().saturating_add(keys),
                ));
        }
        total as u64 <= budget
    }

    /// Starts spilling: the directory, the partition files, and the lines
    /// file handed to the writer.
    fn start_spill(&mut self, out: &SyncSender<ToWriter>, base: u64) -> Result<(), Error> {
        let config = self.config;
        let parent = config.temp_dir.clone().unwrap_or_else(std::env::temp_dir);
        let dir = SpillDir::create(&parent, self.tuning.fail_after_bytes)?;
        let parts = (0..SHARDS)
            .map(|_| Partitions::for_shard(&dir, SHARD_BITS))
            .collect();
        let lines = dir.create_file("lines", LINES_BUFFER)?;
        // A closed channel means the writer failed; its error is reported.
        let _ = hand_over(out, ToWriter::StartSpill(lines), &mut self.stats);
        self.spilling = Some(Spilling { dir, parts, base });
        Ok(())
    }

    /// At the end of a spilled run: the frozen set's counts written, the
    /// partitions closed, the set freed, and the writer told to resolve.
    fn finish_spill(&mut self, out: &SyncSender<ToWriter>) -> Result<(), Error> {
        let Some(spilling) = self.spilling.take() else {
            return Ok(());
        };
        if self.config.select == Select::Counts {
            self.write_counts(out);
        }
        let mut partitions = Vec::new();
        for parts in spilling.parts {
            partitions.extend(parts.finish()?);
        }
        for shard in &mut self.shards {
            shard.clear();
        }
        self.uniques = Uniques::default();
        let seqs = spilling.base..self.seq;
        let mut tuning = self.tuning;
        if self.config.select != Select::Counts {
            // The bitmap of selected lines takes its share of the budget.
            tuning.partition_keys = self.partition_keys(spill::bitmap_bytes(seqs.end - seqs.start));
        }
        let resolve = ToWriter::Resolve {
            dir: spilling.dir,
            partitions,
            seqs,
            tuning,
        };
        let _ = hand_over(out, resolve, &mut self.stats);
        Ok(())
    }

    /// What phase 3 needs.
    fn render(&self) -> Render<'a> {
        Render {
            emit: self.config.emit,
            select: self.config.select,
            field: self.config.field,
            keyer: &self.config.keyer,
        }
    }

    /// Runs all batches; returns the stats (without wall time).
    fn drive(
        &mut self,
        chunks: &Receiver<Result<Vec<Chunk>, Error>>,
        batch_len: usize,
        out: &SyncSender<ToWriter>,
        recycled: &Receiver<Vec<ChunkState>>,
        observer: &mut dyn Observer,
        progress: impl Fn(u64) -> Progress,
    ) -> Result<(Stats, u64), Error> {
        let mut batch: Vec<ChunkState> = Vec::with_capacity(batch_len);
        loop {
            let mut ended = false;
            while let Ok(mut back) = recycled.try_recv() {
                self.spare.append(&mut back);
            }
            let waited = Instant::now();
            let received = chunks.recv();
            self.stats.phases.input_wait += waited.elapsed();
            match received {
                Ok(cut) => {
                    for chunk in cut? {
                        let mut work = self.spare.pop().unwrap_or_default();
                        work.chunk = Some(chunk);
                        batch.push(work);
                    }
                }
                Err(_) => ended = true,
            }
            if !batch.is_empty() {
                self.process(&mut batch, observer, out)?;
                if self.spilling.is_some() {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(batch_len));
                    if hand_over(out, ToWriter::SpillBatch(full), &mut self.stats).is_err() {
                        return Ok((std::mem::take(&mut self.stats), self.undecided));
                    }
                } else if self.config.select == Select::Counts {
                    for mut work in batch.drain(..) {
                        if let Some(chunk) = work.chunk.take() {
                            chunk.release();
                        }
                        self.spare.push(work);
                    }
                } else {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(batch_len));
                    if hand_over(out, ToWriter::Batch(full), &mut self.stats).is_err() {
                        // The writer stopped; its error is reported.
                        return Ok((std::mem::take(&mut self.stats), self.undecided));
                    }
                }
                observer.progress(&progress(self.stats.lines));
                if observer.should_stop() {
                    return Err(Error::Interrupted);
                }
            }
            if ended {
                break;
            }
        }
        if self.spilling.is_some() {
            self.finish_spill(out)?;
            return Ok((std::mem::take(&mut self.stats), self.undecided));
        }
        debug_assert_eq!(
            self.stats.unique,
            self.shards.iter().map(|s| s.len() as u64).sum::<u64>(),
            "every new line adds exactly one key"
        );
        if self.config.select == Select::Counts {
            self.write_counts(out);
        }
        Ok((std::mem::take(&mut self.stats), self.undecided))
    }

    /// The three phases for one batch.
    fn process(
        &mut self,
        batch: &mut [ChunkState],
        observer: &mut dyn Observer,
        out: &SyncSender<ToWriter>,
    ) -> Result<(), Error> {
        let config = self.config;
        let keep_keys = config.exact || config.emit == Emit::Key;
        let scan = ScanConfig {
            keyer: &config.keyer,
            max_line_bytes: config.max_line_bytes,
            keep_keys,
        };
        let scratches = &self.scratches;
        let phase = Instant::now();
        share_out(
            Some(self.pool),
            batch.iter_mut().collect(),
            |thread, work| match scratches
                .get(thread % scratches.len().max(1))
                .map(Mutex::lock)
            {
                Some(Ok(mut scratch)) => work.scan(&scan, &mut scratch),
                _ => work.scan(&scan, &mut KeyScratch::default()),
            },
        );
        self.stats.phases.keys += phase.elapsed();
        self.account(batch, observer);
        if self.spilling.is_none() {
            self.expect_projected(batch);
            // Every shard at its size after all of its entries are new.
            if !self.fits_budget(batch, |s, _| batch.iter().map(|w| w.bucket_len(s)).sum()) {
                let base = batch.first().map_or(self.seq, |w| w.seq_base);
                self.start_spill(out, base)?;
            }
        }
        if let Some(spilling) = &mut self.spilling {
            let works: &[ChunkState] = batch;
            let exact = config.exact;
            let phase = Instant::now();
            let shards = self.shards.iter_mut().zip(spilling.parts.iter_mut());
            let found = share_out(
                Some(self.pool),
                shards.enumerate().collect(),
                |_, (s, (shard, parts))| shard.lookup_batch(s, works, exact, parts),
            );
            self.stats.phases.inserts += phase.elapsed();
            for r in found {
                let (seen, undecided) = r?;
                self.stats.duplicates += seen;
                // Counted as unique until the writer resolves them.
                self.stats.unique += undecided;
                self.undecided += undecided;
            }
            return Ok(());
        }

        let counting = config.select == Select::Counts;
        let works: &[ChunkState] = batch;
        let phase = Instant::now();
        let ordered = longest_first(&mut self.shards, works);
        let new: u64 = share_out(Some(self.pool), ordered, |_, (s, shard)| {
            shard.insert_batch(s, works)
        })
        .into_iter()
        .sum();
        let valid: u64 = batch.iter().map(ChunkState::valid).sum();
        self.stats.unique += new;
        self.stats.duplicates += valid - new;

        let render = self.render();
        if counting {
            for work in batch.iter() {
                work.collect_uniques(&render, &mut self.uniques);
            }
        }
        self.stats.phases.inserts += phase.elapsed();
        if !counting && !render.in_memory() {
            let phase = Instant::now();
            share_out(Some(self.pool), batch.iter_mut().collect(), |_, work| {
                work.render(&render);
            });
            self.stats.phases.keys += phase.elapsed();
        }
        Ok(())
    }

    /// Line numbers, counters and invalid-line reports, in input order.
    fn account(&mut self, batch: &mut [ChunkState], observer: &mut dyn Observer) {
        for work in batch {
            work.seq_base = self.seq;
            self.seq += work.valid();
            let Some(chunk) = &work.chunk else { continue };
            let first_line = self.lines_in[chunk.input];
            let source = self.names.get(chunk.input).map_or("", String::as_str);
            if first_line == 0 && lines::looks_binary(chunk.bytes()) {
                observer.warning(&Warning::Binary { source });
            }
            self.lines_in[chunk.input] += work.lines;
            self.stats.lines += work.lines;
            self.stats.blank += work.blank;
            let end = match &chunk.records {
                // Record formats: the bytes of the records read.
                Some(r) if r.input_end > 0 => r.input_end,
                Some(_) => self.input_end[chunk.input] + chunk.bytes().len() as u64,
                None => chunk.offset + chunk.bytes().len() as u64,
            };
            self.stats.bytes += end - self.input_end[chunk.input].min(end);
            self.input_end[chunk.input] = end;
            self.stats.invalid += work.invalid.len() as u64;
            for inv in &work.invalid {
                *self
                    .stats
                    .invalid_by_reason
                    .entry(inv.problem.name())
                    .or_insert(0) += 1;
                let (line, byte) = match &chunk.records {
                    Some(r) => {
                        let pos = r.pos.get(inv.ordinal as usize).copied().unwrap_or_default();
                        (pos.record, pos.byte)
                    }
                    None => (
                        first_line + u64::from(inv.ordinal) + 1,
                        chunk.offset + u64::from(inv.start) + u64::from(inv.index),
                    ),
                };
                observer.invalid(&InvalidLine {
                    source,
                    line,
                    byte,
                    problem: inv.problem,
                    text: work.invalid_line(inv),
                });
            }
        }
    }

    /// The `--count` output: every unique line with its count, in order,
    /// handed to the writer thread, which has it formatted in pieces on
    /// several threads and writes them in order (`counted.rs`).
    fn write_counts(&mut self, out: &SyncSender<ToWriter>) {
        let uniques = std::mem::take(&mut self.uniques);
        let counts = self
            .shards
            .iter_mut()
            .map(ShardState::take_counts)
            .collect();
        // A closed channel means the writer failed; its error is reported.
        let _ = hand_over(out, ToWriter::Counts { uniques, counts }, &mut self.stats);
    }
}

/// The writer thread has stopped (its error is reported).
struct WriterStopped;

/// Sends `msg` to the writer thread, which takes it once it is done with
/// the one before; the wait counts in `stats`.
fn hand_over(
    out: &SyncSender<ToWriter>,
    msg: ToWriter,
    stats: &mut Stats,
) -> Result<(), WriterStopped> {
    let waited = Instant::now();
    let sent = out.send(msg);
    stats.phases.writer_wait += waited.elapsed();
    sent.map_err(|_| WriterStopped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_chunk_size_under_a_limit() {
        // No limit, or a large one: the configured size.
        assert_eq!(chunk_size_under(2 << 20, None, 8), 2 << 20);
        assert_eq!(chunk_size_under(2 << 20, Some(4 << 30), 8), 2 << 20);
        // A tiny limit: the chunks in flight take a third of the 64 MiB
        // slack at most, and chunks stay at least 64 KiB.
        let small = chunk_size_under(2 << 20, Some(0), 8);
        assert!(small as u64 * chunks_in_flight(8) * CHUNK_COST <= memory::SLACK / 3);
        assert!(small >= 64 << 10);
        assert_eq!(chunk_size_under(2 << 20, Some(0), 1000), 64 << 10);
    }
}
