//! The pipeline: a reader thread cuts inputs into chunks, the calling
//! thread drives phases 1 and 2 on a local rayon pool batch by batch, and
//! a writer thread writes the selected lines of each batch in order while
//! the next batch is processed, then hands the batch back for reuse.
//!
//! * `reader.rs`: the reader thread (inputs → chunks → batches);
//! * `driver.rs`: phases 1 and 2 of each batch, the seen-set's memory
//!   budget and the switch to spilling;
//! * `writer.rs`: the writer thread (selected lines → output, or the
//!   lines file of a spilled run) and the messages it is sent.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

use super::batch::ChunkState;
use super::error::Error;
use super::input::{self, Input};
use super::memory;
use super::observe::{Observer, Progress};
use super::stats::Stats;
use super::{Config, MAX_CHUNK_BYTES, MAX_THREADS};
use crate::engine::input::chunk::{ChunkShape, Limits};

mod driver;
mod reader;
mod writer;

use driver::Driver;
use reader::read_inputs;
use writer::{write_all, ToWriter};

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
    let threads = crate::engine::worker_threads(config.threads);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("urikey-worker-{i}"))
        .build()
        .map_err(|e| Error::Thread {
            what: "the worker threads".to_owned(),
            source: io::Error::other(e),
        })?;
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
        spawn_named(scope, "urikey-reader", move || {
            read_inputs(
                inputs,
                config,
                threads,
                limits,
                shape,
                &reader_raw,
                &chunk_tx,
            );
        })?;
        // A batch is handed over only when the writer is free: one batch
        // is being written, one processed, and one cut by the reader.
        let (out_tx, out_rx) = mpsc::sync_channel::<ToWriter>(0);
        let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<ChunkState>>();
        let render = &render;
        let pool = &pool;
        let prior = config.prior.as_deref();
        let writer = spawn_named(scope, "urikey-writer", move || {
            write_all(output, &out_rx, &recycle_tx, render, prior, pool)
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
        .map_err(|source| Error::Thread {
            what: format!("thread {name}"),
            source,
        })
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
