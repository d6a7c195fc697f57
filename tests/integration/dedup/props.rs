//! The engine against a naive single-threaded reference, on generated
//! inputs, thread counts and chunk sizes.

use std::sync::Arc;

use proptest::prelude::*;
use urikey::engine::{self, Config, Emit, Input, InvalidLine, Select};
use urikey::uri::key::{KeyScratch, Keyer};

use super::*;
use crate::common;

// ---------------------------------------------------------------------------
// Property: the engine equals a naive single-threaded reference.

/// Lines the property test draws from: URLs, variants that a normalizer
/// may merge, and junk.
const ALPHABET: &[&[u8]] = &[
    b"http://a.example/x",
    b"HTTP://A.EXAMPLE/x",
    b"http://a.example:80/x",
    b"http://a.example/%7Ex",
    b"http://a.example/~x",
    b"http://a.example/./x",
    b"http://b.example/?q=1#f",
    b"https://b.example",
    b"mailto:someone@example.com",
    b"/relative/path",
    b"ht tp://junk",
    b"http://bad host/",
    b"%zz",
    b"\xff\xfe",
    b"",
    b"a\tb",
];

fn reference(
    canon: &Keyer,
    input: &[u8],
    output: Select,
    emit: Emit,
    max_line: usize,
) -> (Vec<u8>, u64) {
    let body = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
    let mut scratch = KeyScratch::default();
    let mut order: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let mut counts = Vec::new();
    let mut out = Vec::new();
    let mut invalid = 0;
    let mut lines: Vec<&[u8]> = body.split(|&b| b == b'\n').collect();
    if body.ends_with(b"\n") || body.is_empty() {
        lines.pop();
    }
    for raw in lines {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.is_empty() {
            continue;
        }
        if line.len() > max_line {
            invalid += 1;
            continue;
        }
        let Ok(key) = canon.uri_key(line, &mut scratch) else {
            invalid += 1;
            continue;
        };
        let key = key.to_vec();
        let shown = if emit == Emit::Original {
            line.to_vec()
        } else {
            key.clone()
        };
        match index.get(&key) {
            Some(&i) => {
                counts[i] += 1;
                if output == Select::Duplicates {
                    out.extend_from_slice(&shown);
                    out.push(b'\n');
                }
            }
            None => {
                index.insert(key.clone(), order.len());
                counts.push(1u64);
                if output == Select::Unique {
                    out.extend_from_slice(&shown);
                    out.push(b'\n');
                }
                order.push((key, shown));
            }
        }
    }
    if output == Select::Counts {
        for ((_, shown), c) in order.iter().zip(&counts) {
            out.extend_from_slice(format!("{c}\t").as_bytes());
            out.extend_from_slice(shown);
            out.push(b'\n');
        }
    }
    (out, invalid)
}

fn input_strategy() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec((0..ALPHABET.len(), any::<bool>()), 0..200),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(lines, bom, final_newline)| {
            let mut v = Vec::new();
            if bom {
                v.extend_from_slice(b"\xEF\xBB\xBF");
            }
            for (k, (i, crlf)) in lines.iter().enumerate() {
                v.extend_from_slice(ALPHABET[*i]);
                if k + 1 < lines.len() || final_newline {
                    v.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
                }
            }
            v
        })
}

fn chunk_size_strategy() -> impl Strategy<Value = usize> {
    prop_oneof![1usize..64, 64usize..4096, 4096usize..=65536]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: common::proptest_cases(64),
        ..ProptestConfig::default()
    })]

    #[test]
    fn prop_engine_matches_naive_reference(
        input in input_strategy(),
        threads in 1usize..=4,
        chunk_size in chunk_size_strategy(),
        stream in any::<bool>(),
        output in prop_oneof![Just(Select::Unique), Just(Select::Duplicates), Just(Select::Counts)],
        original in any::<bool>(),
        exact in any::<bool>(),
        max_line in prop_oneof![Just(1usize << 20), 4usize..40],
    ) {
        let canon = Keyer::default();
        let emit = if original { Emit::Original } else { Emit::Key };
        let (want, want_invalid) = reference(&canon, &input, output, emit, max_line);
        let mut config = Config::new(canon);
        config.threads = threads;
        config.chunk_size = chunk_size;
        config.select = output;
        config.emit = emit;
        config.exact = exact;
        config.max_line_bytes = max_line;
        let bytes: Arc<[u8]> = Arc::from(&input[..]);
        let source = if stream {
            Input::Reader { name: "r".into(), reader: Box::new(std::io::Cursor::new(input.clone())) }
        } else {
            Input::Bytes { name: "b".into(), bytes }
        };
        let mut got = Vec::new();
        let mut reported = 0u64;
        let stats = engine::run(&config, vec![source], &mut got, &mut |_: &InvalidLine<'_>| reported += 1)
            .expect("in-memory runs cannot fail");
        prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
        prop_assert_eq!(stats.invalid, want_invalid);
        prop_assert_eq!(reported, want_invalid);
        prop_assert_eq!(stats.lines, stats.blank + stats.invalid + stats.unique + stats.duplicates);
    }
}

#[test]
fn dedup_tables_sized_from_the_input_size_change_nothing() {
    // An input of known size lets the seen-set grow to its projected size
    // in one step (engine::projection); a stream of unknown size grows
    // step by step. 60,000 distinct keys (3,750 a shard, past several
    // sizes): a new key every second line, then every sixth, with repeats
    // from anywhere before; chunks of 8 KiB make a few hundred batches.
    // Every way gives the naive reference's output, for every selection.
    let mut input = Vec::new();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut keys = 0u64;
    for i in 0..200_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let every = if i < 80_000 { 2 } else { 6 };
        let n = if i % every == 0 {
            keys += 1;
            keys - 1
        } else {
            x % keys
        };
        input.extend_from_slice(
            format!("http://h{}.example/p/{n}?q={}\n", n % 97, n % 5).as_bytes(),
        );
    }
    let canon = Keyer::default();
    for select in [Select::Unique, Select::Duplicates, Select::Counts] {
        let (want, _) = reference(&canon, &input, select, Emit::Original, 1 << 20);
        for (threads, stream) in [(1, false), (2, false), (2, true)] {
            let mut config = Config::new(canon.clone());
            config.threads = threads;
            config.chunk_size = 8 << 10;
            config.select = select;
            let (got, stats) = run_engine(&config, &input, stream).expect("in memory");
            assert!(
                got == want,
                "{select:?}, {threads} threads, stream {stream}"
            );
            assert_eq!(stats.unique, 60_000);
        }
    }
}
