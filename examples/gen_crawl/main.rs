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
//! validity against the crate's strict parser), `--from FILE...` (base URLs
//! from real lists, see below).
//!
//! The output is a pure function of the seed, ratios (and lists); a smaller
//! size gives a prefix of a larger one. Every valid line is either a fresh
//! canonical URL, a byte-exact repeat, or an equivalent variant (see
//! `variant.rs`) whose keys under the `none`, `syntax` and `rfc` profiles
//! are known by construction; the truth report counts distinct keys.
//!
//! With `--from`, the fresh lines are the lists' lines instead (see
//! `real.rs`; unparsable ones are kept as they are), repeated and respelled
//! by the same pools and variant rewrites. Real URLs are not canonical, so
//! keys are not known by construction: the truth is computed by keying each
//! new line with the library (`"truth": "keyed"` in the report).

mod canon;
mod invalid;
mod real;
mod rng;
mod truth;
mod variant;
mod vocab;

use std::fs::File;
use std::io::{self, Write};
use std::process::ExitCode;

use canon::Parts;
use real::RealLists;
use rng::{mix, Rng};
use truth::{FromReport, Keyers, Origin, Truth};

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
    /// Real lists to take base URLs from (`--from`).
    from: Vec<String>,
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
[--dup-ratio R] [--invalid-ratio R] [-o FILE] [--truth FILE] [--verify] [--from FILE...]

Writes a seeded crawl-like URL dump (default: 100000 lines to stdout) and its
ground truth as JSON (to stderr, or --truth FILE): lines, bytes, invalid lines,
and the number of unique keys under the profiles none, syntax and rfc.

--from FILE...  Take the base URLs from these newline-delimited lists instead
                of generating them (repeat --from or list several files).
                Each non-empty line is a base (a leading BOM and trailing CR
                dropped); lines that do not parse are kept as they are (real
                dirty data: written and repeated, never respelled). Fresh
                lines walk the bases in a seeded order, pass after pass; the
                rest repeat or respell earlier lines as for generated URLs.
                The truth is keyed: each new line is keyed with the library
                (profiles none, syntax, rfc; relative references invalid, as
                urikey dedup does), and the report adds distinct_lines.
                --invalid-ratio defaults to 0 here and may not be set;
                --verify does not apply.";

/// The parsed options, or `None` when help was asked for.
fn parse_args(it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut a = Args {
        bytes: None,
        lines: None,
        seed: 1,
        dup_ratio: 0.5,
        invalid_ratio: 0.005,
        output: None,
        truth: None,
        verify: false,
        from: Vec::new(),
    };
    let mut invalid_ratio_set = false;
    let mut it = it.peekable();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--bytes" => a.bytes = Some(parse_size(&value()?)?),
            "--lines" => a.lines = Some(value()?.parse().map_err(|e| format!("--lines: {e}"))?),
            "--seed" => a.seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--dup-ratio" => a.dup_ratio = parse_ratio(&value()?)?,
            "--invalid-ratio" => {
                a.invalid_ratio = parse_ratio(&value()?)?;
                invalid_ratio_set = true;
            }
            "-o" | "--output" => a.output = Some(value()?),
            "--truth" => a.truth = Some(value()?),
            "--verify" => a.verify = true,
            "--from" => {
                a.from.push(value()?);
                while let Some(more) = it.next_if(|s| !s.starts_with('-')) {
                    a.from.push(more);
                }
            }
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown option {other:?} (try --help)")),
        }
    }
    if a.bytes.is_none() && a.lines.is_none() {
        a.lines = Some(100_000);
    }
    if !a.from.is_empty() {
        // The lists bring their own dirty lines; generated damage would
        // need a valid base and a truth by construction.
        if invalid_ratio_set {
            return Err("--invalid-ratio does not apply with --from".into());
        }
        if a.verify {
            return Err("--verify does not apply with --from (its truth is keyed)".into());
        }
        a.invalid_ratio = 0.0;
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
    /// The base line's text: a generated URL (which is its own `rfc` key)
    /// or a line of a real list.
    base: Vec<u8>,
    syntax_key: Vec<u8>,
}

/// Where base URLs come from.
enum Source {
    /// Generated from a seed (`canon::generate`); keys known by construction.
    Synthetic { global: u64 },
    /// Lines of real lists (`--from`); keys computed by the library.
    Real {
        lists: RealLists,
        keyers: Box<Keyers>,
    },
}

impl Source {
    /// A fresh line: its base, and `Origin::Repeat` instead of `Fresh` when
    /// a later pass over real lists writes a base again.
    fn fresh(&mut self, r: &mut Rng) -> (u64, u64, Origin) {
        match self {
            Source::Synthetic { .. } => (r.next_u64(), 0, Origin::Fresh),
            Source::Real { lists, .. } => match lists.next_fresh() {
                (c, true) => (c, 0, Origin::Fresh),
                (c, false) => (c, 0, Origin::Repeat),
            },
        }
    }

    /// True when base `c` may be respelled.
    fn respellable(&self, c: u64) -> bool {
        match self {
            Source::Synthetic { .. } => true,
            Source::Real { lists, .. } => lists.respellable(c),
        }
    }
}

/// Builds the line for base `c` and variant seed `v` (0: the base line
/// itself) and appends it to `out`; for generated bases, fills the keys.
fn build_line(src: &Source, c: u64, v: u64, s: &mut Scratch, out: &mut Vec<u8>) {
    s.base.clear();
    let respell = match src {
        Source::Synthetic { global } => {
            canon::generate(c, *global, &mut s.canon);
            s.canon.render(&mut s.base);
            v != 0
        }
        Source::Real { lists, .. } => {
            s.base.extend_from_slice(lists.line(c));
            v != 0 && lists.parts(c, &mut s.canon)
        }
    };
    s.syntax_key.clear();
    s.kinds.clear();
    if respell {
        let mut r = Rng::new(v);
        variant::choose(&mut r, &s.canon, &mut s.kinds);
        variant::apply(&mut r, &s.canon, &s.kinds, &mut s.syntax, &mut s.line);
        s.syntax.render(&mut s.syntax_key);
        s.line.render(out);
    } else {
        s.syntax_key.extend_from_slice(&s.base);
        out.extend_from_slice(&s.base);
    }
}

const FLUSH_AT: usize = 8 << 20;

fn run(a: &Args) -> io::Result<()> {
    let mut src = if a.from.is_empty() {
        Source::Synthetic {
            global: mix(a.seed),
        }
    } else {
        let mut keyers = Box::new(Keyers::new());
        let lists = RealLists::load(&a.from, a.seed, &mut |line| keyers.is_valid(line))?;
        Source::Real { lists, keyers }
    };
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
            // Only synthetic: `--from` sets the ratio to 0.
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
                    None => src.fresh(&mut r),
                },
                Origin::Variant => match canon_pool.draw(&mut r) {
                    Some(c) => (c, r.next_u64() | 1, Origin::Variant),
                    None => src.fresh(&mut r),
                },
                Origin::Fresh => src.fresh(&mut r),
            };
            build_line(&src, c, v, &mut s, &mut buf);
            match origin {
                Origin::Fresh => {
                    if src.respellable(c) {
                        canon_pool.push(&mut r, c);
                    }
                    line_pool.push(&mut r, (c, 0));
                }
                Origin::Variant => {
                    line_pool.push(&mut r, (c, v));
                    truth.variant_kinds(&s.kinds);
                }
                Origin::Repeat => {}
            }
            match &mut src {
                Source::Synthetic { .. } => {
                    truth.valid(&buf[start..], &s.syntax_key, &s.base, origin);
                    if a.verify && urikey::uri::UriRef::parse_bytes(&buf[start..]).is_err() {
                        report_mismatch(&mut truth, &buf[start..], "rejected a valid line");
                    }
                }
                Source::Real { lists, keyers } => {
                    let known_valid = (v == 0).then(|| lists.valid(c));
                    truth.keyed(&buf[start..], origin, known_valid, keyers);
                }
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

    let from = match &src {
        Source::Synthetic { .. } => None,
        Source::Real { lists, .. } => Some(FromReport {
            names: lists.names.clone(),
            base_lines: lists.len(),
            base_invalid: lists.invalid(),
            passes: lists.passes(),
        }),
    };
    let json = truth.to_json(
        a.seed,
        a.dup_ratio,
        a.invalid_ratio,
        a.verify,
        from.as_ref(),
    );
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

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    fn args(list: &[&str]) -> Args {
        parse_args(list.iter().map(ToString::to_string))
            .unwrap()
            .unwrap()
    }

    fn generate(a: &Args) -> (Vec<u8>, serde_json::Value) {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("dump.txt");
        let truth = dir.path().join("truth.json");
        let mut a = Args {
            output: Some(out.to_string_lossy().into_owned()),
            truth: Some(truth.to_string_lossy().into_owned()),
            from: a.from.clone(),
            ..*a
        };
        a.verify = false;
        run(&a).unwrap();
        let json = std::fs::read_to_string(&truth).unwrap();
        (
            std::fs::read(&out).unwrap(),
            serde_json::from_str(&json).unwrap(),
        )
    }

    /// The synthetic stream is pinned: `--from` shares its code path and
    /// must not change a byte of it.
    #[test]
    fn synthetic_stream_is_unchanged() {
        let (dump, truth) = generate(&args(&[
            "--lines",
            "20000",
            "--seed",
            "3",
            "--invalid-ratio",
            "0.01",
        ]));
        let digest = Sha256::digest(&dump);
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "2aa6d2e44813d414e7dfd50dd6edcd492871d58882fee70ee1f545bfc37d9d1f"
        );
        assert_eq!(truth["unique_rfc"], 9700);
        assert_eq!(truth["truth"], "by construction");
    }

    const LIST: &str = "\u{feff}http://Example.com:80/a/./b?x=%7e\r\n\
        https://www.example.org/\n\
        http://www.example.org/?q\n\
        \n\
        mailto:someone@example.com\n\
        urn:isbn:0451450523\n\
        file:///usr/lib/x.js\n\
        http://[::1]:8080/p\n\
        http://192.168.0.1/\n\
        /relative/path\n\
        http://bad host/\n\
        http://example.com/%zz\n\
        https://example.com/a\n";

    fn from_args(dir: &std::path::Path, extra: &[&str]) -> Args {
        let list = dir.join("list.txt");
        std::fs::write(&list, LIST).unwrap();
        let mut v = vec!["--from".to_string(), list.to_string_lossy().into_owned()];
        v.extend(extra.iter().map(ToString::to_string));
        parse_args(v.into_iter()).unwrap().unwrap()
    }

    /// The keyed truth (which skips repeats and trusts the bases' known
    /// validity) equals keying every line of the dump from scratch.
    #[test]
    fn from_truth_equals_keying_every_line() {
        let dir = tempfile::tempdir().unwrap();
        let a = from_args(dir.path(), &["--lines", "5000", "--seed", "9"]);
        let (dump, truth) = generate(&a);
        let mut k = Keyers::new();
        let mut sets: [std::collections::HashSet<Vec<u8>>; 4] = Default::default();
        let mut invalid = 0;
        let mut scratch = urikey::uri::key::KeyScratch::default();
        let keyer = |p: &str| {
            p.parse::<urikey::uri::key::KeyConfig>()
                .unwrap()
                .keyer()
                .with_relative(urikey::uri::key::Relative::Reject)
        };
        let keyers = [keyer("none"), keyer("syntax"), keyer("rfc")];
        let lines: Vec<&[u8]> = dump
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        for line in &lines {
            sets[3].insert(line.to_vec());
            if !k.is_valid(line) {
                invalid += 1;
                continue;
            }
            for (keyer, set) in keyers.iter().zip(sets.iter_mut()) {
                set.insert(keyer.key(line, &mut scratch).unwrap().to_vec());
            }
        }
        assert_eq!(truth["lines"], lines.len());
        assert_eq!(truth["invalid"], invalid);
        assert_eq!(truth["unique_none"], sets[0].len());
        assert_eq!(truth["unique_syntax"], sets[1].len());
        assert_eq!(truth["unique_rfc"], sets[2].len());
        assert_eq!(truth["distinct_lines"], sets[3].len());
        assert_eq!(truth["truth"], "keyed");
        assert_eq!(truth["base_lines"], 12);
        // The BOM and the CR are file artefacts; the bad lines stay as is.
        assert!(lines.contains(&&b"http://Example.com:80/a/./b?x=%7e"[..]));
        assert!(lines.contains(&&b"http://bad host/"[..]));
        assert!(lines.contains(&&b"/relative/path"[..]));
        // Respelled lines exist, and several spellings share a key.
        assert!(truth["variants"].as_u64().unwrap() > 1000);
        assert!(sets[0].len() > 10 * sets[2].len());
    }

    /// Same seed, same dump; a shorter run is a prefix of a longer one.
    #[test]
    fn from_is_seeded_and_prefix_stable() {
        let dir = tempfile::tempdir().unwrap();
        let (long, _) = generate(&from_args(dir.path(), &["--lines", "3000", "--seed", "4"]));
        let (short, _) = generate(&from_args(dir.path(), &["--lines", "1000", "--seed", "4"]));
        let (other, _) = generate(&from_args(dir.path(), &["--lines", "1000", "--seed", "5"]));
        assert!(long.starts_with(&short));
        assert_ne!(short, other);
    }

    #[test]
    fn from_takes_several_files_and_rejects_generated_damage() {
        let a = args(&[
            "--from", "a.txt", "b.txt", "--from", "c.txt", "--bytes", "1K",
        ]);
        assert_eq!(a.from, ["a.txt", "b.txt", "c.txt"]);
        assert_eq!(a.invalid_ratio, 0.0);
        assert_eq!(a.bytes, Some(1024));
        let bad = |v: &[&str]| parse_args(v.iter().map(ToString::to_string)).is_err();
        assert!(bad(&["--from", "a.txt", "--invalid-ratio", "0.1"]));
        assert!(bad(&["--from", "a.txt", "--verify"]));
        assert!(bad(&["--from"]));
    }
}
