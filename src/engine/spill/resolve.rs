//! The end of a spilled run: every partition resolved to a sorted run of
//! selected sequence numbers, the runs merged, and the lines file streamed
//! to the output with the selected entries kept.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;

use super::super::error::Error;
use super::super::fpset::Insert;
use super::super::shard::ShardSet;
use super::super::Select;
use super::files::{read_record, read_words, Partitions, SpillDir};
use super::{SpillTuning, PARTITION_BITS, RESOLVE_BYTES_PER_KEY};

/// Read buffer of each run during a merge (256 runs: 4 MiB).
const RUN_BUFFER: usize = 16 << 10;

/// Read buffer of the lines file and write buffer of the output.
const LINES_BUFFER: usize = 1 << 20;

/// Bit of an entry's length that marks a line already known to be
/// selected (a duplicate of a key of the frozen set, with `--duplicates`).
const DEFINITE: u32 = 1 << 31;

/// Entries of the lines file: the sequence number (`u64`), the length of
/// the printed bytes (`u32`, with [`DEFINITE`]), the bytes.
pub struct LineEntry;

impl LineEntry {
    /// Starts an entry in `out`; the printed bytes are appended next.
    #[inline]
    pub fn begin(out: &mut Vec<u8>) -> usize {
        let at = out.len();
        out.extend_from_slice(&[0; 12]);
        at
    }

    /// Completes the entry begun at `at`.
    #[inline]
    pub fn end(out: &mut [u8], at: usize, seq: u64, definite: bool) {
        let len = (out.len() - at - 12) as u32 | if definite { DEFINITE } else { 0 };
        if let Some(head) = out.get_mut(at..at + 12) {
            head[..8].copy_from_slice(&seq.to_le_bytes());
            head[8..].copy_from_slice(&len.to_le_bytes());
        }
    }
}

/// Resolves `partitions` and writes the selected lines of `lines` to
/// `output`. Returns the number of keys first seen in the spilled part.
///
/// # Errors
/// [`Error::Spill`] for the spill files, [`Error::Write`] for the output.
pub fn finish(
    dir: &Arc<SpillDir>,
    partitions: Vec<PathBuf>,
    lines: PathBuf,
    select: Select,
    tuning: SpillTuning,
    output: &mut dyn Write,
    pool: &rayon::ThreadPool,
) -> Result<u64, Error> {
    // Partitions are independent: they are resolved on the run's worker
    // threads, idle by now (each within its share of the memory budget, see
    // `SpillTuning::partition_keys`). Resolving is a small part of a spilled
    // run: on 2 threads the 1 GiB run with --memory-limit 0 went from 4.16
    // to 4.09 s (median of 3); writing and reading back the lines file and
    // the merge take most of the rest.
    let resolved: Vec<Result<(PathBuf, u64), Error>> = pool.install(|| {
        partitions
            .into_par_iter()
            .map(|part| resolve(dir, part, PARTITION_BITS, select, tuning))
            .collect()
    });
    let mut runs = Vec::with_capacity(resolved.len());
    let mut new = 0u64;
    for r in resolved {
        let (run, n) = r?;
        runs.push(run);
        new += n;
    }
    let mut merged = Merge::open(dir, &runs)?;
    let mut reader =
        BufReader::with_capacity(LINES_BUFFER, File::open(&lines).map_err(|e| dir.error(e))?);
    let mut out: Vec<u8> = Vec::with_capacity(LINES_BUFFER + 4096);
    let mut line = Vec::new();
    let read_err = |e: io::Error| dir.error(e);
    loop {
        let mut head = [0u8; 12];
        match reader.read_exact(&mut head) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(read_err(e)),
        }
        let seq = u64::from_le_bytes(head[..8].try_into().unwrap_or([0; 8]));
        let len = u32::from_le_bytes(head[8..].try_into().unwrap_or([0; 4]));
        line.resize((len & !DEFINITE) as usize, 0);
        reader.read_exact(&mut line).map_err(read_err)?;
        let count = if len & DEFINITE != 0 {
            Some(0)
        } else {
            merged.take(seq).map_err(read_err)?
        };
        if let Some(count) = count {
            if select == Select::Counts {
                out.extend_from_slice(count.to_string().as_bytes());
                out.push(b'\t');
            }
            out.extend_from_slice(&line);
            out.push(b'\n');
            if out.len() >= LINES_BUFFER {
                output.write_all(&out).map_err(Error::Write)?;
                out.clear();
            }
        }
    }
    output.write_all(&out).map_err(Error::Write)?;
    drop(reader);
    let _ = std::fs::remove_file(&lines);
    Ok(new)
}

/// Resolves one partition file (whose records share their top `used`
/// fingerprint bits) into a run file of `(sequence, count)` pairs, sorted
/// by sequence: first lines (unique, counts) or later lines (duplicates).
/// Returns the run and the number of distinct keys.
fn resolve(
    dir: &Arc<SpillDir>,
    part: PathBuf,
    used: u32,
    select: Select,
    tuning: SpillTuning,
) -> Result<(PathBuf, u64), Error> {
    let mut reader = open(dir, &part, RUN_BUFFER)?;
    let mut run = dir.create_file("run", RUN_BUFFER)?;
    // Fingerprints with ids, or with `--exact` full keys with ids.
    let mut table = ShardSet::new(0, tuning.exact, true);
    let mut key = Vec::new();
    // First sequence number and count of each key, by id (counts only).
    let mut firsts: Vec<[u64; 2]> = Vec::new();
    let mut too_many = false;
    while let Some((fp, seq)) =
        read_record(&mut reader, tuning.exact.then_some(&mut key)).map_err(|e| dir.error(e))?
    {
        let ins = table.insert(fp, &key);
        match (select, ins) {
            (Select::Unique, Insert::New(_)) | (Select::Duplicates, Insert::Seen(_)) => {
                run.write(&pair(seq, 0))?;
            }
            (Select::Counts, Insert::New(_)) => firsts.push([seq, 1]),
            (Select::Counts, Insert::Seen(id)) => {
                if let Some(f) = firsts.get_mut(id as usize) {
                    f[1] += 1;
                }
            }
            _ => {}
        }
        let too_big = if tuning.exact {
            table.bytes_after(0) > tuning.partition_keys.saturating_mul(RESOLVE_BYTES_PER_KEY)
        } else {
            table.len() > tuning.partition_keys
        };
        if too_big && used < 128 {
            too_many = true;
            break;
        }
    }
    drop(reader);
    if too_many {
        drop(table);
        drop(firsts);
        let path = run.finish()?;
        let _ = std::fs::remove_file(path);
        return split(dir, part, used, select, tuning);
    }
    for [seq, count] in &firsts {
        run.write(&pair(*seq, *count))?;
    }
    let _ = std::fs::remove_file(&part);
    Ok((run.finish()?, table.len() as u64))
}

/// Splits a partition with too many keys by its next fingerprint bits,
/// resolves the parts and merges their runs.
fn split(
    dir: &Arc<SpillDir>,
    part: PathBuf,
    used: u32,
    select: Select,
    tuning: SpillTuning,
) -> Result<(PathBuf, u64), Error> {
    let bits = PARTITION_BITS.min(128 - used);
    let mut parts = Partitions::new(dir, used, 1 << bits);
    let mut reader = open(dir, &part, RUN_BUFFER)?;
    let mut key = Vec::new();
    while let Some((fp, seq)) =
        read_record(&mut reader, tuning.exact.then_some(&mut key)).map_err(|e| dir.error(e))?
    {
        parts.push(fp, seq, tuning.exact.then_some(&key[..]))?;
    }
    drop(reader);
    let _ = std::fs::remove_file(&part);
    let mut runs = Vec::new();
    let mut keys = 0u64;
    for child in parts.finish()? {
        let (run, n) = resolve(dir, child, used + bits, select, tuning)?;
        runs.push(run);
        keys += n;
    }
    let mut merged = Merge::open(dir, &runs)?;
    let mut out = dir.create_file("run", RUN_BUFFER)?;
    while let Some((seq, count)) = merged.next().map_err(|e| dir.error(e))? {
        out.write(&pair(seq, count))?;
    }
    drop(merged);
    Ok((out.finish()?, keys))
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

/// Sorted runs merged into one sequence; each run file is removed once
/// the merge is dropped.
struct Merge {
    readers: Vec<BufReader<File>>,
    heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    paths: Vec<PathBuf>,
}

impl Merge {
    fn open(dir: &SpillDir, runs: &[PathBuf]) -> Result<Self, Error> {
        let mut m = Self {
            readers: Vec::with_capacity(runs.len()),
            heap: BinaryHeap::with_capacity(runs.len()),
            paths: runs.to_vec(),
        };
        for (i, path) in runs.iter().enumerate() {
            let mut r = open(dir, path, RUN_BUFFER)?;
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
