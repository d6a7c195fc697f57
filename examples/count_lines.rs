//! `count_lines`: the speed floor for any line-oriented pass over a file.
//!
//! Memory-maps each file and counts `\n` bytes with `memchr`, nothing else,
//! then prints the total line count. `scripts/bench-cli` uses it as the
//! "read and find every line end" floor next to `wc -l`.
//!
//! ```text
//! cargo run --release --example count_lines -- FILE...
//! ```

use std::fs::File;
use std::process::ExitCode;

fn count(path: &str) -> std::io::Result<u64> {
    let file = File::open(path)?;
    if file.metadata()?.len() == 0 {
        return Ok(0);
    }
    // SAFETY: the map is only read while this function runs, and the
    // benchmark inputs are not written to while they are measured; a file
    // truncated underneath the map could fault (SIGBUS), which is accepted
    // for this measuring tool.
    let map = unsafe { memmap2::Mmap::map(&file)? };
    let mut lines = memchr::memchr_iter(b'\n', &map).count() as u64;
    if map.last().is_some_and(|&b| b != b'\n') {
        lines += 1;
    }
    Ok(lines)
}

fn main() -> ExitCode {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: count_lines FILE...");
        return ExitCode::from(2);
    }
    let mut total = 0;
    for p in &paths {
        match count(p) {
            Ok(n) => total += n,
            Err(e) => {
                eprintln!("count_lines: {p}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!("{total}");
    ExitCode::SUCCESS
}
