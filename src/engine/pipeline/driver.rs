//! The driver: phases 1 and 2 of each batch on the pool, the memory
//! budget of the seen-set, and the switch to spilling when it would pass
//! the limit.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::uri::key::KeyScratch;

use super::writer::{hand_over, ToWriter, WRITE_BYTES};
use super::{chunks_in_flight, CHUNK_COST};
use crate::engine::batch::{ChunkState, Render, ScanConfig, ShardState, UniqueSpan, Uniques};
use crate::engine::error::Error;
use crate::engine::input::chunk::Chunk;
use crate::engine::input::lines;
use crate::engine::memory;
use crate::engine::observe::{Observer, Progress, Warning};
use crate::engine::seen::fpset;
use crate::engine::seen::projection::Projection;
use crate::engine::seen::shard::{SHARDS, SHARD_BITS};
use crate::engine::share::share_out;
use crate::engine::spill::{
    self, Partitions, SpillDir, SpillTuning, PARTITION_BUFFER, RESOLVE_BYTES_PER_KEY,
};
use crate::engine::stats::Stats;
use crate::engine::{Config, Emit, InvalidLine, Select};

/// Write buffer of the lines file once a run spills.
const LINES_BUFFER: usize = 1 << 20;

/// Fewest distinct keys a partition may hold while it is resolved,
/// however low the memory limit (4 MiB).
const MIN_PARTITION_KEYS: usize = 1 << 16;

/// The shards, with their indexes, in the order phase 2 takes them, longest
/// task first, so that no worker is left with a long one while the others
/// wait: those whose table grows in this batch, the largest first (a
/// growth can take a hundred times a shard's inserts of one batch), then
/// the rest by entries.
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

/// A run that spills: the directory, each shard's partition files, and
/// the sequence number of the first line since it spilled.
struct Spilling {
    dir: Arc<SpillDir>,
    parts: Vec<Partitions>,
    base: u64,
}

/// The state of the calling thread between batches.
pub(super) struct Driver<'a> {
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
    pub(super) fn new(
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
    pub(super) fn project(&mut self, total: Option<u64>, raw_read: Arc<AtomicU64>) {
        self.projection = Projection::new(total);
        self.raw_read = raw_read;
    }

    /// The number of distinct keys each shard is expected to end with: its
    /// share of the projected final count (0 when there is none). No more:
    /// sizes come in steps of 1.3, so a margin of a few percent would take
    /// some shards a whole step further. A shard that ends a little past its
    /// expected size grows once more, as it would have without one.
    pub(super) fn expected_per_shard(&mut self) -> usize {
        let read = self.raw_read.load(Ordering::Relaxed);
        let projected = self.projection.update(read, self.stats.unique);
        projected.map_or(0, |p| {
            usize::try_from(p / SHARDS as u64).unwrap_or(usize::MAX)
        })
    }

    /// Tells every shard's set to expect `keys` distinct keys.
    pub(super) fn expect_keys(&mut self, keys: usize) {
        for shard in &mut self.shards {
            shard.expect_total(keys);
        }
    }

    /// Tells the sets the projected size to grow to, if every shard at that
    /// size fits the budget (with the lines of `batch`, for counts). If not,
    /// the run will likely spill; until it must, the sets grow by steps,
    /// which keeps them as small as they can be (with a limit just above
    /// what the steps reach, sets sized by the projection would have
    /// spilled where steps did not).
    pub(super) fn expect_projected(&mut self, batch: &[ChunkState]) {
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
    pub(super) fn limit(&mut self, limit: Option<u64>, chunk_size: usize, batch_len: usize) {
        let chunks = chunks_in_flight(batch_len) * chunk_size as u64 * CHUNK_COST;
        let buffers = (256 * PARTITION_BUFFER + LINES_BUFFER + 2 * WRITE_BYTES) as u64
            + self.stats.threads as u64 * fpset::REBUILD_ASIDE_BYTES as u64;
        self.budget = limit.map(|l| memory::budget(l, chunks + buffers + BASE_BYTES));
        self.tuning.partition_keys = self.partition_keys(0);
        #[cfg(feature = "__internal-testing")]
        {
            self.tuning.fail_after_bytes = self.config.spill_hooks.fail_after_bytes;
        }
    }

    /// Most distinct keys a partition may hold while it is resolved: the
    /// budget, less `taken` bytes, shared by the worker threads, which
    /// resolve partitions all at once.
    pub(super) fn partition_keys(&self, taken: u64) -> usize {
        #[cfg(feature = "__internal-testing")]
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
    pub(super) fn fits_budget(
        &self,
        batch: &[ChunkState],
        more: impl Fn(usize, &ShardState) -> usize,
    ) -> bool {
        #[cfg(feature = "__internal-testing")]
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
    pub(super) fn start_spill(
        &mut self,
        out: &SyncSender<ToWriter>,
        base: u64,
    ) -> Result<(), Error> {
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
    pub(super) fn finish_spill(&mut self, out: &SyncSender<ToWriter>) -> Result<(), Error> {
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
    pub(super) fn render(&self) -> Render<'a> {
        Render {
            emit: self.config.emit,
            select: self.config.select,
            field: self.config.field,
            keyer: &self.config.keyer,
        }
    }

    /// Runs all batches; returns the stats (without wall time).
    pub(super) fn drive(
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
        debug_assert!(
            self.config.prior.is_some()
                || self.stats.unique == self.shards.iter().map(|s| s.len() as u64).sum::<u64>(),
            "every new line adds exactly one key"
        );
        if self.config.select == Select::Counts {
            self.write_counts(out);
        }
        Ok((std::mem::take(&mut self.stats), self.undecided))
    }

    /// The three phases for one batch.
    pub(super) fn process(
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
        let prior = config.prior.as_deref();
        let mut new = 0u64;
        for n in share_out(Some(self.pool), ordered, |_, (s, shard)| {
            shard.insert_batch(s, works, prior)
        }) {
            new += n?;
        }
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
    pub(super) fn account(&mut self, batch: &mut [ChunkState], observer: &mut dyn Observer) {
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
                        let pos = r.pos(inv.ordinal as usize);
                        (pos.record, pos.byte)
                    }
                    None => (
                        first_line + u64::from(inv.ordinal) + 1,
                        chunk.offset + u64::from(inv.start) + u64::from(inv.index),
                    ),
                };
                observer.invalid(&InvalidLine::new(
                    source,
                    line,
                    byte,
                    inv.problem,
                    work.invalid_line(inv),
                ));
            }
        }
    }

    /// The `--count` output: every unique line with its count, in order,
    /// handed to the writer thread, which has it formatted in pieces on
    /// several threads and writes them in order (`counted.rs`).
    pub(super) fn write_counts(&mut self, out: &SyncSender<ToWriter>) {
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
