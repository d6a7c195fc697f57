//! The writer thread: the selected lines of each batch, in order, gathered
//! into large writes; once a run spills, its lines file and, at the end,
//! the resolved output. Batches are handed back to the driver for reuse.

use std::io::Write;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::time::Instant;

use crate::engine::batch::{ChunkState, Render, Uniques};
use crate::engine::error::Error;
use crate::engine::input::SharedBytes;
use crate::engine::output::counted;
use crate::engine::output::out_buf::OutBuf;
use crate::engine::prior::PriorKeys;
use crate::engine::share;
use crate::engine::spill::{self, EntryWriter, SpillDir, SpillTuning, SpillWriter, Spilled};
use crate::engine::stats::Stats;

/// The writer thread writes its gathered output in pieces of at least this
/// many bytes (one chunk's output can take it past that).
pub(super) const WRITE_BYTES: usize = 1 << 20;

/// What the writer thread is sent, in output order.
pub(super) enum ToWriter {
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
pub(super) fn write_all(
    output: &mut (dyn Write + Send),
    rx: &Receiver<ToWriter>,
    recycle: &mpsc::Sender<Vec<ChunkState>>,
    render: &Render<'_>,
    prior: Option<&dyn PriorKeys>,
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
                    new = spill::finish(&dir, spilled, select, tuning, prior, output, pool)?;
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

/// The writer thread has stopped (its error is reported).
pub(super) struct WriterStopped;

/// Sends `msg` to the writer thread, which takes it once it is done with
/// the one before; the wait counts in `stats`.
pub(super) fn hand_over(
    out: &SyncSender<ToWriter>,
    msg: ToWriter,
    stats: &mut Stats,
) -> Result<(), WriterStopped> {
    let waited = Instant::now();
    let sent = out.send(msg);
    stats.phases.writer_wait += waited.elapsed();
    sent.map_err(|_| WriterStopped)
}
