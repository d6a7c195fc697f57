//! End-to-end engine throughput on an in-memory corpus: the real URL lists
//! in `../shared/datasets` when present, else a generated crawl-like set.
//! Every measured run checks its unique count against a naive count.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use urikey::engine::{self, Config, Emit, Input, Select};
use urikey::uri::key::{KeyScratch, Keyer};

/// The concatenated dataset files, repeated to a few MB so that a run has
/// many chunks, plus its name.
fn corpus() -> (String, Vec<u8>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets");
    let mut data = Vec::new();
    for dir in ["ada-url-various", "iscx-url-2016"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut files: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        files.sort();
        for f in files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "txt"))
        {
            if let Ok(bytes) = std::fs::read(f) {
                data.extend_from_slice(&bytes);
                if !data.ends_with(b"\n") {
                    data.push(b'\n');
                }
            }
        }
    }
    if data.is_empty() {
        for i in 0..400_000u32 {
            let line = format!(
                "http://host{}.example/path/{}?q={}\n",
                i % 5003,
                i % 70001,
                i % 3
            );
            data.extend_from_slice(line.as_bytes());
        }
        return ("generated".to_owned(), data);
    }
    ("datasets".to_owned(), data)
}

/// Distinct valid keys, the obvious way.
fn naive_unique(canon: &Keyer, data: &[u8]) -> u64 {
    let mut scratch = KeyScratch::default();
    let mut seen = HashSet::new();
    let body = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    for raw in body.split(|&b| b == b'\n') {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.is_empty() {
            continue;
        }
        if let Ok(key) = canon.uri_key(line, &mut scratch) {
            seen.insert(key.to_vec());
        }
    }
    seen.len() as u64
}

fn bench_engine(c: &mut Criterion) {
    let (name, data) = corpus();
    let canon = Keyer::default();
    let want = naive_unique(&canon, &data);
    let bytes: Arc<[u8]> = Arc::from(data);
    let mut group = c.benchmark_group("engine");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.sample_size(10);
    for (label, output, emit) in [
        ("unique", Select::Unique, Emit::Original),
        ("count", Select::Counts, Emit::Original),
    ] {
        for threads in [1usize, 2] {
            let mut config = Config::new(canon.clone());
            config.threads = threads;
            config.select = output;
            config.emit = emit;
            config.chunk_size = 1 << 20;
            let id = BenchmarkId::new(format!("{label}/{name}"), format!("{threads}t"));
            group.bench_function(id, |b| {
                b.iter(|| {
                    let input = Input::Bytes {
                        name: name.clone(),
                        bytes: Arc::clone(&bytes),
                    };
                    let stats = engine::run(&config, vec![input], &mut std::io::sink(), &mut ())
                        .expect("in-memory run");
                    assert_eq!(stats.unique, want, "engine and naive unique counts differ");
                    stats.unique
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench_engine);
criterion_main!(benches);
