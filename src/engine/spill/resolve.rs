//! The end of a spilled run: every partition resolved, and the lines file
//! streamed to the output with the selected entries kept.
//!
//! Without counts the resolvers mark the selected sequence numbers in a
//! bitmap (one bit per line since the run spilled), which the final pass
//! tests entry by entry. With counts each partition yields a count file of
//! `(sequence, count)` pairs sorted by sequence, and the count files are merged
//! while the lines file is read.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, Write};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};

use rayon::prelude::*;

use super::super::error::Error;
use super::super::input::SharedBytes;
use super::super::prior::PriorKeys;
use super::super::Select;
use super::entries::{EntryReader, Printed};
use super::files::{read_record, read_words, Partitions, SpillDir};
use super::{SpillTuning, PARTITION_BITS, RECORD_BYTES, RESOLVE_BYTES_PER_KEY};
use crate::engine::input::map_window::MapWindow;
use crate::engine::seen::fp_sort::sort_by_fp;
use crate::engine::seen::fpset::Insert;
use crate::engine::seen::shard::ShardSet;

/// Read buffer of each spill file read (256 count files merged: 4 MiB).
const READ_BUFFER: usize = 16 << 10;

/// Read buffer of the lines file and write buffer of the output.
const LINES_BUFFER: usize = 1 << 20;

// The final pass takes up to three windows of a mapped input (one ahead,
// two behind), the lines file's read buffer and two output buffers (one
// written, one filled): 15 MiB, with counts 4 MiB more for the merge. It
// comes after the partition buffers (8 MiB) and the chunks in flight (43
// MiB by default, at least 3 MiB under the smallest limits) are gone, so
// the working set the budget leaves room for covers it.

/// Selected sequence numbers, one bit each from `base` on; set by the
/// resolvers on every worker thread at once.
struct Bitmap {
    base: u64,
    words: Vec<AtomicU64>,
}

impl Bitmap {
    fn new(seqs: Range<u64>) -> Self {
        let n = seqs.end.saturating_sub(seqs.start).div_ceil(64);
        Self {
            base: seqs.start,
            words: (0..n).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn set(&self, seq: u64) {
        let i = seq.wrapping_sub(self.base);
        if let Some(w) = usize::try_from(i / 64).ok().and_then(|k| self.words.get(k)) {
            w.fetch_or(1 << (i % 64), Ordering::Relaxed);
        }
    }

    fn get(&self, seq: u64) -> bool {
        let i = seq.wrapping_sub(self.base);
        usize::try_from(i / 64)
            .ok()
            .and_then(|k| self.words.get(k))
            .is_some_and(|w| w.load(Ordering::Relaxed) & (1 << (i % 64)) != 0)
    }
}

/// Bytes of the bitmap of `lines` sequence numbers (counted against the
/// memory budget while partitions are resolved).
pub fn bitmap_bytes(lines: u64) -> u64 {
    lines.div_ceil(64) * 8
}

/// What the spill left for the end of the run.
pub struct Spilled {
    /// The partition files.
    pub partitions: Vec<PathBuf>,
    /// The lines file.
    pub lines: PathBuf,
    /// Sequence numbers of the lines since the run spilled.
    pub seqs: Range<u64>,
    /// Each input's shared buffer, for slice entries.
    pub maps: Vec<Option<SharedBytes>>,
}

/// Where the selected sequence numbers are found.
enum Chosen {
    Bits(Bitmap),
    Counts(Merge),
}

/// Resolves the partitions and writes the selected lines of the lines
/// file to `output`. Returns the number of keys first seen in the spilled
/// part (and new to `prior`, when there is one).
///
/// # Errors
/// [`Error::Spill`] for the spill files, [`Error::Write`] for the output.
pub fn finish(
    dir: &Arc<SpillDir>,
    spilled: Spilled,
    select: Select,
    tuning: SpillTuning,
    prior: Option<&dyn PriorKeys>,
    output: &mut (dyn Write + Send),
    pool: &rayon::ThreadPool,
) -> Result<u64, Error> {
    let Spilled {
        partitions,
        lines,
        seqs,
        maps,
    } = spilled;
    let bits = (select != Select::Counts).then(|| Bitmap::new(seqs));
    // Partitions are independent: they are resolved on the run's worker
    // threads, idle by now (each within its share of the memory budget, see
    // `SpillTuning::partition_keys`).
    let resolved: Vec<Result<(Option<PathBuf>, u64), Error>> = pool.install(|| {
        partitions
            .into_par_iter()
            .map(|part| {
                resolve(
                    dir,
                    part,
                    PARTITION_BITS,
                    select,
                    tuning,
                    bits.as_ref(),
                    prior,
                )
            })
            .collect()
    });
    let mut count_files = Vec::with_capacity(resolved.len());
    let mut new = 0u64;
    for r in resolved {
        let (counts, n) = r?;
        count_files.extend(counts);
        new += n;
    }
    let chosen = match bits {
        Some(bits) => Chosen::Bits(bits),
        None => Chosen::Counts(Merge::open(dir, &count_files)?),
    };
    let file = File::open(&lines).map_err(|e| dir.error(e))?;
    // The output is written by a thread of its own while the next buffer
    // is filled: the two cores are otherwise idle by now, and writing took
    // about half of the final pass.
    std::thread::scope(|scope| {
        let (full_tx, full_rx) = mpsc::sync_channel::<Vec<u8>>(1);
        let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
        let writer = scope.spawn(move || -> io::Result<()> {
            for buf in full_rx {
                output.write_all(&buf)?;
                let _ = empty_tx.send(buf);
            }
            Ok(())
        });
        let mut send = move |out: &mut Vec<u8>| -> bool {
            let next = empty_rx.try_recv().unwrap_or_default();
            let full = std::mem::replace(out, next);
            out.clear();
            out.reserve(LINES_BUFFER + 4096);
            full_tx.send(full).is_ok()
        };
        let streamed = stream(dir, file, chosen, &maps, select, &mut send);
        // Closes the channel: the output thread ends.
        drop(send);
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("output thread panicked")));
        // A write failure explains a failed send, so it comes first.
        written.map_err(Error::Write)?;
        streamed
    })?;
    let _ = std::fs::remove_file(&lines);
    Ok(new)
}

/// The final pass: the selected entries of the lines file `file`, with
/// their counts for `--count`, into buffers of about [`LINES_BUFFER`]
/// bytes handed to `send` (which says false when the output failed).
fn stream(
    dir: &SpillDir,
    file: File,
    mut chosen: Chosen,
    maps: &[Option<SharedBytes>],
    select: Select,
    send: &mut impl FnMut(&mut Vec<u8>) -> bool,
) -> Result<(), Error> {
    let mut reader = EntryReader::new(file, LINES_BUFFER);
    let mut out: Vec<u8> = Vec::with_capacity(LINES_BUFFER + 4096);
    let mut line = Vec::new();
    let mut window = MapWindow::default();
    let read_err = |e: io::Error| dir.error(e);
    while let Some(entry) = reader.next(&mut line).map_err(read_err)? {
        let count = if entry.definite {
            Some(0)
        } else {
            match &mut chosen {
                Chosen::Bits(bits) => bits.get(entry.seq).then_some(0),
                Chosen::Counts(merged) => merged.take(entry.seq).map_err(read_err)?,
            }
        };
        let Some(count) = count else { continue };
        if select == Select::Counts {
            out.extend_from_slice(count.to_string().as_bytes());
            out.push(b'\t');
        }
        match entry.printed {
            Printed::Slice { input, offset, len } => {
                out.extend_from_slice(window.slice(maps, input, offset, len));
            }
            Printed::Bytes => out.extend_from_slice(&line),
        }
        out.push(b'\n');
        if out.len() >= LINES_BUFFER && !send(&mut out) {
            break;
        }
    }
    window.leave(maps);
    if !out.is_empty() {
        send(&mut out);
    }
    Ok(())
}

/// Records a resolver reads and inserts at a time (without `--exact`):
/// 64 KiB of them.
const RECORD_BLOCK: usize = 2730;

/// What a resolver does with each record's insert: marks the selected
/// lines, or with counts numbers the first lines and counts the others.
/// With a prior set, a key first seen in the partition waits in `pending`
/// until [`settle`](Self::settle) has asked the prior set about the block's
/// keys at once, sorted: a key it holds is a duplicate from its first line
/// on; the others are new, and are handed to the prior set only once the
/// whole partition is resolved (a partition split halfway is resolved
/// again from its start).
struct Chooser<'b> {
    select: Select,
    bits: Option<&'b Bitmap>,
    /// First sequence number and count of each key, by id (counts only);
    /// [`KNOWN_SEQ`] for a key the prior set held.
    firsts: Vec<[u64; 2]>,
    prior: Option<&'b dyn PriorKeys>,
    /// Keys first seen since the last settle: fingerprint, sequence, id.
    pending: Vec<(u128, u64, u32)>,
    /// Room for sorting `pending`.
    spare: Vec<(u128, u64, u32)>,
    fps: Vec<u128>,
    found: Vec<bool>,
    /// The partition's keys new to the prior set.
    fresh: Vec<u128>,
    /// The partition's keys the prior set held.
    known: u64,
}

/// The first sequence number of a key the prior set held: not printed.
const KNOWN_SEQ: u64 = u64::MAX;

impl<'b> Chooser<'b> {
    fn new(select: Select, bits: Option<&'b Bitmap>, prior: Option<&'b dyn PriorKeys>) -> Self {
        Self {
            select,
            bits,
            firsts: Vec::new(),
            prior,
            pending: Vec::new(),
            spare: Vec::new(),
            fps: Vec::new(),
            found: Vec::new(),
            fresh: Vec::new(),
            known: 0,
        }
    }

    fn mark(&self, seq: u64) {
        if let Some(bits) = self.bits {
            bits.set(seq);
        }
    }

    /// The insert of the record of key `fp` at sequence `seq`.
    ///
    /// A bit set before the partition turns out too big for memory is
    /// right all the same: records come in sequence order, so a key new
    /// (or seen) in a prefix of the partition is new (or seen) in all of
    /// it.
    fn chose(&mut self, fp: u128, seq: u64, ins: Insert) {
        match ins {
            Insert::New(id) => {
                if self.select == Select::Counts {
                    self.firsts.push([seq, 1]);
                }
                if self.prior.is_some() {
                    self.pending.push((fp, seq, id));
                } else if self.select == Select::Unique {
                    self.mark(seq);
                }
            }
            Insert::Seen(id) => match self.select {
                Select::Duplicates => self.mark(seq),
                Select::Counts => {
                    if let Some(f) = self.firsts.get_mut(id as usize) {
                        f[1] += 1;
                    }
                }
                Select::Unique => {}
            },
        }
    }

    /// Asks the prior set about the keys first seen since the last call.
    fn settle(&mut self) -> Result<(), Error> {
        let Some(prior) = self.prior else {
            return Ok(());
        };
        if self.pending.is_empty() {
            return Ok(());
        }
        sort_by_fp(&mut self.pending, &mut self.spare, |p| p.0);
        self.fps.clear();
        self.fps.extend(self.pending.iter().map(|p| p.0));
        self.found.clear();
        self.found.resize(self.fps.len(), false);
        prior.contains_sorted(&self.fps, &mut self.found)?;
        for (i, &(fp, seq, id)) in self.pending.iter().enumerate() {
            let known = self.found.get(i).copied().unwrap_or(false);
            if !known {
                self.fresh.push(fp);
                if self.select == Select::Unique {
                    self.mark(seq);
                }
                continue;
            }
            self.known += 1;
            match self.select {
                Select::Duplicates => self.mark(seq),
                Select::Counts => {
                    if let Some(f) = self.firsts.get_mut(id as usize) {
                        f[0] = KNOWN_SEQ;
                    }
                }
                Select::Unique => {}
            }
        }
        self.pending.clear();
        Ok(())
    }
}

/// Resolves one partition file (whose records share their top `used`
/// fingerprint bits): first lines (unique, counts) or later lines
/// (duplicates) are marked in `bits`, or with counts (`bits` is `None`)
/// written to a count file of `(sequence, count)` pairs sorted by sequence.
/// Returns the count file (with counts) and the number of distinct keys (new to
/// `prior`, when there is one).
fn resolve(
    dir: &Arc<SpillDir>,
    part: PathBuf,
    used: u32,
    select: Select,
    tuning: SpillTuning,
    bits: Option<&Bitmap>,
    prior: Option<&dyn PriorKeys>,
) -> Result<(Option<PathBuf>, u64), Error> {
    let mut reader = open(dir, &part, READ_BUFFER)?;
    // Fingerprints with ids, or with `--exact` full keys with ids.
    let mut table = ShardSet::new(0, tuning.exact, true);
    let mut chooser = Chooser::new(select, bits, prior);
    let too_big = |table: &ShardSet| {
        let big = if tuning.exact {
            table.bytes_after(0) > tuning.partition_keys.saturating_mul(RESOLVE_BYTES_PER_KEY)
        } else {
            table.len() > tuning.partition_keys
        };
        big && used < 128
    };
    let mut too_many = false;
    if let ShardSet::FingerprintIds(t) = &mut table {
        // The partition's records bound its distinct keys: the table grows
        // to hold that many (or the partition's share of the budget) in one
        // step rather than by steps of 1.3, each of which moves every entry.
        let records = reader.get_ref().metadata().map_or(0, |m| m.len()) / RECORD_BYTES as u64;
        t.expect_total(
            usize::try_from(records)
                .map_or(tuning.partition_keys, |r| r.min(tuning.partition_keys)),
        );
        // Records a block at a time, inserted with their buckets
        // prefetched; the size is checked after each block, so a
        // partition may pass its share by one block's keys before it is
        // split.
        let mut block: Vec<(u128, u64)> = Vec::with_capacity(RECORD_BLOCK);
        loop {
            block.clear();
            while block.len() < RECORD_BLOCK {
                match read_record(&mut reader, None).map_err(|e| dir.error(e))? {
                    Some(rec) => block.push(rec),
                    None => break,
                }
            }
            t.insert_all(&block, |r| r.0, |r, ins| chooser.chose(r.0, r.1, ins));
            if block.len() < RECORD_BLOCK {
                break;
            }
            if t.len() > tuning.partition_keys && used < 128 {
                too_many = true;
                break;
            }
            chooser.settle()?;
        }
    } else {
        let mut key = Vec::new();
        let mut since = 0usize;
        while let Some((fp, seq)) =
            read_record(&mut reader, tuning.exact.then_some(&mut key)).map_err(|e| dir.error(e))?
        {
            chooser.chose(fp, seq, table.insert(fp, &key));
            if too_big(&table) {
                too_many = true;
                break;
            }
            since += 1;
            if since == RECORD_BLOCK {
                chooser.settle()?;
                since = 0;
            }
        }
    }
    drop(reader);
    if too_many {
        return split(dir, part, used, select, tuning, bits, prior);
    }
    chooser.settle()?;
    if let Some(prior) = prior {
        prior.add_new(&chooser.fresh)?;
    }
    let counts = if bits.is_none() {
        let mut file = dir.create_file("counts", READ_BUFFER)?;
        for [seq, count] in &chooser.firsts {
            if *seq != KNOWN_SEQ {
                file.write(&pair(*seq, *count))?;
            }
        }
        Some(file.finish()?)
    } else {
        None
    };
    let _ = std::fs::remove_file(&part);
    Ok((counts, table.len() as u64 - chooser.known))
}

/// Splits a partition with too many keys by its next fingerprint bits and
/// resolves the parts; with counts, merges their count files into one.
fn split(
    dir: &Arc<SpillDir>,
    part: PathBuf,
    used: u32,
    select: Select,
    tuning: SpillTuning,
    bits: Option<&Bitmap>,
    prior: Option<&dyn PriorKeys>,
) -> Result<(Option<PathBuf>, u64), Error> {
    let width = PARTITION_BITS.min(128 - used);
    let mut parts = Partitions::new(dir, used, 1 << width);
    let mut reader = open(dir, &part, READ_BUFFER)?;
    let mut key = Vec::new();
    while let Some((fp, seq)) =
        read_record(&mut reader, tuning.exact.then_some(&mut key)).map_err(|e| dir.error(e))?
    {
        parts.push(fp, seq, tuning.exact.then_some(&key[..]))?;
    }
    drop(reader);
    let _ = std::fs::remove_file(&part);
    let mut count_files = Vec::new();
    let mut keys = 0u64;
    for child in parts.finish()? {
        let (counts, n) = resolve(dir, child, used + width, select, tuning, bits, prior)?;
        count_files.extend(counts);
        keys += n;
    }
    if bits.is_some() {
        return Ok((None, keys));
    }
    let mut merged = Merge::open(dir, &count_files)?;
    let mut out = dir.create_file("counts", READ_BUFFER)?;
    while let Some((seq, count)) = merged.next().map_err(|e| dir.error(e))? {
        out.write(&pair(seq, count))?;
    }
    drop(merged);
    Ok((Some(out.finish()?), keys))
}

fn pair(seq: u64, count: u64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&seq.to_le_bytes());
    b[8..].copy_from_slice(&count.to_le_bytes());
    b
}

fn open(dir: &SpillDir, path: &PathBuf, buffer: usize) -> Result<BufReader<File>, Error> {
    Ok(BufReader::with_capacity(
        buffer,
        File::open(path).map_err(|e| dir.error(e))?,
    ))
}

/// Sorted count files merged into one sequence; each is removed once
/// the merge is dropped.
struct Merge {
    readers: Vec<BufReader<File>>,
    heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    paths: Vec<PathBuf>,
}

impl Merge {
    fn open(dir: &SpillDir, files: &[PathBuf]) -> Result<Self, Error> {
        let mut m = Self {
            readers: Vec::with_capacity(files.len()),
            heap: BinaryHeap::with_capacity(files.len()),
            paths: files.to_vec(),
        };
        for (i, path) in files.iter().enumerate() {
            let mut r = open(dir, path, READ_BUFFER)?;
            if let Some([seq, count]) = read_words::<2>(&mut r).map_err(|e| dir.error(e))? {
                m.heap.push(Reverse((seq, count, i)));
            }
            m.readers.push(r);
        }
        Ok(m)
    }

    /// The smallest remaining `(sequence, count)`.
    fn next(&mut self) -> io::Result<Option<(u64, u64)>> {
        let Some(Reverse((seq, count, i))) = self.heap.pop() else {
            return Ok(None);
        };
        if let Some(r) = self.readers.get_mut(i) {
            if let Some([s, c]) = read_words::<2>(r)? {
                self.heap.push(Reverse((s, c, i)));
            }
        }
        Ok(Some((seq, count)))
    }

    /// The count of `seq` when it is selected (sequence numbers are asked
    /// for in increasing order).
    fn take(&mut self, seq: u64) -> io::Result<Option<u64>> {
        while let Some(&Reverse((s, _, _))) = self.heap.peek() {
            if s > seq {
                break;
            }
            let (s, count) = self.next()?.unwrap_or((u64::MAX, 0));
            if s == seq {
                return Ok(Some(count));
            }
        }
        Ok(None)
    }
}

impl Drop for Merge {
    fn drop(&mut self) {
        for p in &self.paths {
            let _ = std::fs::remove_file(p);
        }
    }
}
