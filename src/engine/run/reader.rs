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
use crate::engine::input::formats::records::{Lines, RecordReader};
use crate::engine::input::formats::{self, Format, InputFormat};
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
        let format = &config.format;
        let opened = match formats::records::open(
            input,
            format,
            config.field,
            config.mmap,
            threads,
            raw_read,
        ) {
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
            (_, Source::Members(reader)) => {
                let mut chunker = BlockChunker::new(reader, index, limits);
                chunker.extract = extract;
                if !send_chunks(&mut chunker, &mut out, name, Some(Compression::Gzip)) {
                    return;
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
                if !send_chunks(&mut chunker, &mut out, name, compression) {
                    return;
                }
            }
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
        // Offset of the next chunk in the stream of lines the rows make.
        let mut offset = 0u64;
        let mut alive = true;
        let read =
            formats::parquet::for_each_group(name, bytes, &format.column, threads, &mut |rows| {
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
