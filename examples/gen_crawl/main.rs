//! `gen_crawl`: a fast, seeded generator of crawl-like URL dumps with a known
//! ground truth.
//!
//! ```text
//! cargo run --release --example gen_crawl -- --bytes 1G --seed 7 -o dump.txt --truth truth.json
//! ```
//!
//! Options: `--bytes N` (suffixes K/M/G = 2^10.., KB/MB/GB = 10^3..) or
//! `--lines N` (default `--lines 100000`), `--seed S` (default 1),
//! `--dup-ratio R` (share of lines that repeat or rewrite an earlier URL,
//! default 0.5), `--invalid-ratio R` (default 0.005), `-o FILE` (default
//! stdout), `--truth FILE` (default stderr), `--verify` (check every line's
//! validity against the crate's strict parser).
//!
//! The output is a pure function of the seed and ratios; a smaller size
//! gives a prefix of a larger one. Every valid line is either a fresh
//! canonical URL, a byte-exact repeat, or an equivalent variant (see
//! `variant.rs`) whose keys under the `none`, `syntax` and `rfc` profiles
//! are known by construction; the truth report counts distinct keys.

mod canon;
mod invalid;
mod rng;
mod truth;
mod variant;
mod vocab;

use std::fs::File;
use std::io::{self, Write};
use std::process::ExitCode;

use canon::Parts;
use rng::{mix, Rng};
use truth::{Origin, Truth};

/// Parsed command line.
struct Args {
    bytes: Option<u64>,
    lines: Option<u64>,
    seed: u64,
    dup_ratio: f64,
    invalid_ratio: f64,
    output: Option<String>,
    truth: Option<String>,
    verify: bool,
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Some(a)) => a,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("gen_crawl: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gen_crawl: {e}");
            ExitCode::FAILURE
        }
    }
}

const USAGE: &str = "usage: gen_crawl [--bytes N[K|M|G|KB|MB|GB] | --lines N] [--seed S] \
[--dup-ratio R] [--invalid-ratio R] [-o FILE] [--truth FILE] [--verify]

Writes a seeded crawl-like URL dump (default: 100000 lines to stdout) and its
ground truth as JSON (to stderr, or --truth FILE): lines, bytes, invalid lines,
and the number of unique keys under the profiles none, syntax and rfc.";

/// The parsed options, or `None` when help was asked for.
fn parse_args(mut it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut a = Args {
        bytes: None,
        lines: None,
        seed: 1,
        dup_ratio: 0.5,
        invalid_ratio: 0.005,
        output: None,
        truth: None,
        verify: false,
    };
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--bytes" => a.bytes = Some(parse_size(&value()?)?),
            "--lines" => a.lines = Some(value()?.parse().map_err(|e| format!("--lines: {e}"))?),
            "--seed" => a.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--dup-ratio" => a.dup_ratio = parse_ratio(&value()?)?,
            "--invalid-ratio" => a.invalid_ratio = parse_ratio(&value()?)?,
            "-o" | "--output" => a.output = Some(value()?),
            "--truth" => a.truth = Some(value()?),
            "--verify" => a.verify = true,
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown option {other:?} (try --help)")),
        }
    }
    if a.bytes.is_none() && a.lines.is_none() {
        a.lines = Some(100_000);
    }
    if a.dup_ratio + a.invalid_ratio > 1.0 {
        return Err("--dup-ratio + --invalid-ratio must be at most 1".into());
    }
    Ok(Some(a))
}

/// `1G` = 2^30, `1GB` = 10^9, plain digits are bytes.
fn parse_size(s: &str) -> Result<u64, String> {
    let upper = s.to_ascii_uppercase();
    let digits = upper.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = &upper[digits.len()..];
    let mult: u64 = match unit {
        "" | "B" => 1,
        "K" | "KIB" => 1 << 10,
        "M" | "MIB" => 1 << 20,
        "G" | "GIB" => 1 << 30,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        _ => return Err(format!("bad size unit in {s:?}")),
    };
    let n: u64 = digits.parse().map_err(|e| format!("bad size {s:?}: {e}"))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("size {s:?} too large"))
}

fn parse_ratio(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
        _ => Err(format!("ratio {s:?} must be a number in [0, 1]")),
    }
}

/// Earlier URLs that later lines repeat or rewrite. The first `HOT` slots
/// are never replaced, so a few URLs recur throughout the dump (popular
/// pages); the rest are replaced at random once the pool is full.
struct Pool<T> {
    items: Vec<T>,
}

const POOL_CAP: usize = 1 << 20;
const HOT: usize = 2048;

impl<T: Copy> Pool<T> {
    fn new() -> Self {
        Pool { items: Vec::new() }
    }

    fn push(&mut self, r: &mut Rng, item: T) {
        if self.items.len() < POOL_CAP {
            self.items.push(item);
        } else {
            let i = HOT + r.below(POOL_CAP - HOT);
            self.items[i] = item;
        }
    }

    fn draw(&self, r: &mut Rng) -> Option<T> {
        if self.items.is_empty() {
            return None;
        }
        let n = if r.chance(0.2) {
            self.items.len().min(HOT)
        } else {
            self.items.len()
        };
        Some(self.items[r.below(n)])
    }
}

/// Reusable buffers for building one line.
#[derive(Default)]
struct Scratch {
    canon: Parts,
    syntax: Parts,
    line: Parts,
    kinds: Vec<variant::Kind>,
    rfc_key: Vec<u8>,
    syntax_key: Vec<u8>,
}

/// Builds the line for canonical seed `c` and variant seed `v` (0: the
/// canonical URL itself) and appends it to `out`; fills the keys.
fn build_line(c: u64, v: u64, global: u64, s: &mut Scratch, out: &mut Vec<u8>) {
    canon::generate(c, global, &mut s.canon);
    s.rfc_key.clear();
    s.canon.render(&mut s.rfc_key);
    s.syntax_key.clear();
    s.kinds.clear();
    if v == 0 {
        s.syntax_key.extend_from_slice(&s.rfc_key);
        out.extend_from_slice(&s.rfc_key);
    } else {
        let mut r = Rng::new(v);
        variant::choose(&mut r, &s.canon, &mut s.kinds);
        variant::apply(&mut r, &s.canon, &s.kinds, &mut s.syntax, &mut s.line);
        s.syntax.render(&mut s.syntax_key);
        s.line.render(out);
    }
}

const FLUSH_AT: usize = 8 << 20;

fn run(a: &Args) -> io::Result<()> {
    let mut sink: Box<dyn Write> = match &a.output {
        Some(path) => Box::new(File::create(path)?),
        None => Box::new(io::stdout().lock()),
    };
    let mut r = Rng::new(mix(a.seed ^ 0x5EED));
    let global = mix(a.seed);
    let mut canon_pool: Pool<u64> = Pool::new();
    let mut line_pool: Pool<(u64, u64)> = Pool::new();
    let mut truth = Truth::default();
    let mut s = Scratch::default();
    let mut spare = Parts::default();
    let mut buf: Vec<u8> = Vec::with_capacity(FLUSH_AT + 4096);
    let bytes_limit = a.bytes.unwrap_or(u64::MAX);
    let lines_limit = a.lines.unwrap_or(u64::MAX);

    while truth.bytes() < bytes_limit && truth.lines() < lines_limit {
        let start = buf.len();
        let x = r.unit();
        if x < a.invalid_ratio {
            let kind = invalid::choose(&mut r);
            canon::generate(r.next_u64(), global, &mut s.canon);
            invalid::write(&mut r, kind, &s.canon, &mut spare, &mut buf);
            truth.invalid(&buf[start..], kind);
            if a.verify && urikey::uri::UriRef::parse_bytes(&buf[start..]).is_ok() {
                report_mismatch(&mut truth, &buf[start..], "accepted an invalid line");
            }
        } else {
            let dup = x < a.invalid_ratio + a.dup_ratio;
            let origin = if !dup {
                Origin::Fresh
            } else if r.chance(0.55) {
                Origin::Repeat
            } else {
                Origin::Variant
            };
            let (c, v, origin) = match origin {
                Origin::Repeat => match line_pool.draw(&mut r) {
                    Some((c, v)) => (c, v, Origin::Repeat),
                    None => (r.next_u64(), 0, Origin::Fresh),
                },
                Origin::Variant => match canon_pool.draw(&mut r) {
                    Some(c) => (c, r.next_u64() | 1, Origin::Variant),
                    None => (r.next_u64(), 0, Origin::Fresh),
                },
                Origin::Fresh => (r.next_u64(), 0, Origin::Fresh),
            };
            build_line(c, v, global, &mut s, &mut buf);
            match origin {
                Origin::Fresh => {
                    canon_pool.push(&mut r, c);
                    line_pool.push(&mut r, (c, 0));
                }
                Origin::Variant => {
                    line_pool.push(&mut r, (c, v));
                    truth.variant_kinds(&s.kinds);
                }
                Origin::Repeat => {}
            }
            truth.valid(&buf[start..], &s.syntax_key, &s.rfc_key, origin);
            if a.verify && urikey::uri::UriRef::parse_bytes(&buf[start..]).is_err() {
                report_mismatch(&mut truth, &buf[start..], "rejected a valid line");
            }
        }
        buf.push(b'\n');
        if buf.len() >= FLUSH_AT {
            sink.write_all(&buf)?;
            buf.clear();
        }
    }
    sink.write_all(&buf)?;
    sink.flush()?;

    let json = truth.to_json(a.seed, a.dup_ratio, a.invalid_ratio, a.verify);
    match &a.truth {
        Some(path) => std::fs::write(path, json)?,
        None => io::stderr().write_all(json.as_bytes())?,
    }
    Ok(())
}

fn report_mismatch(truth: &mut Truth, line: &[u8], what: &str) {
    truth.verify_mismatches += 1;
    if truth.verify_mismatches <= 10 {
        eprintln!(
            "gen_crawl: verify: parser {what}: {}",
            String::from_utf8_lossy(line)
        );
    }
}
