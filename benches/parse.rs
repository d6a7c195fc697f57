//! Parsing throughput: urikey's strict zero-copy parser against `fluent-uri`
//! and `url` on the same inputs, in the same group.
//!
//! Inputs: the real URL lists in `../shared/datasets` when present (read in
//! place), else `datasets/crawl-sample.txt` from this repository.
//! Reported per URL (elements) and per byte.

use std::path::{Path, PathBuf};

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

/// Loads the benchmark corpus: (name, lines).
pub fn corpus() -> (String, Vec<String>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared/datasets");
    let files: Vec<PathBuf> = ["ada-url-various", "iscx-url-2016"]
        .iter()
        .flat_map(|d| std::fs::read_dir(shared.join(d)).into_iter().flatten())
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    let (name, files) = if files.is_empty() {
        (
            "crawl-sample".to_owned(),
            vec![root.join("datasets/crawl-sample.txt")],
        )
    } else {
        ("shared-datasets".to_owned(), files)
    };
    let mut lines = Vec::new();
    for f in files {
        let bytes = std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let text = String::from_utf8_lossy(&bytes);
        lines.extend(
            text.lines()
                .map(|l| l.trim_start_matches('\u{feff}').trim_end_matches('\r'))
                .filter(|l| !l.is_empty())
                .map(str::to_owned),
        );
    }
    (name, lines)
}

fn bench_parse(c: &mut Criterion) {
    let (name, lines) = corpus();
    let bytes: usize = lines.iter().map(String::len).sum();
    let expected_valid = lines
        .iter()
        .filter(|l| urikey::uri::UriRef::parse(l).is_ok())
        .count();

    let mut group = c.benchmark_group(format!("parse/{name}"));
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("urikey", |b| {
        b.iter(|| {
            let valid = lines
                .iter()
                .filter(|l| urikey::uri::UriRef::parse(l).is_ok())
                .count();
            assert_eq!(valid, expected_valid);
        });
    });
    group.bench_function("fluent-uri", |b| {
        b.iter(|| {
            lines
                .iter()
                .filter(|l| fluent_uri::UriRef::parse(l.as_str()).is_ok())
                .count()
        });
    });
    group.bench_function("url", |b| {
        b.iter(|| {
            lines
                .iter()
                .filter(|l| url::Url::parse(black_box(l)).is_ok())
                .count()
        });
    });
    group.finish();

    let mut group = c.benchmark_group(format!("parse-per-url/{name}"));
    group.throughput(Throughput::Elements(lines.len() as u64));
    group.bench_function("urikey", |b| {
        b.iter(|| {
            lines
                .iter()
                .filter(|l| urikey::uri::UriRef::parse(l).is_ok())
                .count()
        });
    });
    group.finish();
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
