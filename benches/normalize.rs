//! Parse + normalize throughput: `urikey` (fast path with the CPU's scanner
//! and with the portable one, slow path, lenient crawl profile) next to
//! `fluent_uri::UriRef::parse(..).normalize()` and `url::Url::parse(..)
//! .as_str()`, on the URL lists of `../shared/datasets` (when present), a
//! generated canonical crawl list and other spellings of it (upper case,
//! escapes, dot segments, ports, empty paths). The compatibility presets
//! (`compat-w3lib`, `compat-ia-surt`) and our SURT keys (`urikey-rfc-surt`:
//! the `uri` key, then its SURT) run on the same lines.
//!
//! Before timing, every dataset is checked: the fast and slow paths must
//! give the same key for every line, and the number of valid lines and the
//! fast-path hit rate are printed.
//!
//! Run: `cargo bench --bench normalize` (ids are `normalize/<dataset>/<impl>`).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use urikey::uri::compat::{Compat, CompatScratch};
use urikey::uri::key::{write_key, KeyFormat, KeyScratch, Keyer};
use urikey::uri::normalize::{Normalizer, Profile};

struct Dataset {
    name: &'static str,
    lines: Vec<String>,
}

impl Dataset {
    fn bytes(&self) -> u64 {
        self.lines.iter().map(|l| l.len() as u64 + 1).sum()
    }
}

fn load(name: &'static str, rel: &str) -> Option<Dataset> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets")
        .join(rel);
    let bytes = std::fs::read(&path).ok()?;
    let text =
        String::from_utf8_lossy(bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes)).into_owned();
    let lines = text
        .lines()
        .map(|l| l.trim_end_matches('\r').to_string())
        .collect();
    Some(Dataset { name, lines })
}

/// Already-canonical crawl-shaped URLs, the engine's common case.
fn generated() -> Dataset {
    let mut lines = Vec::with_capacity(50_000);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..50_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let scheme = if x & 1 == 0 { "https" } else { "http" };
        let line = match x % 4 {
            0 => format!(
                "{scheme}://www.site{}.com/articles/{}/page-{i}.html",
                x % 997,
                x % 31
            ),
            1 => format!(
                "{scheme}://cdn{}.example.org/img/{:x}/photo_{i}.jpg?w=640&h=480",
                x % 13,
                x % 65_536
            ),
            2 => format!(
                "{scheme}://shop.example.net/p/{i}/item%C3%A9?ref=home&utm_source=news#reviews"
            ),
            _ => format!(
                "{scheme}://blog{}.example.io/{}/2024/05/{i}/",
                x % 101,
                ["en", "de", "fr"][(x % 3) as usize]
            ),
        };
        lines.push(line);
    }
    Dataset {
        name: "generated",
        lines,
    }
}

/// Non-canonical spellings made from the generated URLs, one rewrite each:
/// upper-case scheme or host, an escaped `~`, an escape in lower-case hex,
/// dot segments, an empty or default port, an empty path. None is
/// canonical under `rfc`, so this measures the keys that have to be
/// written.
fn spelled(canonical: &Dataset) -> Dataset {
    let lines = canonical
        .lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let (scheme, rest) = line.split_once("://").unwrap_or(("http", line));
            let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let default = if scheme == "https" { "443" } else { "80" };
            match i % 8 {
                0 => format!("{}://{rest}", scheme.to_ascii_uppercase()),
                1 => format!("{scheme}://{}{path}", host.to_ascii_uppercase()),
                2 => format!("{scheme}://{host}{}", path.replacen('/', "/%7E", 1)),
                3 => format!("{scheme}://{host}/%c3%a9{path}"),
                4 => format!("{scheme}://{host}/./x/..{path}"),
                5 => format!("{scheme}://{host}:{path}"),
                6 => format!("{scheme}://{host}:{default}{path}"),
                _ => format!("{scheme}://{host}"),
            }
        })
        .collect();
    Dataset {
        name: "generated-spellings",
        lines,
    }
}

fn datasets() -> Vec<Dataset> {
    let generated = generated();
    let mut sets = vec![spelled(&generated), generated];
    let real = [
        ("iscx-benign", "iscx-url-2016/benign_urls.txt"),
        ("kasztp", "ada-url-various/kasztp.txt"),
        ("userbait", "ada-url-various/userbait.txt"),
        ("node-files", "ada-url-various/node_files.txt"),
    ];
    for (name, rel) in real {
        match load(name, rel) {
            Some(d) => sets.push(d),
            None => eprintln!("note: ../shared/datasets/{rel} missing, skipped"),
        }
    }
    sets
}

/// Checks fast == slow on every line and prints the hit rates.
fn check(d: &Dataset, c: &Keyer, label: &str) {
    let mut s1 = KeyScratch::default();
    let mut s2 = KeyScratch::default();
    let (mut valid, mut borrowed) = (0usize, 0usize);
    for line in &d.lines {
        let fast = c.uri_key(line.as_bytes(), &mut s1).map(|k| k.to_vec());
        let slow = c
            .general_tier_key(line.as_bytes(), &mut s2)
            .map(|k| k.to_vec());
        assert_eq!(fast, slow, "fast and slow paths disagree on {line:?}");
        if let Ok(k) = fast {
            valid += 1;
            borrowed += usize::from(k.as_slice() == line.as_bytes());
        }
    }
    eprintln!(
        "{}/{label}: {} lines, {valid} valid, {borrowed} already canonical ({:.1} %)",
        d.name,
        d.lines.len(),
        100.0 * borrowed as f64 / d.lines.len().max(1) as f64
    );
}

fn bench(c: &mut Criterion) {
    let rfc = Keyer::new(Normalizer::profile(Profile::Rfc));
    let rfc_portable = rfc.clone().with_portable_scan();
    let rfc_avx2 = rfc.clone().without_mask_tier();
    let crawl_lenient = Keyer::new(Normalizer::profile(Profile::Crawl)).with_lenient(true);
    for d in datasets() {
        check(&d, &rfc, "rfc");
        check(&d, &crawl_lenient, "crawl-lenient");
        let mut g = c.benchmark_group(format!("normalize/{}", d.name));
        g.throughput(Throughput::Bytes(d.bytes()));
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
        let run = |canon: &Keyer, slow: bool| {
            let mut scratch = KeyScratch::default();
            let mut total = 0usize;
            for line in &d.lines {
                let r = if slow {
                    canon.general_tier_key(line.as_bytes(), &mut scratch)
                } else {
                    canon.uri_key(line.as_bytes(), &mut scratch)
                };
                total += r.map_or(0, |k| k.len());
            }
            total
        };
        g.bench_function("urikey-rfc", |b| b.iter(|| black_box(run(&rfc, false))));
        // The same with the portable scanner in the fast tier instead of the
        // SIMD ones (the same where the CPU has neither AVX2 nor AVX-512):
        // what the library's only `unsafe` code buys; and without the mask
        // tier alone (the same where the CPU has no AVX-512 VBMI).
        g.bench_function("urikey-rfc-portable-scan", |b| {
            b.iter(|| black_box(run(&rfc_portable, false)));
        });
        g.bench_function("urikey-rfc-avx2", |b| {
            b.iter(|| black_box(run(&rfc_avx2, false)));
        });
        g.bench_function("urikey-rfc-slow-path", |b| {
            b.iter(|| black_box(run(&rfc, true)));
        });
        // The `uri` key and then its SURT (`--key surt`).
        g.bench_function("urikey-rfc-surt", |b| {
            let mut scratch = KeyScratch::default();
            let mut surt = Vec::new();
            b.iter(|| {
                let mut total = 0usize;
                for line in &d.lines {
                    if let Ok(key) = rfc.uri_key(line.as_bytes(), &mut scratch) {
                        surt.clear();
                        write_key(&key, KeyFormat::Surt, &mut surt);
                        total += surt.len();
                    }
                }
                black_box(total)
            });
        });
        g.bench_function("urikey-crawl-lenient", |b| {
            b.iter(|| black_box(run(&crawl_lenient, false)));
        });
        // The compatibility presets (w3lib / surt keys, byte for byte).
        for preset in [Compat::W3lib, Compat::IaSurt] {
            g.bench_function(format!("compat-{preset}"), |b| {
                let mut scratch = CompatScratch::default();
                let mut key = Vec::new();
                b.iter(|| {
                    let mut total = 0usize;
                    for line in &d.lines {
                        key.clear();
                        if preset
                            .write_key(line.as_bytes(), &mut key, &mut scratch)
                            .is_ok()
                        {
                            total += key.len();
                        }
                    }
                    black_box(total)
                });
            });
        }
        g.bench_function("fluent-uri", |b| {
            b.iter(|| {
                let mut total = 0usize;
                for line in &d.lines {
                    if let Ok(u) = fluent_uri::UriRef::parse(line.as_str()) {
                        total += u.normalize().as_str().len();
                    }
                }
                black_box(total)
            });
        });
        g.bench_function("url", |b| {
            b.iter(|| {
                let mut total = 0usize;
                for line in &d.lines {
                    if let Ok(u) = url::Url::parse(line) {
                        total += u.as_str().len();
                    }
                }
                black_box(total)
            });
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
