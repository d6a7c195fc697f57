//! Phase 3: the selected lines of each chunk, in chunk order, gathered from
//! the chunk and the key arena into the writer's buffer; `surt` and `hash`
//! keys, which are not in memory as printed, are formatted first; with
//! counts, the first line of every key is kept instead.

use crate::uri::key::{KeyFormat, Keyer};

use super::super::input::SharedBytes;
use super::super::prefetch::prefetch;
use super::super::spill::EntryWriter;
use super::super::{Emit, Field, Select};
use super::{ChunkState, LineRec, Run, Src};
use crate::engine::input::lines::{field_span, replace_field};

/// How many lines ahead [`ChunkState::gather_selected`] prefetches a line
/// it will copy. The chunk was read in phase 1 and is back in memory by
/// now, in pages the CPU's own prefetcher follows only one at a time (the
/// prefetch saves the writer about a tenth of its time). Only selected
/// lines are prefetched: a writer that copies few lines would lose more
/// than it gains on the others.
const GATHER_AHEAD: usize = 16;

impl ChunkState {
    /// Appends what `emit` prints for valid line `rec` (no newline).
    fn emit_into(&self, rec: &LineRec, r: &Render<'_>, out: &mut Vec<u8>, tmp: &mut Vec<u8>) {
        match (r.emit, r.field) {
            (Emit::Key, None) => {
                let key = self.key(rec);
                if r.keyer.format() == KeyFormat::Uri {
                    out.extend_from_slice(key);
                } else {
                    r.keyer.write_key(key, out);
                }
            }
            (Emit::Key, Some(f)) => {
                // The line with its URL column replaced by the key.
                let line = self.line(rec);
                tmp.clear();
                r.keyer.write_key(self.key(rec), tmp);
                let mut unquoted = Vec::new();
                match field_span(line, f, &mut unquoted) {
                    Some(span) => replace_field(line, span, f, tmp, out),
                    None => out.extend_from_slice(line), // not reached: the line is valid
                }
            }
            (Emit::Original, _) => out.extend_from_slice(self.line(rec)),
        }
    }

    /// Phase 3: the selected lines into `self.out`.
    pub fn render(&mut self, r: &Render<'_>) {
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        // Enough for every line and its newline unless keys grew.
        out.reserve(self.bytes().len() + 1);
        let mut tmp = Vec::new();
        for (i, rec) in self.recs.iter().enumerate() {
            let (is_new, _) = self.flag(i);
            let selected = match r.select {
                Select::Unique => is_new,
                Select::Duplicates => !is_new,
                Select::Counts => false,
            };
            if selected {
                self.emit_into(rec, r, &mut out, &mut tmp);
                out.push(b'\n');
            }
        }
        self.out = out;
    }

    /// Phase 3 in the writer thread: appends the output of the lines `r`
    /// selects to `out`, copied from the chunk and the arena (for
    /// [`Render::in_memory`] settings), or the rendered output.
    ///
    /// Selected lines that lie back to back in the same place are copied
    /// as one run (about 1.5 lines a run on the 1 GiB crawl dump), in the
    /// same pass that picks them. One copy into a large buffer, then one
    /// `write` per buffer, costs less than handing the kernel the lines
    /// where they lie: a vectored write of one piece per run spent 0.6 s
    /// of system time per GiB against 0.3 s, for 0.05 s more user time.
    /// Selected lines are prefetched [`GATHER_AHEAD`] lines early.
    pub fn gather_selected(&self, r: &Render<'_>, out: &mut Vec<u8>) {
        if !r.in_memory() {
            out.extend_from_slice(&self.out);
            return;
        }
        let data = self.bytes();
        let copy = |run: Run, out: &mut Vec<u8>| {
            let src: &[u8] = match run.src {
                Src::Chunk => data,
                Src::Arena => &self.arena,
            };
            out.extend_from_slice(
                src.get(run.start as usize..run.end as usize)
                    .unwrap_or_default(),
            );
        };
        let keys = r.emit == Emit::Key && r.field.is_none();
        let mut pending: Option<Run> = None;
        let selected = |i: usize| {
            let (is_new, _) = self.flag(i);
            match r.select {
                Select::Unique => is_new,
                Select::Duplicates => !is_new,
                Select::Counts => false,
            }
        };
        for (i, rec) in self.recs.iter().enumerate() {
            let ahead = i + GATHER_AHEAD;
            if let Some(line) = self.recs.get(ahead).filter(|_| selected(ahead)) {
                prefetch(data, line.start as usize);
            }
            if !selected(i) {
                continue;
            }
            let (src, start, len) = if keys && rec.key_in_arena {
                // The arena keeps a newline after every key.
                (Src::Arena, rec.key_start, rec.key_len + 1)
            } else if keys {
                (Src::Chunk, rec.key_start, rec.key_len)
            } else {
                (Src::Chunk, rec.start, rec.len)
            };
            let mut end = start + len;
            let newline_follows = match src {
                Src::Chunk if start == rec.start && len == rec.len => rec.newline_follows,
                Src::Chunk => data.get(end as usize).copied() == Some(b'\n'),
                Src::Arena => true,
            };
            if src == Src::Chunk && newline_follows {
                end += 1;
            }
            match &mut pending {
                Some(run) if run.src == src && run.end == start => run.end = end,
                _ => {
                    if let Some(run) = pending.replace(Run { src, start, end }) {
                        copy(run, out);
                    }
                }
            }
            if !newline_follows {
                // A line that ends with `\r\n` or the input: its own `\n`.
                if let Some(run) = pending.take() {
                    copy(run, out);
                }
                out.push(b'\n');
            }
        }
        if let Some(run) = pending {
            copy(run, out);
        }
    }

    /// Where what `emit` prints for valid line `rec` lies in the chunk
    /// (start, length), when it is a slice of it: the line, or a `uri` key
    /// that is the line's own bytes.
    fn printed_span(&self, rec: &LineRec, r: &Render<'_>) -> Option<(u32, u32)> {
        match (r.emit, r.field) {
            (Emit::Original, _) => Some((rec.start, rec.len)),
            (Emit::Key, None) if !rec.key_in_arena && r.keyer.format() == KeyFormat::Uri => {
                Some((rec.key_start, rec.key_len))
            }
            (Emit::Key, _) => None,
        }
    }

    /// Phase 3 once the run spills, in the writer thread: appends a lines
    /// file entry (see [`EntryWriter`]) for every line that may be printed:
    /// the undecided ones ([`NEW`](super::NEW) in spill mode) and, with
    /// duplicates, the lines already known to be duplicates. When the
    /// chunk is a range of a shared buffer (a mapped file) that stays
    /// alive, an entry whose printed bytes are a slice of it only says
    /// where they are.
    pub fn spill_lines(&self, r: &Render<'_>, entries: &mut EntryWriter, out: &mut Vec<u8>) {
        let shared = self.chunk.as_ref().and_then(|c| {
            let (_, base) = c.shared()?;
            Some((u32::try_from(c.input).ok()?, base as u64))
        });
        let mut tmp = Vec::new();
        for (i, rec) in self.recs.iter().enumerate() {
            let (undecided, _) = self.flag(i);
            if !undecided && r.select != Select::Duplicates {
                continue;
            }
            let seq = self.seq_base + i as u64;
            if let (Some((input, base)), Some((start, len))) = (shared, self.printed_span(rec, r)) {
                let at = base + u64::from(start);
                entries.slice(out, seq, !undecided, input, at, len);
                continue;
            }
            let at = entries.begin(out, seq, !undecided);
            self.emit_into(rec, r, out, &mut tmp);
            EntryWriter::end(out, at);
        }
    }

    /// Phase 3 with counts: notes each new line's output and its key's
    /// shard in `uniques`, in input order. An output that is a slice of a
    /// mapped input is noted by where it lies there; any other is copied.
    pub fn collect_uniques(&self, r: &Render<'_>, uniques: &mut Uniques) {
        let shared = self.chunk.as_ref().and_then(|c| {
            let (all, base) = c.shared()?;
            let input = u32::try_from(c.input).ok().filter(|&i| i != OWNED)?;
            Some((input, all, base as u64))
        });
        if let Some((input, all, _)) = shared {
            uniques.keep_map(input, all);
        }
        for (i, rec) in self.recs.iter().enumerate() {
            let (is_new, _) = self.flag(i);
            if !is_new {
                continue;
            }
            uniques.shards.push(rec.shard);
            if let (Some((input, _, base)), Some((start, len))) =
                (shared, self.printed_span(rec, r))
            {
                uniques.spans.push(UniqueSpan {
                    at: base + u64::from(start),
                    len,
                    input,
                });
                continue;
            }
            let at = uniques.bytes.len();
            self.emit_into(rec, r, &mut uniques.bytes, &mut uniques.tmp);
            uniques.spans.push(UniqueSpan {
                at: at as u64,
                len: u32::try_from(uniques.bytes.len() - at).unwrap_or(u32::MAX),
                input: OWNED,
            });
        }
    }
}

/// What phase 3 needs.
pub struct Render<'a> {
    /// What to print for a line.
    pub emit: Emit,
    /// Which lines to print.
    pub select: Select,
    /// Column mode prints whole lines.
    pub field: Option<Field>,
    /// Formats keys in `surt`/`hash` form.
    pub keyer: &'a Keyer,
}

impl Render<'_> {
    /// True when every selected line prints as bytes already in memory
    /// (the line, or a `uri` key), so the writer can gather them from
    /// where they are, without rendering them first.
    pub fn in_memory(&self) -> bool {
        let formatted = self.emit == Emit::Key
            && (self.keyer.format() != KeyFormat::Uri || self.field.is_some());
        !formatted && self.select != Select::Counts
    }
}

/// The first-seen output of every distinct key, for `--count`.
///
/// An output that is a slice of a mapped input is kept as where it lies
/// there (16 bytes), and read back from the input when the counts are
/// written, instead of a copy of every distinct line.
#[derive(Default)]
pub struct Uniques {
    /// The outputs that are not slices of a mapped input, back to back.
    pub bytes: Vec<u8>,
    /// Where each output lies, in first-seen order.
    pub spans: Vec<UniqueSpan>,
    /// The shard of each output's key. A shard numbers its keys in the
    /// order they were first seen, so the n-th output of shard `s` has the
    /// n-th count of shard `s`: no index from keys to outputs is kept.
    pub shards: Vec<u8>,
    /// Each input's shared buffer, kept for the spans in it.
    pub maps: Vec<Option<SharedBytes>>,
    /// A formatted key, while it is written.
    tmp: Vec<u8>,
}

impl Uniques {
    /// Keeps the shared buffer of input `input`.
    fn keep_map(&mut self, input: u32, all: &SharedBytes) {
        let input = input as usize;
        if self.maps.len() <= input {
            self.maps.resize(input + 1, None);
        }
        self.maps[input].get_or_insert_with(|| all.clone());
    }
}

/// The [`UniqueSpan::input`] of an output copied into [`Uniques::bytes`].
pub const OWNED: u32 = u32::MAX;

/// Where one output of [`Uniques`] lies.
#[derive(Clone, Copy, Debug)]
pub struct UniqueSpan {
    /// Its offset in its input's shared buffer, or in [`Uniques::bytes`].
    pub at: u64,
    /// Its length.
    pub len: u32,
    /// Its input, or [`OWNED`].
    pub input: u32,
}

#[cfg(test)]
mod tests {
    use super::super::{ScanConfig, NEW};
    use super::*;
    use crate::engine::input::chunk::{Chunk, ChunkData};
    use crate::uri::key::KeyScratch;
    use std::sync::atomic::Ordering;

    #[test]
    fn batch_gather_selected_from_chunk_and_arena() {
        let canon = Keyer::default();
        let data = b"http://a/x\nHTTP://A/y\r\nhttp://a/x\nhttp://a/%7e\nhttp://a/w".to_vec();
        let mut work = ChunkState {
            chunk: Some(Chunk {
                input: 0,
                offset: 0,
                data: ChunkData::Owned(data),
                truncated_tail: false,
                extract: Default::default(),
                records: None,
            }),
            ..ChunkState::default()
        };
        let scan = ScanConfig {
            keyer: &canon,
            max_line_bytes: 100,
            keep_keys: true,
        };
        work.scan(&scan, &mut KeyScratch::default());
        assert_eq!(work.valid(), 5);
        // Lines 1, 2, 4 and 5 new; line 3 a duplicate.
        for (i, f) in work.flags.iter().enumerate() {
            f.store(if i == 2 { 0 } else { NEW }, Ordering::Relaxed);
        }
        let mut render = Render {
            emit: Emit::Key,
            select: Select::Unique,
            field: None,
            keyer: &canon,
        };
        let mut out = b"before\n".to_vec();
        work.gather_selected(&render, &mut out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            "before\nhttp://a/x\nhttp://a/y\nhttp://a/~\nhttp://a/w\n"
        );
        render.emit = Emit::Original;
        let mut out = Vec::new();
        work.gather_selected(&render, &mut out);
        assert_eq!(
            String::from_utf8_lossy(&out),
            "http://a/x\nHTTP://A/y\nhttp://a/%7e\nhttp://a/w\n"
        );
        render.select = Select::Duplicates;
        let mut out = Vec::new();
        work.gather_selected(&render, &mut out);
        assert_eq!(out, b"http://a/x\n");
    }
}
