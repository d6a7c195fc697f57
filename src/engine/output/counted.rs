//! The `--count` output: every first-seen line with its count
//! (`COUNT\tLINE\n`, in first-seen order), formatted in pieces by several
//! threads and written in order by the writer thread.
//!
//! The output is written after the input has ended, when nothing else
//! runs: formatted by one thread, it was a quarter of the run.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::{mpsc, Condvar, Mutex, PoisonError};

use super::out_buf::OutBuf;
use crate::engine::batch::{Uniques, KNOWN, OWNED};
use crate::engine::input::map_window::MapWindow;
use crate::engine::seen::shard::SHARDS;

/// Lines in a piece: 8 Ki lines are about 700 KB of output on the crawl
/// dump, well under the window a formatter maps ahead of its lines (so
/// that what one formatter releases behind it, the other has read).
const PIECE_LINES: usize = 8 << 10;

/// Pieces formatted ahead of the one being written, per formatter.
const BUFFERS_PER_FORMATTER: usize = 2;

/// Appends every line of `uniques` with its count to `pending`, writing it
/// out whenever it holds `write_bytes`, formatted by `threads` threads.
/// `counts` holds each shard's counts by id.
///
/// # Errors
/// The output's.
pub fn write_counted(
    uniques: &Uniques,
    counts: &[Vec<u64>],
    pending: &mut OutBuf,
    output: &mut (dyn Write + Send),
    write_bytes: usize,
    threads: usize,
) -> io::Result<()> {
    let lines = uniques.spans.len().min(uniques.shards.len());
    let firsts = first_ids(&uniques.shards);
    let pieces = firsts.len();
    let piece_range = |piece: usize| {
        let start = piece * PIECE_LINES;
        start..(start + PIECE_LINES).min(lines)
    };
    let formatters = threads.min(pieces);
    if formatters < 2 {
        // Formatted straight into the output buffer.
        let mut window = MapWindow::default();
        for (piece, &first) in firsts.iter().enumerate() {
            let buf = pending.append();
            format_piece(uniques, counts, piece_range(piece), first, &mut window, buf);
            if pending.len() >= write_bytes {
                pending.write_some(output)?;
            }
        }
        window.leave(&uniques.maps);
        return Ok(());
    }
    let write = |buf: &[u8]| {
        pending.append().extend_from_slice(buf);
        if pending.len() >= write_bytes {
            pending.write_some(output)?;
        }
        Ok(())
    };
    let claims = Claims {
        state: Mutex::new(ClaimState {
            next: 0,
            free: (0..formatters * BUFFERS_PER_FORMATTER)
                .map(|_| Vec::new())
                .collect(),
            stop: false,
        }),
        freed: Condvar::new(),
    };
    let (done_tx, done_rx) = mpsc::channel::<(usize, Vec<u8>)>();
    std::thread::scope(|scope| {
        let mut spawned = 0;
        for _ in 0..formatters {
            let (claims, firsts, done_tx) = (&claims, &firsts, done_tx.clone());
            let formatter = move || {
                let mut window = MapWindow::default();
                while let Some((piece, mut buf)) = claims.take(pieces) {
                    let Some(&first) = firsts.get(piece) else {
                        break;
                    };
                    format_piece(
                        uniques,
                        counts,
                        piece_range(piece),
                        first,
                        &mut window,
                        &mut buf,
                    );
                    if done_tx.send((piece, buf)).is_err() {
                        break;
                    }
                }
                window.leave(&uniques.maps);
            };
            let thread = std::thread::Builder::new().name("urikey-format".into());
            spawned += usize::from(thread.spawn_scoped(scope, formatter).is_ok());
        }
        drop(done_tx);
        if spawned == 0 {
            return Err(io::Error::other(
                "no thread could be started to format the counts",
            ));
        }
        let written = write_in_order(&done_rx, pieces, &claims, write);
        if written.is_err() {
            claims.stop();
        }
        written
    })
}

/// Receives formatted pieces and hands them to `write` in piece order,
/// giving each buffer back for another piece once written.
fn write_in_order(
    done: &mpsc::Receiver<(usize, Vec<u8>)>,
    pieces: usize,
    claims: &Claims,
    mut write: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let mut ready = BTreeMap::new();
    let mut next = 0;
    while next < pieces {
        let Ok((piece, buf)) = done.recv() else {
            // Not reached: the formatters stop only when every piece is
            // claimed, and each claimed piece is sent.
            return Err(io::Error::other("a formatting thread stopped early"));
        };
        ready.insert(piece, buf);
        while let Some(mut buf) = ready.remove(&next) {
            write(&buf)?;
            buf.clear();
            claims.give_back(buf);
            next += 1;
        }
    }
    Ok(())
}

/// The pieces not claimed yet and the buffers free to format them into.
///
/// A formatter takes a buffer and the next piece at once, so every piece
/// claimed has its buffer: the piece the writer waits for is always being
/// formatted, and the bounded buffers cannot all be held by later pieces.
struct Claims {
    state: Mutex<ClaimState>,
    freed: Condvar,
}

struct ClaimState {
    next: usize,
    free: Vec<Vec<u8>>,
    /// The writer failed: no more pieces.
    stop: bool,
}

impl Claims {
    /// The next piece and a buffer for it, waiting for a free buffer;
    /// `None` once all `pieces` are claimed or the writer failed.
    fn take(&self, pieces: usize) -> Option<(usize, Vec<u8>)> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if state.stop || state.next >= pieces {
                return None;
            }
            if let Some(buf) = state.free.pop() {
                let piece = state.next;
                state.next += 1;
                return Some((piece, buf));
            }
            state = self
                .freed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn give_back(&self, buf: Vec<u8>) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.free.push(buf);
        drop(state);
        self.freed.notify_one();
    }

    fn stop(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.stop = true;
        drop(state);
        self.freed.notify_all();
    }
}

/// For each piece of [`PIECE_LINES`] lines, the id in each shard of the
/// first key of that shard in the piece: the number of keys of the shard
/// before the piece.
fn first_ids(shards: &[u8]) -> Vec<[u32; SHARDS]> {
    let mut seen = [0u32; SHARDS];
    shards
        .chunks(PIECE_LINES)
        .map(|piece| {
            let first = seen;
            for &s in piece {
                if let Some(n) = seen.get_mut(usize::from(s)) {
                    *n += 1;
                }
            }
            first
        })
        .collect()
}

/// Appends the lines `range` of `uniques` with their counts to `out`;
/// `ids` holds the id of the first key of each shard in the range.
fn format_piece(
    uniques: &Uniques,
    counts: &[Vec<u64>],
    range: std::ops::Range<usize>,
    mut ids: [u32; SHARDS],
    window: &mut MapWindow,
    out: &mut Vec<u8>,
) {
    let spans = uniques.spans.get(range.clone()).unwrap_or_default();
    let shards = uniques.shards.get(range).unwrap_or_default();
    for (span, &s) in spans.iter().zip(shards) {
        let s = usize::from(s) % SHARDS;
        // Not reached otherwise: every first-seen key has its count.
        let count = counts
            .get(s)
            .and_then(|c| c.get(ids[s] as usize))
            .copied()
            .unwrap_or(0);
        ids[s] += 1;
        if count & KNOWN != 0 {
            // The prior set held the key: not new, not printed.
            continue;
        }
        let (at, len) = (span.at as usize, span.len as usize);
        let line = if span.input == OWNED {
            uniques.bytes.get(at..at + len).unwrap_or_default()
        } else {
            window.slice(&uniques.maps, span.input as usize, at, len)
        };
        push_decimal(out, count);
        out.push(b'\t');
        out.extend_from_slice(line);
        out.push(b'\n');
    }
}

/// Appends `n` in decimal.
fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_push_decimal() {
        for n in [0u64, 7, 10, 99, 12345, u64::MAX] {
            let mut v = Vec::new();
            push_decimal(&mut v, n);
            assert_eq!(v, n.to_string().as_bytes());
        }
    }

    #[test]
    fn counted_pieces_are_written_in_order_whatever_order_they_arrive_in() {
        let claims = Claims {
            state: Mutex::new(ClaimState {
                next: 0,
                free: Vec::new(),
                stop: false,
            }),
            freed: Condvar::new(),
        };
        let (tx, rx) = mpsc::channel();
        for piece in [2usize, 0, 3, 1] {
            tx.send((piece, vec![b'a' + piece as u8])).expect("send");
        }
        let mut out = Vec::new();
        write_in_order(&rx, 4, &claims, |buf| {
            out.extend_from_slice(buf);
            Ok(())
        })
        .expect("in order");
        assert_eq!(out, b"abcd");
        // Every buffer came back, emptied.
        let state = claims.state.lock().expect("lock");
        assert_eq!(state.free.len(), 4);
        assert!(state.free.iter().all(Vec::is_empty));
    }
}
