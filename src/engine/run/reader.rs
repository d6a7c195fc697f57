//! The reader thread: every input in order, cut at newlines into chunks,
//! handed to the driver a batch at a time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::Arc;

use crate::engine::chunk::{Chunk, ChunkShape, Limits, SliceChunker, StreamChunker};
use crate::engine::error::Error;
use crate::engine::input::{self, Input, MmapChoice, Source};

/// The reader thread: every input in order, cut into chunks, sent to the
/// driver a batch at a time (the last one may be shorter).
pub(super) fn read_inputs(
    inputs: Vec<Input>,
    mmap: MmapChoice,
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
        let name = input.name();
        let source = match input::open(input, mmap, raw_read) {
            Ok(s) => s,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        match source {
            Source::Slice(bytes) => {
                let mut chunker = SliceChunker::new(bytes, index, limits);
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
            Source::Stream {
                reader,
                compression,
            } => {
                let mut chunker = StreamChunker::new(reader, index, limits);
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
/// than one a chunk: a channel of chunks blocks the reader on nearly every
/// send, and each chunk the driver takes wakes it again. Every batch but
/// the last is full, so the chunks of the one
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
    fn finish(self) {
        if !self.batch.is_empty() {
            let _ = self.tx.send(Ok(self.batch));
        }
    }
}
