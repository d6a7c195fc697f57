//! Keys and fingerprints of a batch of separate lines, on all cores: the one
//! loop behind [`SeenSet`](super::SeenSet) and the Python package's batch
//! calls (`canonicalize_many`, `fingerprints`, `Deduplicator`, `SeenStore`).
//!
//! A whole-file run keys its lines in phase 1 instead
//! (`engine/batch/scan.rs`): there a line is found inside a chunk of text,
//! its URL is extracted from a field or a record, and its key is kept as an
//! offset into the chunk; here every line comes on its own.
//!
//! Lines are cut into runs (at most [`RUN`] lines, and four per thread for
//! smaller batches) that rayon workers take one at a time; each run has its
//! own scratch and output arena, so the workers share nothing. A batch
//! under [`PARALLEL_FROM`] lines stays on the calling thread: handing work
//! to the pool costs a few microseconds, as much as keying about a hundred
//! URLs. The caller picks the pool (`install`).
//!
//! ```
//! use urikey::engine::line_keys::{fingerprints, KeyRef, Keys};
//! use urikey::uri::key::{KeyConfig, KeyScratch};
//! let keyer = KeyConfig::default().keyer();
//! let lines = [Some("HTTP://a.com/x"), None, Some("http://a.com/ x")];
//! let keys = Keys::of(&keyer, &lines);
//! let got: Vec<_> = keys.iter().collect();
//! assert!(matches!(got[0], KeyRef::Key(b"http://a.com/x")));
//! assert!(matches!(got[1], KeyRef::Null));
//! assert!(matches!(got[2], KeyRef::Invalid(_)));
//! let fps = fingerprints(&keyer, &lines);
//! let want = keyer.fingerprint(b"http://a.com/x", &mut KeyScratch::default());
//! assert_eq!(fps[0], Some(want));
//! ```

use rayon::prelude::*;

use crate::uri::key::{Key, KeyError, KeyScratch, Keyer};

/// Lines per unit of work: big enough that scheduling is noise (8192 URLs
/// take about 1 ms), small enough that two cores share the tail evenly.
pub const RUN: usize = 8192;

/// Batches smaller than this are keyed on the calling thread.
pub const PARALLEL_FROM: usize = 4096;

/// The shortest run handed to a worker.
const MIN_RUN: usize = 1024;

/// Applies `f` to runs of `lines` (in parallel when there are many) and
/// returns the results in line order.
pub fn par_runs<L, T, F>(lines: &[L], f: F) -> Vec<T>
where
    L: Sync,
    T: Send,
    F: Fn(&[L]) -> T + Send + Sync,
{
    if lines.len() < PARALLEL_FROM {
        return vec![f(lines)];
    }
    // Four runs per thread, so that a thread that finishes early takes
    // another.
    let run = (lines.len() / (4 * rayon::current_num_threads())).clamp(MIN_RUN, RUN);
    lines.par_chunks(run).map(f).collect()
}

/// Applies `f` to every line (in parallel for long batches), each worker
/// with its own [`KeyScratch`], and returns the results in line order.
pub fn map_lines<L, T, F>(lines: &[L], f: F) -> Vec<T>
where
    L: Sync,
    T: Send,
    F: Fn(&mut KeyScratch, &L) -> T + Send + Sync,
{
    let runs = par_runs(lines, |run| {
        let mut scratch = KeyScratch::default();
        run.iter().map(|l| f(&mut scratch, l)).collect::<Vec<T>>()
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

/// The fingerprint of every line (of its `uri` key, as
/// [`Keyer::fingerprint`]), in order: `None` for a missing line.
pub fn fingerprints<L: AsRef<[u8]> + Sync>(
    keyer: &Keyer,
    lines: &[Option<L>],
) -> Vec<Option<Result<u128, KeyError>>> {
    map_lines(lines, |scratch, line| {
        line.as_ref()
            .map(|l| keyer.fingerprint(l.as_ref(), scratch))
    })
}

/// The key of `input` in the keyer's format: `Ok(true)` when it is `input`
/// itself (nothing written), `Ok(false)` when it was appended to `out`.
///
/// # Errors
/// The [`KeyError`] of an input that has no key.
#[inline]
pub fn key_into(
    keyer: &Keyer,
    input: &[u8],
    scratch: &mut KeyScratch,
    out: &mut Vec<u8>,
) -> Result<bool, KeyError> {
    match keyer.key(input, scratch)? {
        // A prefix of the input (a dropped fragment) is not the input.
        Key::Input(key) if key.len() == input.len() => return Ok(true),
        key => out.extend_from_slice(key.as_bytes()),
    }
    Ok(false)
}

/// What became of one line of a run.
#[derive(Clone, Copy, Debug)]
enum Slot {
    Null,
    Same,
    Key { start: usize, end: usize },
    Invalid(KeyError),
}

/// The keys of one run of lines, in one arena.
#[derive(Debug, Default)]
pub struct KeyRun {
    arena: Vec<u8>,
    slots: Vec<Slot>,
}

/// One line's key, read back from a [`KeyRun`] or [`Keys`].
#[derive(Clone, Copy, Debug)]
pub enum KeyRef<'a> {
    /// There was no line (`None`).
    Null,
    /// The key is the line itself.
    Same,
    /// The key.
    Key(&'a [u8]),
    /// The line has no key.
    Invalid(KeyError),
}

impl KeyRun {
    /// Keys one run of lines on the calling thread.
    pub fn of<L: AsRef<[u8]>>(keyer: &Keyer, run: &[Option<L>]) -> Self {
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
                    match key_into(keyer, input.as_ref(), &mut scratch, &mut out.arena) {
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

/// The keys of a whole batch, in line order.
#[derive(Debug)]
pub struct Keys {
    runs: Vec<KeyRun>,
}

impl Keys {
    /// Keys every line of `lines`.
    pub fn of<L: AsRef<[u8]> + Sync>(keyer: &Keyer, lines: &[Option<L>]) -> Self {
        let runs = par_runs(lines, |run| KeyRun::of(keyer, run));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uri::key::KeyConfig;

    /// Batches on both sides of the parallel threshold and of a run's end
    /// give every line's key and fingerprint in its place.
    #[test]
    fn line_keys_keep_order_across_runs() {
        let keyer = KeyConfig::default().keyer();
        for n in [0, 1, PARALLEL_FROM - 1, PARALLEL_FROM, 10_000, 3 * RUN + 5] {
            let lines: Vec<Option<String>> = (0..n)
                .map(|i| match i % 7 {
                    0 => None,
                    3 => Some(format!("http://a.com/ {i}")),
                    5 => Some(format!("http://a.com/{i}")),
                    _ => Some(format!("HTTP://A.com:80/{i}")),
                })
                .collect();
            let keys = Keys::of(&keyer, &lines);
            let fps = fingerprints(&keyer, &lines);
            assert_eq!(keys.iter().count(), n);
            assert_eq!(fps.len(), n);
            let mut scratch = KeyScratch::default();
            for ((line, key), fp) in lines.iter().zip(keys.iter()).zip(&fps) {
                match (line, key) {
                    (None, KeyRef::Null) => assert_eq!(*fp, None),
                    (Some(l), KeyRef::Invalid(_)) => {
                        assert!(l.contains(' '));
                        assert!(matches!(fp, Some(Err(_))));
                    }
                    (Some(l), KeyRef::Same) => {
                        assert!(l.starts_with("http://a.com/"));
                        let want = keyer.fingerprint(l.as_bytes(), &mut scratch).unwrap();
                        assert_eq!(*fp, Some(Ok(want)));
                    }
                    (Some(l), KeyRef::Key(k)) => {
                        assert_eq!(k, l.to_ascii_lowercase().replace(":80", "").as_bytes());
                        assert_eq!(*fp, Some(Ok(crate::uri::key::fingerprint(k))));
                    }
                    other => panic!("{other:?}"),
                }
            }
        }
    }
}
