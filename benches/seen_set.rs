//! The streaming seen-set that the bindings feed batch by batch
//! ([`SeenSet::add_fingerprints`]): batches of 100,000 fingerprints, half of
//! them new and half repeats of earlier ones (as in a crawl dump with a
//! duplicate ratio of 0.5), until the set holds `distinct` keys. One size
//! whose tables fit in the last-level cache of most machines (1 M keys,
//! about 16 MB) and one that does not (8 M keys, about 130 MB: the set of
//! a 1 GiB dump). Every run checks the number of new verdicts.
//!
//! `add_fingerprints/8M-expected` is the 8 M case with the set told to
//! expect its keys ([`SeenSet::with_expected_keys`]), so that each table
//! grows once instead of by steps of 1.3.
//!
//! `add_lines` feeds URL lines instead ([`SeenSet::add`], which keys them
//! first, as Python's `Deduplicator.add` does): 1 M distinct URLs in the
//! same pattern of new and repeated keys.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use urikey::engine::SeenSet;
use urikey::uri::key::{fingerprint, KeyConfig};

/// Fingerprints in a batch (the Python `Deduplicator` gets one batch per
/// call; Spark partitions are fed in batches of this order).
const BATCH: usize = 100_000;

/// A SplitMix64 step: a fixed, uniform sequence without a dependency.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The batches: key `i` has the fingerprint of its decimal digits; every
/// other fingerprint repeats a key drawn uniformly from those before it.
fn batches(distinct: u64) -> Vec<Vec<u128>> {
    key_batches(distinct, |key| fingerprint(key.to_string().as_bytes()))
}

/// The same pattern of keys as URL lines, some of them spelled in a
/// different case than their first line.
fn line_batches(distinct: u64) -> Vec<Vec<Option<String>>> {
    key_batches(distinct, |key| {
        let host = if key % 3 == 0 {
            "Example.COM"
        } else {
            "example.com"
        };
        Some(format!("http://{host}/shop/item/{key}?ref=list"))
    })
}

/// Batches of `distinct` keys, each half new and half repeats of a key drawn
/// uniformly from those before it, each key made into an item by `item`.
fn key_batches<T>(distinct: u64, item: impl Fn(u64) -> T) -> Vec<Vec<T>> {
    let mut state = 7u64;
    let mut fresh = 0u64;
    let mut all = Vec::new();
    while fresh < distinct {
        let mut batch = Vec::with_capacity(BATCH);
        while batch.len() < BATCH {
            let r = next(&mut state);
            // A new key while there are keys left to introduce (always the
            // first one), else a repeat.
            let new = fresh < distinct && (r & 1 == 0 || fresh == 0);
            let key = if new {
                fresh += 1;
                fresh - 1
            } else {
                (r >> 1) % fresh
            };
            batch.push(item(key));
        }
        all.push(batch);
    }
    all
}

/// Feeds `input` batch by batch to a new set on `threads` threads, told to
/// expect `expected` keys (0: nothing); `add` adds one batch and counts its
/// new verdicts, which must number `distinct` in all.
fn feed<T>(
    threads: usize,
    expected: u64,
    input: &[Vec<T>],
    distinct: u64,
    add: impl Fn(&mut SeenSet, &[T]) -> u64,
) -> u64 {
    let mut set = SeenSet::new(KeyConfig::default().keyer())
        .with_expected_keys(expected)
        .with_threads(threads)
        .expect("worker threads");
    let new: u64 = input.iter().map(|batch| add(&mut set, batch)).sum();
    assert_eq!(new, distinct, "new verdicts and distinct keys differ");
    new
}

fn bench_seen_set(c: &mut Criterion) {
    let mut group = c.benchmark_group("seen_set");
    group.sample_size(10);
    for distinct in [1_000_000u64, 8_000_000] {
        let input = batches(distinct);
        let total: usize = input.iter().map(Vec::len).sum();
        group.throughput(Throughput::Elements(total as u64));
        let expected_too = if distinct > 1_000_000 {
            vec![0, distinct]
        } else {
            vec![0]
        };
        for expected in expected_too {
            for threads in [1usize, 2] {
                let told = if expected > 0 { "-expected" } else { "" };
                let id = BenchmarkId::new(
                    format!("add_fingerprints/{}M{told}", distinct / 1_000_000),
                    format!("{threads}t"),
                );
                group.bench_function(id, |b| {
                    b.iter(|| {
                        feed(threads, expected, &input, distinct, |set, batch| {
                            let verdicts = set.add_fingerprints(batch).expect("no memory limit");
                            verdicts.iter().filter(|&&v| v).count() as u64
                        })
                    });
                });
            }
        }
    }
    let distinct = 1_000_000u64;
    let input = line_batches(distinct);
    let total: usize = input.iter().map(Vec::len).sum();
    group.throughput(Throughput::Elements(total as u64));
    for threads in [1usize, 2] {
        let id = BenchmarkId::new("add_lines/1M", format!("{threads}t"));
        group.bench_function(id, |b| {
            b.iter(|| {
                feed(threads, 0, &input, distinct, |set, batch| {
                    let verdicts = set.add(batch).expect("no memory limit");
                    verdicts.iter().filter(|v| v.is_new()).count() as u64
                })
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench_seen_set);
criterion_main!(benches);
