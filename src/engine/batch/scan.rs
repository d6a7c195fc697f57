//! Phase 1, in parallel over chunks: every line becomes a key and a
//! fingerprint, or an [`Invalid`] record; fingerprints are bucketed by
//! shard.

use std::sync::atomic::AtomicU32;

use crate::uri::key::{fingerprint, KeyErrorKind, KeyScratch};

use super::super::Problem;
use super::{ChunkState, Invalid, LineRec, ScanConfig};
use crate::engine::input::formats::{extract_url, Extract, Extracted};
use crate::engine::input::lines::trim_cr;
use crate::engine::input::newlines::Newlines;
use crate::engine::seen::shard::{shard_of, Pending, SHARDS};

impl ChunkState {
    /// Phase 1: keys, fingerprints and shard buckets for every line.
    pub fn scan(&mut self, cfg: &ScanConfig<'_>, scratch: &mut KeyScratch) {
        self.recs.clear();
        self.arena.clear();
        self.invalid.clear();
        self.buckets.resize_with(SHARDS, Vec::new);
        for b in &mut self.buckets {
            b.clear();
        }
        self.lines = 0;
        self.blank = 0;
        self.out.clear();
        let Some(chunk) = &self.chunk else { return };
        let data = chunk.bytes();
        let truncated_tail = chunk.truncated_tail;
        let extract = chunk.extract;
        // Lines that stand for invalid records (record formats), in order.
        let faults = chunk.records.as_ref().map_or(&[][..], |r| &r.faults[..]);
        let mut faults = faults.iter().peekable();
        let mut pos = 0usize;
        let mut ordinal = 0u32;
        let mut newlines = Newlines::new(data);
        // The unquoted `--csv` column (moved out for the loop's borrows).
        let mut field_buf = std::mem::take(&mut self.field_buf);
        while pos < data.len() {
            let (end, next) = match newlines.next() {
                Some(i) => (i, i + 1),
                None => (data.len(), data.len()),
            };
            let cut_short = truncated_tail && next == data.len() && end == data.len();
            let raw = &data[pos..end];
            let line = trim_cr(raw);
            let line = if cut_short { raw } else { line };
            // `pos` and lengths fit in u32: chunks are capped well below 4 GiB.
            let start = pos as u32;
            if let Some(f) = faults.next_if(|f| f.ordinal == ordinal) {
                self.invalid.push(Invalid {
                    ordinal,
                    start,
                    len: line.len().min(cfg.max_line_bytes) as u32,
                    index: f.index,
                    problem: f.problem,
                });
            } else if line.is_empty() {
                self.blank += 1;
            } else if cut_short || line.len() > cfg.max_line_bytes {
                let len = line.len().min(cfg.max_line_bytes) as u32;
                self.invalid.push(Invalid {
                    ordinal,
                    start,
                    len,
                    index: cfg.max_line_bytes as u32,
                    problem: Problem::LineTooLong,
                });
            } else {
                let (field_start, url) = match extract_url(line, extract, &mut field_buf) {
                    Extracted::Url { start, url } => (start, url),
                    Extracted::Header => {
                        self.blank += 1;
                        ordinal += 1;
                        pos = next;
                        continue;
                    }
                    Extracted::Invalid { index, problem } => {
                        self.invalid.push(Invalid {
                            ordinal,
                            start,
                            len: line.len() as u32,
                            index: index as u32,
                            problem,
                        });
                        ordinal += 1;
                        pos = next;
                        continue;
                    }
                };
                match cfg.keyer.uri_key(url, scratch) {
                    // Whitespace only, under lenient reading: blank.
                    Err(e) if e.kind() == KeyErrorKind::Blank && extract == Extract::Line => {
                        self.blank += 1;
                    }
                    Err(e) => self.invalid.push(Invalid {
                        ordinal,
                        start,
                        len: line.len() as u32,
                        index: extract.line_index(line, field_start, e.index()) as u32,
                        problem: if e.kind() == KeyErrorKind::Blank {
                            Problem::EmptyField
                        } else {
                            Problem::Key(e.kind())
                        },
                    }),
                    Ok(key) => {
                        let key = key.as_bytes();
                        let fp = fingerprint(key);
                        let shard = shard_of(fp);
                        let rec = self.recs.len() as u32;
                        let (key_start, key_in_arena) = if !cfg.keep_keys {
                            (0, false)
                        } else if let Some(at) = offset_within(data, key) {
                            (at as u32, false)
                        } else {
                            let at = self.arena.len();
                            self.arena.extend_from_slice(key);
                            // The newline lets the writer print the key
                            // and its newline as one piece.
                            self.arena.push(b'\n');
                            (at as u32, true)
                        };
                        self.recs.push(LineRec {
                            start,
                            len: line.len() as u32,
                            newline_follows: next == end + 1 && line.len() == raw.len(),
                            key_start,
                            key_len: key.len() as u32,
                            key_in_arena,
                            // Fewer than 256 shards, so this is lossless.
                            shard: shard as u8,
                        });
                        self.buckets[shard].push(Pending::new(fp, rec));
                    }
                }
            }
            ordinal += 1;
            pos = next;
        }
        self.field_buf = field_buf;
        self.lines = u64::from(ordinal);
        self.flags.clear();
        self.flags
            .resize_with(self.recs.len(), || AtomicU32::new(0));
    }
}

/// Where `inner` starts within `outer`, when it is a sub-slice of it.
fn offset_within(outer: &[u8], inner: &[u8]) -> Option<usize> {
    let o = outer.as_ptr() as usize;
    let i = inner.as_ptr() as usize;
    (i >= o && i + inner.len() <= o + outer.len() && !inner.is_empty()).then(|| i - o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_offset_within() {
        let v = b"hello world".to_vec();
        assert_eq!(offset_within(&v, &v[6..]), Some(6));
        assert_eq!(offset_within(&v, b"world"), None);
    }
}
