//! The lines a record format writes for the pipeline, gathered into
//! chunks: one line per URL, one per invalid record.

use super::{Extract, Item};
use crate::engine::input::chunk::{Chunk, ChunkData, RecordFault, RecordIndex};

impl core::fmt::Debug for Lines {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Lines")
            .field("input", &self.input)
            .finish_non_exhaustive()
    }
}

/// The lines a record format writes, gathered into chunks: one line per
/// URL (what `--emit original` prints), and one per invalid record (its
/// text, line breaks replaced by spaces), with where each comes from.
pub struct Lines {
    input: usize,
    extract: Extract,
    buf: Vec<u8>,
    index: RecordIndex,
    /// Offset of the next chunk in the stream of written lines.
    offset: u64,
}

impl Lines {
    /// Lines of input number `input`, whose URL `extract` finds.
    pub fn new(input: usize, extract: Extract) -> Self {
        Self {
            input,
            extract,
            buf: Vec::new(),
            index: RecordIndex::default(),
            offset: 0,
        }
    }

    /// Bytes gathered.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when nothing is gathered.
    pub fn is_empty(&self) -> bool {
        self.index.pos.is_empty()
    }

    /// Adds a line for `item`.
    pub fn push(&mut self, item: Item<'_>) {
        let ordinal = self.index.pos.len() as u32;
        match item {
            Item::Url { text, pos } => {
                self.buf.extend_from_slice(text);
                self.index.pos.push(pos);
            }
            Item::Fault {
                text,
                pos,
                problem,
                index,
            } => {
                super::push_as_one_line(&mut self.buf, text);
                self.index.pos.push(pos);
                self.index.faults.push(RecordFault {
                    ordinal,
                    problem,
                    index: index.min(text.len()) as u32,
                });
            }
        }
        self.buf.push(b'\n');
    }

    /// The lines gathered as a chunk (`None` when there are none), once
    /// `input_end` bytes of the input are read.
    pub fn take(&mut self, input_end: u64) -> Option<Chunk> {
        if self.is_empty() {
            return None;
        }
        // The next chunk starts with the room this one took: grown from
        // empty, its buffers were copied at each doubling.
        let (len, lines) = (self.buf.len(), self.index.pos.len());
        let data = std::mem::replace(&mut self.buf, Vec::with_capacity(len));
        let next = RecordIndex {
            pos: Vec::with_capacity(lines),
            ..RecordIndex::default()
        };
        let mut index = std::mem::replace(&mut self.index, next);
        index.input_end = input_end;
        let chunk = Chunk {
            input: self.input,
            offset: self.offset,
            truncated_tail: false,
            extract: self.extract,
            records: Some(Box::new(index)),
            data: ChunkData::Owned(data),
        };
        self.offset += chunk.bytes().len() as u64;
        Some(chunk)
    }
}
