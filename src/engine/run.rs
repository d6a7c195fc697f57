//! The pipeline: a reader thread cuts inputs into chunks, the calling
//! thread drives phases 1 and 2 on a local rayon pool batch by batch, and
//! a writer thread writes the selected lines of each batch in order while
//! the next batch is processed, then hands the batch back for reuse.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;

use crate::uri::key::KeyScratch;

use super::batch::{ChunkState, Render, ScanConfig, ShardState, Uniques};
use super::chunk::{Chunk, Limits, SliceChunker, StreamChunker};
use super::error::Error;
use super::input::{self, Input, Source};
use super::observe::{Observer, Progress};
use super::shard::SHARDS;
use super::stats::Stats;
use super::{Config, Emit, InvalidLine, Select, MAX_CHUNK_BYTES};

/// Chunks the reader thread may cut ahead of the batch being filled. Each
/// one holds `chunk_size` bytes (read, or mapped and faulted in), so this
/// bounds memory. The reader gets a core mostly while the workers wait, so
/// it must be able to cut a whole batch ahead (a batch is eight chunks on
/// one or two threads): with two, the driver waited 0.1 to 0.2 s per GiB
/// for chunks on two threads; with eight, a few milliseconds.
const READ_AHEAD: usize = 8;

/// The writer thread writes its gathered output in pieces of at least this
/// many bytes (one chunk's output can take it past that).
const WRITE_BYTES: usize = 1 << 20;

/// Size of the pieces the counts output is written in.
const COUNTS_PIECE: usize = 1 << 20;

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
    let limits = Limits {
        chunk_size: config.chunk_size,
        max_line_bytes: config.max_line_bytes,
    };
    let batch_len = (threads * 4).max(8);
    let raw_read = Arc::new(AtomicU64::new(0));

    let mut driver = Driver::new(config, &names, threads, &pool);
    let render = driver.render();
    let result = std::thread::scope(|scope| {
        let (chunk_tx, chunk_rx) = mpsc::sync_channel(READ_AHEAD);
        let reader_raw = Arc::clone(&raw_read);
        scope.spawn(move || read_inputs(inputs, limits, &reader_raw, &chunk_tx));
        // A batch is handed over only when the writer is free, so at most
        // two batches exist: one being written, one being processed.
        let (out_tx, out_rx) = mpsc::sync_channel::<ToWriter>(0);
        let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<ChunkState>>();
        let render = &render;
        let writer = scope.spawn(move || write_all(output, &out_rx, &recycle_tx, render));

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
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("writer thread panicked")));
        // A write failure explains a failed send, so it comes first.
        written.map_err(Error::Write)?;
        driven
    });
    // Freeing the seen-set of a large run takes seconds (--exact: one
    // allocation per key): the wall time includes it.
    drop(driver);
    drop(pool);
    let mut stats = result?;
    stats.wall = started.elapsed();
    Ok(stats)
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
    Ok(())
}

/// The reader thread: every input in order, cut into chunks.
fn read_inputs(
    inputs: Vec<Input>,
    limits: Limits,
    raw_read: &Arc<AtomicU64>,
    tx: &SyncSender<Result<Chunk, Error>>,
) {
    for (index, input) in inputs.into_iter().enumerate() {
        let name = input.name();
        let source = match input::open(input, raw_read) {
            Ok(s) => s,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        match source {
            Source::Slice(bytes) => {
                let mut chunker = SliceChunker::new(bytes, index, limits);
                while let Some((chunk, consumed)) = chunker.next_chunk() {
                    raw_read.fetch_add(consumed, Ordering::Relaxed);
                    if tx.send(Ok(chunk)).is_err() {
                        return;
                    }
                }
            }
            Source::Stream {
                reader,
                compression,
            } => {
                let mut chunker = StreamChunker::new(reader, index, limits);
                loop {
                    match chunker.next_chunk() {
                        Ok(Some(chunk)) => {
                            if tx.send(Ok(chunk)).is_err() {
                                return;
                            }
                        }
                        Ok(None) => break,
                        Err(source) => {
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
}

/// What the writer thread is sent, in output order.
enum ToWriter {
    /// A processed batch: its selected lines are written, then the batch
    /// is sent back for reuse.
    Batch(Vec<ChunkState>),
    /// Bytes to write as they are (the counts output).
    Bytes(Vec<u8>),
}

/// The writer thread: batches and buffers in order, then a flush. The
/// selected lines are gathered into one buffer, written whenever it holds
/// [`WRITE_BYTES`] or more (and at the end).
fn write_all(
    output: &mut (dyn Write + Send),
    rx: &Receiver<ToWriter>,
    recycle: &mpsc::Sender<Vec<ChunkState>>,
    render: &Render<'_>,
) -> io::Result<()> {
    let mut pending: Vec<u8> = Vec::with_capacity(2 * WRITE_BYTES);
    for msg in rx {
        match msg {
            ToWriter::Bytes(buf) => {
                output.write_all(&pending)?;
                pending.clear();
                output.write_all(&buf)?;
            }
            ToWriter::Batch(mut works) => {
                for work in &mut works {
                    work.gather_selected(render, &mut pending);
                    // The gathered lines are copies: the chunk can go.
                    if let Some(chunk) = work.chunk.take() {
                        chunk.release();
                    }
                    if pending.len() >= WRITE_BYTES {
                        output.write_all(&pending)?;
                        pending.clear();
                    }
                }
                let _ = recycle.send(works);
            }
        }
    }
    output.write_all(&pending)?;
    output.flush()
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
                .map(|_| ShardState::new(config.exact, counting))
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
        }
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
        chunks: &Receiver<Result<Chunk, Error>>,
        batch_len: usize,
        out: &SyncSender<ToWriter>,
        recycled: &Receiver<Vec<ChunkState>>,
        observer: &mut dyn Observer,
        progress: impl Fn(u64) -> Progress,
    ) -> Result<Stats, Error> {
        let mut batch: Vec<ChunkState> = Vec::with_capacity(batch_len);
        loop {
            let mut ended = false;
            while let Ok(mut back) = recycled.try_recv() {
                self.spare.append(&mut back);
            }
            while batch.len() < batch_len {
                match chunks.recv() {
                    Ok(chunk) => {
                        let mut work = self.spare.pop().unwrap_or_default();
                        work.chunk = Some(chunk?);
                        batch.push(work);
                    }
                    Err(_) => {
                        ended = true;
                        break;
                    }
                }
            }
            if !batch.is_empty() {
                self.process(&mut batch, observer);
                if self.config.select == Select::Counts {
                    for mut work in batch.drain(..) {
                        if let Some(chunk) = work.chunk.take() {
                            chunk.release();
                        }
                        self.spare.push(work);
                    }
                } else {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(batch_len));
                    if out.send(ToWriter::Batch(full)).is_err() {
                        // The writer stopped; its error is reported.
                        return Ok(std::mem::take(&mut self.stats));
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
        debug_assert_eq!(
            self.stats.unique,
            self.shards.iter().map(|s| s.len() as u64).sum::<u64>(),
            "every new line adds exactly one key"
        );
        if self.config.select == Select::Counts {
            self.write_counts(out);
        }
        Ok(std::mem::take(&mut self.stats))
    }

    /// The three phases for one batch.
    fn process(&mut self, batch: &mut [ChunkState], observer: &mut dyn Observer) {
        let config = self.config;
        let keep_keys = config.exact || (config.emit == Emit::Key && config.field.is_none());
        let scan = ScanConfig {
            keyer: &config.keyer,
            field: config.field,
            max_line_bytes: config.max_line_bytes,
            keep_keys,
        };
        let scratches = &self.scratches;
        self.pool.install(|| {
            batch.par_iter_mut().with_max_len(1).for_each(|work| {
                let slot = rayon::current_thread_index().unwrap_or(0) % scratches.len().max(1);
                match scratches.get(slot).map(Mutex::lock) {
                    Some(Ok(mut scratch)) => work.scan(&scan, &mut scratch),
                    _ => work.scan(&scan, &mut KeyScratch::default()),
                }
            });
        });
        self.account(batch, observer);

        let counting = config.select == Select::Counts;
        let exact = config.exact;
        let works: &[ChunkState] = batch;
        let new: u64 = self.pool.install(|| {
            self.shards
                .par_iter_mut()
                .enumerate()
                .with_max_len(1)
                .map(|(s, shard)| shard.insert_batch(s, works, exact, counting))
                .sum()
        });
        let valid: u64 = batch.iter().map(ChunkState::valid).sum();
        self.stats.unique += new;
        self.stats.duplicates += valid - new;

        let render = self.render();
        if counting {
            for work in batch.iter_mut() {
                work.collect_uniques(&render, &mut self.shards, &mut self.uniques);
            }
        } else if !render.in_memory() {
            self.pool.install(|| {
                batch
                    .par_iter_mut()
                    .with_max_len(1)
                    .for_each(|work| work.render(&render));
            });
        }
    }

    /// Line numbers, counters and invalid-line reports, in input order.
    fn account(&mut self, batch: &[ChunkState], observer: &mut dyn Observer) {
        for work in batch {
            let Some(chunk) = &work.chunk else { continue };
            let first_line = self.lines_in[chunk.input];
            self.lines_in[chunk.input] += work.lines;
            self.stats.lines += work.lines;
            self.stats.blank += work.blank;
            let end = chunk.offset + chunk.bytes().len() as u64;
            self.stats.bytes += end - self.input_end[chunk.input].min(end);
            self.input_end[chunk.input] = end;
            self.stats.invalid += work.invalid.len() as u64;
            let source = self.names.get(chunk.input).map_or("", String::as_str);
            for inv in &work.invalid {
                *self
                    .stats
                    .invalid_by_reason
                    .entry(inv.problem.name())
                    .or_insert(0) += 1;
                observer.invalid(&InvalidLine {
                    source,
                    line: first_line + u64::from(inv.ordinal) + 1,
                    byte: chunk.offset + u64::from(inv.start) + u64::from(inv.index),
                    problem: inv.problem,
                    text: work.invalid_line(inv),
                });
            }
        }
    }

    /// The `--count` output: every unique line with its count, in order.
    fn write_counts(&mut self, out: &SyncSender<ToWriter>) {
        let n = self.uniques.ends.len();
        let mut counts = vec![0u64; n];
        for shard in &self.shards {
            shard.scatter_counts(&mut counts);
        }
        let mut buf = Vec::with_capacity(COUNTS_PIECE + 4096);
        let mut start = 0usize;
        for (i, &end) in self.uniques.ends.iter().enumerate() {
            let end = end as usize;
            let line = self.uniques.bytes.get(start..end).unwrap_or_default();
            start = end;
            push_decimal(&mut buf, counts[i]);
            buf.push(b'\t');
            buf.extend_from_slice(line);
            buf.push(b'\n');
            if buf.len() >= COUNTS_PIECE {
                let full = std::mem::replace(&mut buf, Vec::with_capacity(COUNTS_PIECE + 4096));
                if out.send(ToWriter::Bytes(full)).is_err() {
                    return;
                }
            }
        }
        if !buf.is_empty() {
            let _ = out.send(ToWriter::Bytes(buf));
        }
    }
}

/// Appends `n` in decimal.
fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_push_decimal() {
        let mut v = Vec::new();
        for n in [0u64, 7, 10, 12345, u64::MAX] {
            v.clear();
            push_decimal(&mut v, n);
            assert_eq!(v, n.to_string().as_bytes());
        }
    }
}
