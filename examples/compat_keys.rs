//! `compat_keys`: one compat key per input line, for `scripts/compat-diff`.
//!
//! Reads lines (split on `\n` only) from stdin and prints the key of each
//! for the named preset; a line the preset refuses prints as an empty line,
//! with a note on stderr. `--time` reports the throughput on stderr.
//!
//! ```text
//! cargo run --release --example compat_keys -- w3lib < urls.txt
//! cargo run --release --example compat_keys -- ia-surt --time < urls.txt > /dev/null
//! ```

use std::io::{Read, Write};
use std::process::ExitCode;

use urikey::uri::compat::{Compat, CompatScratch};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(name) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: compat_keys PRESET [--time] < lines");
        return ExitCode::from(2);
    };
    let preset: Compat = match name.parse() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let time = args.iter().any(|a| a == "--time");
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().lock().read_to_end(&mut input) {
        eprintln!("cannot read stdin: {e}");
        return ExitCode::FAILURE;
    }
    let body = input.strip_suffix(b"\n").unwrap_or(&input);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut scratch = CompatScratch::default();
    let mut key = Vec::with_capacity(256);
    let mut errors = Vec::new();
    let start = std::time::Instant::now();
    let mut lines = 0u64;
    if !input.is_empty() {
        // `memchr` finds the line ends, so that splitting costs little
        // next to the keys being measured.
        let mut from = 0;
        let ends = memchr::memchr_iter(b'\n', body).chain([body.len()]);
        for (n, end) in ends.enumerate() {
            let line = &body[from..end];
            from = end + 1;
            lines += 1;
            key.clear();
            if let Err(e) = preset.write_key(line, &mut key, &mut scratch) {
                key.clear();
                errors.push(format!("line {}: {e}", n + 1));
            }
            key.push(b'\n');
            if out.write_all(&key).is_err() {
                return ExitCode::FAILURE;
            }
        }
    }
    if out.flush().is_err() {
        return ExitCode::FAILURE;
    }
    let elapsed = start.elapsed();
    for e in &errors {
        eprintln!("note: {e}");
    }
    if time {
        let secs = elapsed.as_secs_f64();
        eprintln!(
            "{preset}: {lines} lines, {} bytes in {:.3} s: {:.0} lines/s, {:.1} MB/s",
            input.len(),
            secs,
            lines as f64 / secs,
            input.len() as f64 / secs / 1e6
        );
    }
    ExitCode::SUCCESS
}
