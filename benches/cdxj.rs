//! The URL of a CDXJ line: the fast path (`formats/cdxj_fast.rs`, with
//! `serde_json` behind it) against `serde_json` alone, on lines shaped as
//! Common Crawl writes them (the members and value lengths of its
//! `cdx-NNNNN.gz` files; URLs from the shared ISCX list when present).

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use urikey::engine::formats::cdxj;

/// Common-Crawl-shaped CDXJ lines.
fn lines() -> Vec<Vec<u8>> {
    let list = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets/iscx-url-2016/benign_urls.txt");
    let urls: Vec<String> = std::fs::read_to_string(list)
        .map(|s| s.lines().take(20_000).map(str::to_owned).collect())
        .unwrap_or_default();
    let urls = if urls.is_empty() {
        (0..20_000)
            .map(|i| format!("http://host{}.example/path/{i}?q={}", i % 503, i * 7))
            .collect()
    } else {
        urls
    };
    urls.iter()
        .enumerate()
        .map(|(i, u)| {
            let u = if u.contains("://") {
                u.clone()
            } else {
                format!("http://{u}")
            };
            format!(
                "com,example)/{i} 20240517233579 {{\"url\": \"{u}\", \"mime\": \"text/html\", \
                 \"mime-detected\": \"text/html\", \"status\": \"200\", \"digest\": \
                 \"U77NNJYCPLSMFKF57E4Z5IJHJAMAEJUA\", \"length\": \"9502\", \"offset\": \
                 \"634026776\", \"filename\": \"crawl-data/CC-MAIN-2024-22/segments/\
                 1715971057216.39/warc/CC-MAIN-20240517233122-20240518023122-00457.warc.gz\", \
                 \"languages\": \"eng\", \"encoding\": \"UTF-8\"}}"
            )
            .replace('\\', "")
            .into_bytes()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let lines = lines();
    let bytes: usize = lines.iter().map(Vec::len).sum();
    let mut group = c.benchmark_group("cdxj_url");
    group.throughput(Throughput::Bytes(bytes as u64));
    let mut buf = Vec::new();
    group.bench_function("fast path", |b| {
        b.iter(|| {
            lines
                .iter()
                .map(|l| cdxj::url(l, &mut buf).map_or(0, |(at, u)| at + u.len()))
                .sum::<usize>()
        });
    });
    group.bench_function("serde_json", |b| {
        b.iter(|| {
            lines
                .iter()
                .map(|l| cdxj::url_by_serde(l, &mut buf).map_or(0, |(at, u)| at + u.len()))
                .sum::<usize>()
        });
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
