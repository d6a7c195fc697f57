//! The batch core's Python side: the keys and fingerprints of many lines
//! come from the engine's one loop (`urikey::engine::line_keys`, on all
//! cores, no Python object touched: the caller has released the GIL); this
//! module adds the scratch of one-URL calls and the stream that hands keyed
//! runs back to the thread holding the GIL.

use std::cell::RefCell;
use std::sync::mpsc;

use pyo3::Python;
use rayon::prelude::*;
pub use urikey::engine::line_keys::key_into;
use urikey::engine::line_keys::{self, KeyRun, RUN};
pub use urikey::engine::line_keys::{KeyRef, Keys};
use urikey::uri::key::{KeyError, KeyScratch};

use crate::options::Keying;

/// Lists at least this long are keyed by [`stream`], two runs or more.
pub const STREAM_FROM: usize = 2 * RUN;

/// One line, as a batch call sees it: `None` for a missing value.
pub type Line<'a> = Option<&'a [u8]>;

thread_local! {
    /// The scratch of one-URL calls: reused, so a call allocates nothing
    /// beyond its result.
    static SCRATCH: RefCell<(KeyScratch, Vec<u8>)> = RefCell::default();
}

/// Runs `f` with this thread's scratch and an empty output buffer.
pub fn with_scratch<R>(f: impl FnOnce(&mut KeyScratch, &mut Vec<u8>) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut pair) => {
            let (scratch, out) = &mut *pair;
            out.clear();
            f(scratch, out)
        }
        // Only reachable through re-entrance, which no caller does; a fresh
        // scratch keeps it correct anyway.
        Err(_) => f(&mut KeyScratch::default(), &mut Vec::new()),
    })
}

/// The 128-bit fingerprint of the `uri` key of `input` (what `--key hash`
/// prints, as a number).
#[inline]
pub fn fingerprint_of(
    k: &Keying,
    input: &[u8],
    scratch: &mut KeyScratch,
) -> Result<u128, KeyError> {
    k.keyer.fingerprint(input, scratch)
}

/// Keys `lines` on the pool and hands each finished run to `each` on the
/// calling thread, in line order, with the position of its first line.
/// The caller holds the GIL, which is released only while it waits: it
/// can turn the keys of one run into Python objects while the pool keys
/// the next runs (serial after the keying, that work is about a third of
/// a batch's time on 2 cores).
pub fn stream<'a>(
    py: Python<'_>,
    k: &Keying,
    lines: &[Line<'a>],
    mut each: impl FnMut(usize, KeyRun),
) {
    let total = lines.len().div_ceil(RUN);
    let (tx, mut rx) = mpsc::channel::<(usize, KeyRun)>();
    std::thread::scope(|scope| {
        // A plain thread drives the pool, so that this one stays free.
        scope.spawn(move || {
            lines
                .par_chunks(RUN)
                .enumerate()
                .for_each_with(tx, |tx, (i, run)| {
                    // The receiver outlives the senders: sending cannot fail.
                    let _ = tx.send((i, KeyRun::of(&k.keyer, run)));
                });
        });
        let mut done: Vec<Option<KeyRun>> = (0..total).map(|_| None).collect();
        let mut next = 0;
        while next < total {
            // The receiver moves in and out: a `&Receiver` cannot cross
            // threads, and `allow_threads` may run the closure elsewhere.
            let (back, got) = py.allow_threads(move || {
                let got = rx.recv();
                (rx, got)
            });
            rx = back;
            let Ok((i, run)) = got else {
                break;
            };
            if let Some(slot) = done.get_mut(i) {
                *slot = Some(run);
            }
            while let Some(run) = done.get_mut(next).and_then(Option::take) {
                each(next * RUN, run);
                next += 1;
            }
        }
    });
}

/// The fingerprint of every line, in order: `None` for a missing or invalid
/// line.
pub fn fingerprints(k: &Keying, lines: &[Line<'_>]) -> Vec<Option<u128>> {
    line_keys::map_lines(lines, |scratch, line| {
        line.and_then(|input| fingerprint_of(k, input, scratch).ok())
    })
}

/// Why each line is invalid (the error's kebab-case name), in order:
/// `None` for a missing or valid line.
pub fn reasons(k: &Keying, lines: &[Line<'_>]) -> Vec<Option<&'static str>> {
    line_keys::map_lines(lines, |scratch, line| {
        line.and_then(|input| k.keyer.key(input, scratch).err())
            .map(|e| e.reason())
    })
}
