//! Crawl files as other tools write them (`tests/data/interop/`, written by
//! `scripts/gen-interop-fixtures` with pyarrow, DuckDB, Polars,
//! fastparquet and warcio): every one reads as the URLs it was made from,
//! and what detection cannot tell apart is an error that names
//! `--format`, never a run that reads nothing and exits 0.

use std::path::{Path, PathBuf};
use crate::common::{stdout_of, urikey};

fn interop(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/interop")
        .join(name)
}

/// The keys `normalize` gives for the URL list `name`.
fn keys_of_list(name: &str) -> String {
    stdout_of(
        urikey()
            .args(["normalize", "-q", "--format", "lines"])
            .arg(interop(name)),
    )
}

#[test]
fn interop_parquet_of_every_writer_and_codec() {
    let want = keys_of_list("urls.txt");
    assert_eq!(want.lines().count(), 40);
    let codecs = std::fs::read_to_string(interop("codecs.txt")).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for line in codecs.lines() {
        let (name, codec) = line.split_once(": ").unwrap();
        if name.contains("-list") {
            continue;
        }
        seen.insert(codec.to_owned());
        for format in [&[][..], &["--format", "parquet"][..]] {
            let got = stdout_of(
                urikey()
                    .args(["normalize", "-q"])
                    .args(format)
                    .arg(interop(name)),
            );
            assert_eq!(got, want, "{name} ({codec})");
        }
        let deduped = stdout_of(urikey().args(["dedup", "-q"]).arg(interop(name)));
        assert_eq!(deduped, want, "{name} ({codec})");
    }
    // Both LZ4 codecs and brotli are among them.
    for codec in ["LZ4", "LZ4_RAW", "BROTLI"] {
        assert!(seen.contains(codec), "{codec}: {seen:?}");
    }
}
