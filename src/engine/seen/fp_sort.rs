//! Sorting records by their fingerprint, which is uniform: one counting
//! pass puts each record in a bucket of the fingerprints' top bits (below
//! those they all share, such as a shard's), then each bucket, a few
//! records, is sorted on its own. Comparisons are then a few per record
//! rather than log₂ n.

/// Records a bucket is meant to hold.
const PER_BUCKET: usize = 8;
/// Most bucket bits (64 Ki buckets).
const MAX_BITS: u32 = 16;
/// Fewer records than this are sorted by comparisons alone.
const SMALL: usize = 64;

/// Sorts `items` by `fp` (not stable), with `spare` as room: its contents
/// are replaced.
pub fn sort_by_fp<T: Copy>(items: &mut Vec<T>, spare: &mut Vec<T>, fp: impl Fn(&T) -> u128) {
    if items.len() < SMALL {
        items.sort_unstable_by_key(&fp);
        return;
    }
    let (lo, hi) = items.iter().fold((u128::MAX, 0), |(lo, hi), x| {
        let f = fp(x);
        (lo.min(f), hi.max(f))
    });
    // Top bits every fingerprint shares (128: all equal, already sorted).
    let shared = (lo ^ hi).leading_zeros();
    if shared >= 128 {
        return;
    }
    let bits = (items.len() / PER_BUCKET).ilog2().clamp(1, MAX_BITS);
    let bucket = |x: &T| ((fp(x) << shared) >> (128 - bits)) as usize;
    let mut starts = vec![0usize; (1 << bits) + 1];
    for x in items.iter() {
        if let Some(c) = starts.get_mut(bucket(x) + 1) {
            *c += 1;
        }
    }
    for b in 1..starts.len() {
        starts[b] += starts[b - 1];
    }
    spare.clear();
    spare.extend_from_slice(items);
    let mut next = starts.clone();
    for x in items.iter() {
        if let Some(at) = next.get_mut(bucket(x)) {
            if let Some(slot) = spare.get_mut(*at) {
                *slot = *x;
            }
            *at += 1;
        }
    }
    for w in starts.windows(2) {
        if let Some(b) = spare.get_mut(w[0]..w[1]) {
            b.sort_unstable_by_key(&fp);
        }
    }
    std::mem::swap(items, spare);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp_sort_sorts_uniform_skewed_and_equal_fingerprints() {
        let uniform: Vec<(u128, u32)> = (0..5000u32)
            .map(|i| (crate::uri::key::fingerprint(&i.to_le_bytes()), i))
            .collect();
        // A shard's: the top bits shared; and keys crowded into one bucket.
        let shard: Vec<(u128, u32)> = uniform
            .iter()
            .map(|&(f, i)| ((f >> 4) | (5 << 124), i))
            .collect();
        let crowded: Vec<(u128, u32)> = (0..3000u32)
            .map(|i| ((u128::from(i % 7) << 60) | u128::from(i), i))
            .collect();
        let mut spare = Vec::new();
        for case in [
            uniform,
            shard,
            crowded,
            vec![(9, 1); 100],
            vec![(3, 0), (1, 1)],
        ] {
            let mut got = case.clone();
            sort_by_fp(&mut got, &mut spare, |x| x.0);
            let mut want = case;
            want.sort_unstable();
            let keys = |v: &[(u128, u32)]| v.iter().map(|x| x.0).collect::<Vec<_>>();
            assert_eq!(keys(&got), keys(&want));
            got.sort_unstable();
            assert_eq!(got, want, "the same records");
        }
    }
}
