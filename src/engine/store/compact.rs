//! Merging runs: the union of sorted runs as one sorted stream, written
//! into one run (compaction, `state merge`), and the policy that keeps the
//! number of runs small after each commit.
//!
//! Runs are kept at sizes that roughly double from the newest to the
//! oldest: after a commit, the smallest runs are merged while together
//! they hold at least half the keys of the next larger run (as a binary
//! counter carries), and whenever there are more than [`MAX_RUNS`]. A key
//! is rewritten about log₂(store / commit) times over the store's life, and
//! a lookup of a new key visits about that many runs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

use super::error::StoreError;
use super::run_file::{RunFile, RunIter, RunMeta, RunWriter};

/// Most runs a store keeps after a commit.
pub const MAX_RUNS: usize = 16;

/// The runs to merge after a commit, as indices into `keys` (each run's
/// number of keys): the smallest ones, or none.
pub fn plan(keys: &[u64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    // Largest first; the tail is the smallest.
    order.sort_by_key(|&i| Reverse(keys[i]));
    let n = order.len();
    if n < 2 {
        return Vec::new();
    }
    let mut take = 1usize;
    let mut acc = keys[order[n - 1]];
    while take < n && acc.saturating_mul(2) >= keys[order[n - 1 - take]] {
        acc += keys[order[n - 1 - take]];
        take += 1;
    }
    // Too many runs: merge the smallest down to the limit.
    let keep = n.saturating_sub(take);
    if keep + 1 > MAX_RUNS {
        take = n - (MAX_RUNS - 1);
    }
    if take < 2 {
        return Vec::new();
    }
    let mut chosen: Vec<usize> = order[n - take..].to_vec();
    chosen.sort_unstable();
    chosen
}

/// The union of several runs in ascending order, each fingerprint once,
/// with which of two groups of runs hold it: runs `..split` are group A,
/// the rest group B.
pub struct Union<'a> {
    iters: Vec<RunIter<'a>>,
    heap: BinaryHeap<Reverse<(u128, usize)>>,
    split: usize,
}

impl<'a> Union<'a> {
    /// The union of `runs`; runs `..split` are group A.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] when a first block fails its checksum.
    pub fn new(runs: &[&'a RunFile], split: usize) -> Result<Self, StoreError> {
        let mut u = Self {
            iters: runs.iter().map(|r| r.iter()).collect(),
            heap: BinaryHeap::with_capacity(runs.len()),
            split,
        };
        for r in runs {
            r.advise(true);
        }
        for i in 0..u.iters.len() {
            u.refill(i)?;
        }
        Ok(u)
    }

    fn refill(&mut self, i: usize) -> Result<(), StoreError> {
        if let Some(next) = self.iters[i].next() {
            self.heap.push(Reverse((next?, i)));
        }
        Ok(())
    }

    /// The next fingerprint, and whether group A and group B hold it.
    ///
    /// # Errors
    /// [`StoreError::Corrupt`] when a block fails its checksum.
    pub fn next_fp(&mut self) -> Result<Option<(u128, bool, bool)>, StoreError> {
        let Some(Reverse((fp, i))) = self.heap.pop() else {
            return Ok(None);
        };
        let (mut in_a, mut in_b) = (i < self.split, i >= self.split);
        self.refill(i)?;
        while let Some(&Reverse((next, j))) = self.heap.peek() {
            if next != fp {
                break;
            }
            self.heap.pop();
            in_a |= j < self.split;
            in_b |= j >= self.split;
            self.refill(j)?;
        }
        Ok(Some((fp, in_a, in_b)))
    }
}

/// Writes the union of `runs` into a new run at `path`.
///
/// # Errors
/// [`StoreError::Corrupt`] when an input block fails its checksum (the
/// partial output is removed), [`StoreError::Io`].
pub fn merge_into(path: &Path, runs: &[&RunFile]) -> Result<RunMeta, StoreError> {
    write_selected(path, runs, runs.len(), |_, _| true)
}

/// Writes into `path` the fingerprints of the union of `runs` that `keep`
/// accepts, given whether group A (runs `..split`) and group B hold each.
///
/// # Errors
/// As [`merge_into`].
pub fn write_selected(
    path: &Path,
    runs: &[&RunFile],
    split: usize,
    keep: impl Fn(bool, bool) -> bool,
) -> Result<RunMeta, StoreError> {
    let expected: u64 = runs.iter().map(|r| r.key_count()).sum();
    let written = (|| {
        let mut w = RunWriter::create(path, expected)?;
        let mut u = Union::new(runs, split)?;
        while let Some((fp, a, b)) = u.next_fp()? {
            if keep(a, b) {
                w.push(fp)?;
            }
        }
        w.finish()
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &Path, name: &str, keys: &[u128]) -> RunFile {
        let path = dir.join(name);
        let mut w = RunWriter::create(&path, keys.len() as u64).unwrap();
        for &k in keys {
            w.push(k).unwrap();
        }
        w.finish().unwrap();
        RunFile::open(&path).unwrap()
    }

    #[test]
    fn compact_plan_carries_like_a_binary_counter() {
        assert!(plan(&[]).is_empty());
        assert!(plan(&[100]).is_empty());
        // A small new run beside a large one stays apart.
        assert!(plan(&[1000, 10]).is_empty());
        // Half of the next: merged, and the carry goes on.
        assert_eq!(plan(&[1000, 500]), vec![0, 1]);
        assert_eq!(plan(&[1000, 300, 200]), vec![0, 1, 2]);
        assert_eq!(plan(&[4000, 300, 200]), vec![1, 2]);
        // Order in `keys` does not matter.
        assert_eq!(plan(&[200, 4000, 300]), vec![0, 2]);
        // Never more than MAX_RUNS.
        let many: Vec<u64> = (0..20).map(|i| 3u64.pow(20 - i)).collect();
        let merged = plan(&many);
        assert_eq!(many.len() - merged.len() + 1, MAX_RUNS);
        // Simulated commits of equal size: runs stay few.
        let mut runs: Vec<u64> = Vec::new();
        for _ in 0..1000 {
            runs.push(100);
            let m = plan(&runs);
            if !m.is_empty() {
                let sum: u64 = m.iter().map(|&i| runs[i]).sum();
                runs = runs
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !m.contains(i))
                    .map(|(_, &k)| k)
                    .collect();
                runs.push(sum);
            }
            assert!(runs.len() <= 11, "{runs:?}");
        }
    }

    #[test]
    fn compact_union_marks_groups_and_merges() {
        let dir = tempfile::tempdir().unwrap();
        let a = run(dir.path(), "a", &[1, 3, 5, 7]);
        let b = run(dir.path(), "b", &[2, 3, 8]);
        let c = run(dir.path(), "c", &[3, 8, 9]);
        let mut u = Union::new(&[&a, &b, &c], 1).unwrap();
        let mut got = Vec::new();
        while let Some(x) = u.next_fp().unwrap() {
            got.push(x);
        }
        assert_eq!(
            got,
            [
                (1, true, false),
                (2, false, true),
                (3, true, true),
                (5, true, false),
                (7, true, false),
                (8, false, true),
                (9, false, true)
            ]
        );
        let out = dir.path().join("m");
        let meta = merge_into(&out, &[&a, &b, &c]).unwrap();
        assert_eq!(meta.keys, 7);
        // Only what group B adds to group A.
        let out = dir.path().join("n");
        let meta = write_selected(&out, &[&a, &b, &c], 1, |a, b| b && !a).unwrap();
        assert_eq!(meta.keys, 3);
        let n = RunFile::open(&out).unwrap();
        let keys: Vec<u128> = n.iter().map(Result::unwrap).collect();
        assert_eq!(keys, [2, 8, 9]);
    }
}
