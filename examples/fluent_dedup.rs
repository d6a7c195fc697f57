//! `fluent_dedup`: the dedup loop a Rust user would write instead of urikey,
//! as a peer for `scripts/bench-cli`.
//!
//! Memory-maps FILE, and for each block of 65,536 lines normalizes every
//! line on all threads (rayon) with `fluent_uri::UriRef::parse(..)
//! .normalize()`, then keeps, in input order, the first line of each
//! normalized form (one `AHashSet` of the normalized strings) and writes it
//! to stdout. Lines that are not UTF-8 or that fluent-uri rejects are
//! skipped. fluent-uri's normalization is its own (RFC 3986 §6.2.2 and some
//! of §6.2.3), so its unique count is close to, not equal to, urikey's
//! `rfc` count.
//!
//! ```text
//! cargo run --release --example fluent_dedup -- FILE > unique.txt
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use rayon::prelude::*;

/// Lines normalized in parallel before they are deduplicated in order.
const BLOCK_LINES: usize = 1 << 16;

fn run(path: &str) -> io::Result<()> {
    let file = File::open(path)?;
    if file.metadata()?.len() == 0 {
        return Ok(());
    }
    // SAFETY: the map is only read while this function runs, and the
    // benchmark inputs are not written to while they are measured; a file
    // truncated underneath the map could fault (SIGBUS), which is accepted
    // for this measuring tool.
    let map = unsafe { memmap2::Mmap::map(&file)? };
    let mut seen: ahash::AHashSet<String> = ahash::AHashSet::new();
    let mut out = BufWriter::with_capacity(1 << 20, io::stdout().lock());
    let mut lines: Vec<&[u8]> = Vec::with_capacity(BLOCK_LINES);
    let mut rest: &[u8] = &map;
    while !rest.is_empty() {
        lines.clear();
        while lines.len() < BLOCK_LINES && !rest.is_empty() {
            let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
            let line = &rest[..end];
            lines.push(line.strip_suffix(b"\r").unwrap_or(line));
            rest = rest.get(end + 1..).unwrap_or_default();
        }
        let keys: Vec<Option<String>> = lines
            .par_iter()
            .map(|line| {
                let text = std::str::from_utf8(line).ok()?;
                let uri = fluent_uri::UriRef::parse(text).ok()?;
                Some(uri.normalize().as_str().to_owned())
            })
            .collect();
        for (line, key) in lines.iter().zip(keys) {
            if let Some(key) = key {
                if seen.insert(key) {
                    out.write_all(line)?;
                    out.write_all(b"\n")?;
                }
            }
        }
    }
    out.flush()
}

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: fluent_dedup FILE");
        return ExitCode::from(2);
    };
    match run(&path) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fluent_dedup: {path}: {e}");
            ExitCode::FAILURE
        }
    }
}
