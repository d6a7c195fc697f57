//! The batch core: keys or fingerprints of many lines, on all cores, with no
//! Python object touched (the caller has released the GIL).
//!
//! Lines are cut into runs of [`RUN`] lines that rayon workers take one at a
//! time; each run has its own scratch and output arena, so the workers share
//! nothing. A batch under [`PARALLEL_FROM`] lines stays on the calling
//! thread: handing work to the pool costs a few microseconds, as much as
//! keying about a hundred URLs.

use std::cell::RefCell;
use std::sync::mpsc;

use pyo3::Python;
use rayon::prelude::*;
use urikey::uri::key::{Key, KeyError, KeyScratch};

use crate::options::Keying;

/// Lines per unit of work: big enough that scheduling is noise (8192 URLs
/// take about 1 ms), small enough that two cores share the tail evenly.
const RUN: usize = 8192;

/// Batches smaller than this are keyed on the calling thread.
pub const PARALLEL_FROM: usize = 2 * RUN;

/// One line, as a batch call sees it: `None` for a missing value.
pub type Line<'a> = Option<&'a [u8]>;

/// Applies `f` to runs of `lines` (in parallel when there are many) and
/// returns the results in line order.
pub fn par_runs<T, F>(lines: &[Line<'_>], f: F) -> Vec<T>
where
    T: Send,
    F: Fn(&[Line<'_>]) -> T + Send + Sync,
{
    if lines.len() < PARALLEL_FROM {
        return vec![f(lines)];
    }
    lines.par_chunks(RUN).map(f).collect()
}

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

/// The key of `input` in the configured format: `Ok(true)` when it is
/// `input` itself (nothing written), `Ok(false)` when it was appended to
/// `out`.
#[inline]
pub fn key_into(
    k: &Keying,
    input: &[u8],
    scratch: &mut KeyScratch,
    out: &mut Vec<u8>,
) -> Result<bool, KeyError> {
    match k.keyer.key(input, scratch)? {
        // A prefix of the input (a dropped fragment) is not the input.
        Key::Input(key) if key.len() == input.len() => return Ok(true),
        key => out.extend_from_slice(key.as_bytes()),
    }
    Ok(false)
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

/// What became of one line of a batch.
#[derive(Clone, Copy, Debug)]
pub enum Slot {
    /// The line was `None`.
    Null,
    /// The key is the line itself.
    Same,
    /// The key is `arena[start..end]` of its run.
    Key { start: usize, end: usize },
    /// The line is not a valid URI-reference.
    Invalid(KeyError),
}

/// The keys of one run of lines.
#[derive(Default)]
pub struct KeyRun {
    arena: Vec<u8>,
    slots: Vec<Slot>,
}

/// One line's key, read back from a [`Keys`].
#[derive(Clone, Copy, Debug)]
pub enum KeyRef<'a> {
    Null,
    Same,
    Key(&'a [u8]),
    Invalid(KeyError),
}

/// The keys of a whole batch, in line order.
pub struct Keys {
    runs: Vec<KeyRun>,
}

impl KeyRun {
    /// Keys one run of lines.
    pub fn of(k: &Keying, run: &[Line<'_>]) -> Self {
        let mut scratch = KeyScratch::default();
        let mut out = KeyRun {
            arena: Vec::with_capacity(run.len() * 16),
            slots: Vec::with_capacity(run.len()),
        };
        for line in run {
            let slot = match line {
                None => Slot::Null,
                Some(input) => {
                    let start = out.arena.len();
                    match key_into(k, input, &mut scratch, &mut out.arena) {
                        Ok(true) => Slot::Same,
                        Ok(false) => Slot::Key {
                            start,
                            end: out.arena.len(),
                        },
                        Err(e) => Slot::Invalid(e),
                    }
                }
            };
            out.slots.push(slot);
        }
        out
    }

    /// The run's keys, in order.
    pub fn iter(&self) -> impl Iterator<Item = KeyRef<'_>> + '_ {
        self.slots.iter().map(move |slot| match *slot {
            Slot::Null => KeyRef::Null,
            Slot::Same => KeyRef::Same,
            Slot::Key { start, end } => KeyRef::Key(self.arena.get(start..end).unwrap_or_default()),
            Slot::Invalid(e) => KeyRef::Invalid(e),
        })
    }
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
                    let _ = tx.send((i, KeyRun::of(k, run)));
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

impl Keys {
    /// Keys every line of `lines`.
    pub fn of(k: &Keying, lines: &[Line<'_>]) -> Self {
        let runs = par_runs(lines, |run| KeyRun::of(k, run));
        Self { runs }
    }

    /// Every line's key, in order.
    pub fn iter(&self) -> impl Iterator<Item = KeyRef<'_>> + '_ {
        self.runs.iter().flat_map(KeyRun::iter)
    }

    /// The first invalid line: its position in the batch and its error.
    pub fn first_invalid(&self) -> Option<(usize, KeyError)> {
        self.iter().enumerate().find_map(|(i, k)| match k {
            KeyRef::Invalid(e) => Some((i, e)),
            _ => None,
        })
    }
}

/// The fingerprint of every line, in order: `None` for a missing or invalid
/// line.
pub fn fingerprints(k: &Keying, lines: &[Line<'_>]) -> Vec<Option<u128>> {
    let runs = par_runs(lines, |run| {
        let mut scratch = KeyScratch::default();
        run.iter()
            .map(|line| line.and_then(|input| fingerprint_of(k, input, &mut scratch).ok()))
            .collect::<Vec<_>>()
    });
    if runs.len() == 1 {
        return runs.into_iter().next().unwrap_or_default();
    }
    let mut all = Vec::with_capacity(lines.len());
    for run in runs {
        all.extend(run);
    }
    all
}

/// Why each line is invalid (the error's kebab-case name), in order:
/// `None` for a missing or valid line.
pub fn reasons(k: &Keying, lines: &[Line<'_>]) -> Vec<Option<&'static str>> {
    let runs = par_runs(lines, |run| {
        let mut scratch = KeyScratch::default();
        run.iter()
            .map(|line| {
                line.and_then(|input| k.keyer.key(input, &mut scratch).err())
                    .map(|e| e.reason())
            })
            .collect::<Vec<_>>()
    });
    runs.into_iter().flatten().collect()
}
