//! The reader thread: every input in order, cut at newlines into chunks
//! (or, for the record formats, into chunks of the URLs their records
//! hold), handed to the driver a batch at a time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::Arc;

use crate::engine::error::Error;
use crate::engine::input::blocks::BlockChunker;
use crate::engine::input::chunk::{
    Chunk, ChunkShape, Limits, SliceChunker, StreamChunker, StreamChunks,
};
#[cfg(feature = "parquet")]
use crate::engine::input::formats::ParquetFile;
use crate::engine::input::formats::{self, read_error, Lines, Opened, Reader, RecordSource};
use crate::engine::input::{Compression, Input, Source};
use crate::engine::Config;

/// The reader thread: every input in order, cut into chunks, sent to the
/// driver a batch at a time (the last one may be shorter).
pub(super) fn read_inputs(
    inputs: Vec<Input>,
    config: &Config,
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
        let opened = formats::open(
            input,
            &config.format,
            config.field,
            config.mmap,
            threads,
            raw_read,
        );
        let Opened { name, reader, .. } = match opened {
            Ok(o) => o,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        let more = match reader {
            Reader::Records {
                records,
                compression,
            } => send_records(records, index, &name, compression, &mut out),
            #[cfg(feature = "parquet")]
            Reader::Parquet(file) => send_parquet(file, &name, index, &mut out, threads),
            Reader::Lines {
                source: Source::Slice(bytes),
                extract,
            } => {
                let mut chunker = SliceChunker::new(bytes, index, limits);
                chunker.extract = extract;
                loop {
                    chunker.set_chunk_size(out.next_size());
                    let Some((chunk, consumed)) = chunker.next_chunk() else {
                        break true;
                    };
                    raw_read.fetch_add(consumed, Ordering::Relaxed);
                    if !out.push(chunk) {
                        break false;
                    }
                }
            }
            Reader::Lines {
                source: Source::Members(reader),
                extract,
            } => {
                let mut chunker = BlockChunker::new(reader, index, limits);
                chunker.extract = extract;
                send_chunks(&mut chunker, &mut out, name, Some(Compression::Gzip))
            }
            Reader::Lines {
                source:
                    Source::Stream {
                        reader,
                        compression,
                    },
                extract,
            } => {
                let mut chunker = StreamChunker::new(reader, index, limits);
                chunker.extract = extract;
                send_chunks(&mut chunker, &mut out, name, compression)
            }
        };
        if !more {
            return;
        }
    }
    out.finish();
}

/// Sends every chunk of `chunker`; on a read error, the chunks before it
/// and then the error, naming `path` and where it happened. False when the
/// run stops (an error, or the driver has gone).
fn send_chunks(
    chunker: &mut impl StreamChunks,
    out: &mut BatchSender<'_>,
    path: String,
    compression: Option<Compression>,
) -> bool {
    loop {
        chunker.set_chunk_size(out.next_size());
        match chunker.next_chunk() {
            Ok(Some(chunk)) => {
                if !out.push(chunk) {
                    return false;
                }
            }
            Ok(None) => return true,
            Err(source) => {
                out.flush();
                let _ = out.tx.send(Err(Error::Read {
                    path,
                    compression,
                    offset: chunker.position(),
                    source,
                }));
                return false;
            }
        }
    }
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

/// Sends the lines of a record format's records, a chunk at a time;
/// false when the run is to stop (the driver is gone, or an error was
/// sent).
fn send_records(
    mut records: Box<dyn RecordSource>,
    index: usize,
    name: &str,
    compression: Option<Compression>,
    out: &mut BatchSender<'_>,
) -> bool {
    let mut lines = Lines::new(index, records.extract());
    loop {
        let more = records.next_record(&mut |item| lines.push(item));
        if lines.len() >= out.next_size() || !matches!(more, Ok(true)) {
            if let Some(chunk) = lines.take(records.offset()) {
                if !out.push(chunk) {
                    return false;
                }
            }
        }
        match more {
            Ok(true) => {}
            Ok(false) => return true,
            Err(e) => {
                out.flush();
                let (format, offset) = (records.format(), records.offset());
                let _ = out
                    .tx
                    .send(Err(read_error(e, name, format, compression, offset)));
                return false;
            }
        }
    }
}

/// Reads a Parquet input's column into the batches, row groups on
/// `threads` threads; false when the run is to stop (the driver is gone,
/// or an error was sent).
#[cfg(feature = "parquet")]
fn send_parquet(
    file: ParquetFile,
    name: &str,
    index: usize,
    out: &mut BatchSender<'_>,
    threads: usize,
) -> bool {
    // Offset of the next chunk in the stream of lines the rows make.
    let mut offset = 0u64;
    let mut alive = true;
    let read = file.for_each_group(name, threads, &mut |rows| {
        let mut chunks = rows.chunks(index);
        while let Some(chunk) = chunks.next(out.next_size(), offset) {
            offset += chunk.bytes().len() as u64;
            alive = out.push(chunk);
            if !alive {
                break;
            }
        }
        alive
    });
    if let Err(e) = read {
        out.flush();
        let _ = out.tx.send(Err(e));
        return false;
    }
    alive
}
