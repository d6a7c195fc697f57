//! Seen-stores (`dedup --state`, `urikey state`, `engine::store`) end to
//! end: runs split anywhere give the one-shot output, a writer killed at any
//! moment leaves the store at a commit, damage is an error, one writer at a
//! time, a configuration is kept.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::common::{self, gzip, stdout_of, urikey};
use tempfile::TempDir;
use urikey::engine::store::{verify, Access, SeenStore, PAUSE_ENV};
use urikey::engine::{self, Config, Emit, Select};
use urikey::uri::key::{fingerprint, KeyConfig, Keyer};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_urikey")
}

fn run_engine(config: &Config, input: &[u8], stream: bool) -> (Vec<u8>, engine::Stats) {
    common::run_engine(config, input, stream).expect("the run succeeds")
}

/// Lines with many distinct keys, repeats far apart, other spellings of
/// one key and invalid lines.
fn input_strategy() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec((0u32..150, 0..4usize), 0..300).prop_map(|lines| {
        lines
            .into_iter()
            .map(|(n, form)| match form {
                0 => format!("http://h{}.example/p/{n}", n % 7),
                1 => format!("HTTP://H{}.EXAMPLE:80/p/{n}", n % 7),
                2 => format!("http://h{}.example/p/%7E{n}#f", n % 5),
                _ => format!("bad url {n}"),
            })
            .collect()
    })
}

/// `lines` cut at `cuts` (line indexes, any order) into successive parts.
fn split(lines: &[String], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut at: Vec<usize> = cuts.iter().map(|&c| c.min(lines.len())).collect();
    at.push(0);
    at.push(lines.len());
    at.sort_unstable();
    at.windows(2)
        .map(|w| {
            lines[w[0]..w[1]]
                .iter()
                .flat_map(|l| format!("{l}\n").into_bytes())
                .collect()
        })
        .collect()
}

fn joined(lines: &[String]) -> Vec<u8> {
    lines
        .iter()
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect()
}

/// The output lines of a `--count` run without their counts.
fn without_counts(out: &[u8]) -> String {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| l.split_once('\t').map_or(l, |(_, rest)| rest))
        .map(|l| format!("{l}\n"))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        // Each case makes a store and syncs its commits: at most 64 cases,
        // however many PROPTEST_CASES asks for.
        cases: common::proptest_cases(64).min(64),
        ..ProptestConfig::default()
    })]

    /// The engine with a store as its prior set: runs over successive
    /// parts of an input, each committed, print together what one run over
    /// the whole input prints; in memory and spilled, with any thread
    /// count, chunk size, output and `--exact`. With counts, each run prints
    /// the keys new to the store with their count in that run.
    #[test]
    fn prop_store_runs_concatenate_to_one_shot(
        lines in input_strategy(),
        cuts in prop::collection::vec(0usize..300, 0..4),
        threads in 1usize..=3,
        chunk_size in prop_oneof![16usize..256, 256usize..4096],
        stream in any::<bool>(),
        output in prop_oneof![Just(Select::Unique), Just(Select::Duplicates), Just(Select::Counts)],
        original in any::<bool>(),
        exact in any::<bool>(),
        spill in prop::option::of((0u64..60, 1usize..30)),
    ) {
        let mut config = Config::new(Keyer::default());
        config.threads = threads;
        config.chunk_size = chunk_size;
        config.select = output;
        config.exact = exact;
        config.emit = if original && output != Select::Counts { Emit::Original } else { Emit::Key };
        let (want, want_stats) = run_engine(&config, &joined(&lines), false);

        let temp = common::churn_dir();
        let spill_dir = common::churn_dir();
        if let Some((after_keys, partition_keys)) = spill {
            config.temp_dir = Some(spill_dir.path().to_owned());
            config.spill_hooks.after_keys = Some(after_keys);
            config.spill_hooks.partition_keys = Some(partition_keys);
        }
        let mut store = SeenStore::create(&temp.path().join("s"), &KeyConfig::default())
            .expect("a new store");
        let mut got = Vec::new();
        let mut unique = 0;
        // Keys of the parts before, for the expected counts.
        let mut earlier: HashSet<String> = HashSet::new();
        for part in split(&lines, &cuts) {
            let session = store.session(true);
            config.prior = Some(session.clone());
            let (out, stats) = run_engine(&config, &part, stream);
            config.prior = None;
            unique += stats.unique;
            if output == Select::Counts {
                // This part alone, less the keys of the parts before.
                let (alone, _) = run_engine(&config, &part, false);
                let expected: String = String::from_utf8_lossy(&alone)
                    .lines()
                    .filter(|l| !earlier.contains(l.split_once('\t').map_or(*l, |p| p.1)))
                    .map(|l| format!("{l}\n"))
                    .collect();
                prop_assert_eq!(String::from_utf8_lossy(&out), expected);
                let mut keys = config.clone();
                keys.select = Select::Unique;
                let (k, _) = run_engine(&keys, &part, false);
                earlier.extend(String::from_utf8_lossy(&k).lines().map(str::to_owned));
            }
            got.extend_from_slice(&out);
            let additions = session.take_additions().expect("a writer's session");
            store.commit(additions).expect("a commit");
        }
        if output == Select::Counts {
            prop_assert_eq!(without_counts(&got), without_counts(&want));
        } else {
            prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
        }
        prop_assert_eq!(unique, want_stats.unique);
        prop_assert_eq!(store.len(), want_stats.unique);
        prop_assert!(verify(store.dir()).is_ok());
        prop_assert!(common::listing(spill_dir.path()).is_empty());
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        // Each case starts the binary several times: at most 12 cases.
        cases: common::proptest_cases(12).min(12),
        ..ProptestConfig::default()
    })]

    /// The command: `dedup --state` over successive parts (files or stdin,
    /// any thread count, a memory limit that spills everything) prints
    /// together what one `dedup` over the whole input prints.
    #[test]
    fn prop_cli_state_runs_concatenate_to_one_shot(
        lines in input_strategy(),
        cuts in prop::collection::vec(0usize..300, 0..3),
        threads in 1usize..=3,
        spill in any::<bool>(),
        stdin in any::<bool>(),
        duplicates in any::<bool>(),
    ) {
        let dir = common::churn_dir();
        let mode: &[&str] = if duplicates { &["--duplicates"] } else { &[] };
        let whole = dir.path().join("whole");
        std::fs::write(&whole, joined(&lines)).expect("write");
        let want = urikey().args(["dedup", "-q"]).args(mode).arg(&whole).output().expect("runs");
        prop_assert!(want.status.success());
        let state = dir.path().join("state");
        let mut got = Vec::new();
        for (i, part) in split(&lines, &cuts).into_iter().enumerate() {
            let mut cmd = urikey();
            cmd.args(["dedup", "-q", "--threads", &threads.to_string(), "--state"])
                .arg(&state)
                .args(mode);
            if spill {
                cmd.args(["--memory-limit", "0", "--temp-dir"]).arg(dir.path());
            }
            if stdin {
                cmd.write_stdin(part);
            } else {
                let f = dir.path().join(format!("part{i}"));
                std::fs::write(&f, part).expect("write");
                cmd.arg(f);
            }
            let out = cmd.output().expect("runs");
            prop_assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            got.extend_from_slice(&out.stdout);
        }
        prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want.stdout));
    }
}

fn state_dir(dir: &TempDir) -> PathBuf {
    dir.path().join("state")
}

/// Every option of `dedup` with `--state`: compressed input, stdin, CSV
/// fields, compat presets, counts, first duplicates, `--stats-json`.
#[test]
fn state_works_with_every_dedup_option() {
    let dir = TempDir::new().expect("temp dir");
    let first = b"id,url\n1,http://a.example/x\n2,\"http://b.example/?q=1,2\"\n";
    let second = b"id,url\n3,HTTP://A.example/x\n4,http://c.example/\n5,http://c.example/\n";
    let f1 = dir.path().join("1.csv.gz");
    std::fs::write(&f1, gzip(first)).expect("write");
    let state = state_dir(&dir);
    let csv = ["--field", "2", "--csv", "--emit", "original", "-q"];
    let out = stdout_of(
        urikey()
            .arg("dedup")
            .args(csv)
            .arg("--state")
            .arg(&state)
            .arg(&f1),
    );
    assert_eq!(out, "1,http://a.example/x\n2,\"http://b.example/?q=1,2\"\n");
    let out = stdout_of(
        urikey()
            .arg("dedup")
            .args(csv)
            .arg("--state")
            .arg(&state)
            .write_stdin(&second[..]),
    );
    assert_eq!(out, "4,http://c.example/\n");

    // Counts: the keys new to the store, counted over this run.
    let third = "http://c.example/\nhttp://d.example/\nhttp://d.example/\nhttp://e.example/\n";
    let out = stdout_of(
        urikey()
            .args(["dedup", "--count", "--state-readonly"])
            .arg(&state)
            .write_stdin(third),
    );
    assert_eq!(out, "2\thttp://d.example/\n1\thttp://e.example/\n");
    let out = stdout_of(
        urikey()
            .args(["dedup", "--duplicates=first", "--state-readonly"])
            .arg(&state)
            .write_stdin(third),
    );
    assert_eq!(out, "http://d.example/\n");
    let out = stdout_of(
        urikey()
            .args(["dedup", "--duplicates", "--state-readonly"])
            .arg(&state)
            .write_stdin(third),
    );
    assert_eq!(out, "http://c.example/\nhttp://d.example/\n");

    // A compat preset's store, and --stats-json with the store's figures.
    let w3 = dir.path().join("w3");
    let json = dir.path().join("stats.json");
    let out = stdout_of(
        urikey()
            .args(["dedup", "--compat", "w3lib", "--state"])
            .arg(&w3)
            .arg("--stats-json")
            .arg(&json)
            .write_stdin("http://a.example/?b=1&a=2\nhttp://a.example/?a=2&b=1\n"),
    );
    assert_eq!(out, "http://a.example/?a=2&b=1\n");
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("stats")).expect("json");
    assert_eq!(stats["state"]["added"], 1);
    assert_eq!(stats["state"]["keys_after"], 1);
    let out = stdout_of(
        urikey()
            .args(["dedup", "--compat", "w3lib", "--state"])
            .arg(&w3)
            .write_stdin("http://a.example/?b=1&a=2#x\nhttp://z.example/\n"),
    );
    assert_eq!(out, "http://z.example/\n");
    // The same store under other options is refused, naming both.
    let out = urikey()
        .args(["dedup", "--state"])
        .arg(&w3)
        .write_stdin("http://a.example/\n")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`compat=w3lib`") && err.contains("`rfc`"),
        "{err}"
    );
    assert!(err.contains("break deduplication"), "{err}");
}

#[test]
fn state_commands_init_info_verify_compact_merge_export() {
    let dir = TempDir::new().expect("temp dir");
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    urikey()
        .args(["state", "init"])
        .arg(&a)
        .args(["--profile", "crawl", "--with", "sort-query"])
        .assert()
        .success();
    urikey()
        .args(["state", "init"])
        .arg(&b)
        .args(["--config", "crawl +sort-query"])
        .assert()
        .success();
    // Made already: refused.
    urikey().args(["state", "init"]).arg(&a).assert().code(2);
    let crawl = ["--profile", "crawl", "--with", "sort-query", "-q"];
    for (store, text) in [
        (&a, "http://a.example/1\nhttp://a.example/2\n"),
        (&a, "http://a.example/3\n"),
        (&b, "http://a.example/2?b=1&a=1\nhttp://a.example/4#x\n"),
    ] {
        urikey()
            .arg("dedup")
            .args(crawl)
            .arg("--state")
            .arg(store)
            .write_stdin(text)
            .assert()
            .success();
    }
    let info = stdout_of(urikey().args(["state", "info", "--json"]).arg(&a));
    let info: serde_json::Value = serde_json::from_str(&info).expect("json");
    assert_eq!(info["keys"], 3);
    assert_eq!(info["config"], "crawl +sort-query");
    urikey()
        .args(["state", "merge"])
        .arg(&a)
        .arg(&b)
        .assert()
        .success();
    urikey()
        .args(["state", "compact"])
        .arg(&a)
        .assert()
        .success();
    let info = stdout_of(urikey().args(["state", "info"]).arg(&a));
    assert!(info.contains("keys:        5"), "{info}");
    assert!(info.contains("runs:        1"), "{info}");
    urikey()
        .args(["state", "verify"])
        .arg(&a)
        .assert()
        .success();
    let hex = stdout_of(urikey().args(["state", "export"]).arg(&a));
    let mut want: Vec<String> = [
        "http://a.example/1",
        "http://a.example/2",
        "http://a.example/3",
        "http://a.example/2?a=1&b=1",
        "http://a.example/4",
    ]
    .iter()
    .map(|k| format!("{:032x}", fingerprint(k.as_bytes())))
    .collect();
    want.sort();
    assert_eq!(hex.lines().collect::<Vec<_>>(), want);
    let csv = stdout_of(
        urikey()
            .args(["state", "export", "--format", "csv"])
            .arg(&a),
    );
    let mut rows = csv.lines();
    assert_eq!(rows.next(), Some("fp_hi,fp_lo"));
    for (row, hex) in rows.zip(&want) {
        let (hi, lo) = row.split_once(',').expect("two columns");
        let fp = (u128::from(hi.parse::<i64>().expect("hi") as u64) << 64)
            | u128::from(lo.parse::<i64>().expect("lo") as u64);
        assert_eq!(&format!("{fp:032x}"), hex);
    }
    // Parquet: the same halves, in the same order, and the configuration.
    let parquet = dir.path().join("a.parquet");
    urikey()
        .args(["state", "export", "--format", "parquet", "-o"])
        .arg(&parquet)
        .arg(&a)
        .assert()
        .success();
    let (rows, meta) = parquet_rows(&parquet);
    let csv_rows: Vec<String> = csv.lines().skip(1).map(str::to_owned).collect();
    let parquet_rows: Vec<String> = rows.iter().map(|(hi, lo)| format!("{hi},{lo}")).collect();
    assert_eq!(parquet_rows, csv_rows);
    assert!(
        meta.contains(&("urikey.config".to_owned(), "crawl +sort-query".to_owned())),
        "{meta:?}"
    );
    // Another configuration cannot be merged in.
    let c = dir.path().join("c");
    urikey().args(["state", "init"]).arg(&c).assert().success();
    let out = urikey()
        .args(["state", "merge"])
        .arg(&a)
        .arg(&c)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}

/// A Parquet export read back: its `(fp_hi, fp_lo)` rows and its key-value
/// metadata.
type Export = (Vec<(i64, i64)>, Vec<(String, String)>);

/// A `state export --format parquet` file, read with the parquet crate.
fn parquet_rows(path: &Path) -> Export {
    use parquet::basic::Repetition;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::RowAccessor;

    let file = std::fs::File::open(path).expect("opens");
    let reader = SerializedFileReader::new(file).expect("a Parquet file");
    let meta = reader.metadata().file_metadata();
    let fields = meta.schema().get_fields();
    let names: Vec<&str> = fields.iter().map(|f| f.name()).collect();
    assert_eq!(names, ["fp_hi", "fp_lo"]);
    for f in fields {
        assert_eq!(f.get_basic_info().repetition(), Repetition::REQUIRED);
        assert_eq!(f.get_physical_type(), parquet::basic::Type::INT64);
    }
    let kv = meta
        .key_value_metadata()
        .map(|kv| {
            kv.iter()
                .map(|e| (e.key.clone(), e.value.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let rows = reader
        .get_row_iter(None)
        .expect("rows")
        .map(|r| {
            let r = r.expect("a row");
            (r.get_long(0).expect("fp_hi"), r.get_long(1).expect("fp_lo"))
        })
        .collect();
    (rows, kv)
}

#[test]
fn export_parquet_of_an_empty_store_and_to_stdout() {
    let dir = TempDir::new().expect("temp dir");
    let s = dir.path().join("s");
    urikey().args(["state", "init"]).arg(&s).assert().success();
    let empty = dir.path().join("empty.parquet");
    urikey()
        .args(["state", "export", "--format", "parquet", "-o"])
        .arg(&empty)
        .arg(&s)
        .assert()
        .success();
    assert_eq!(parquet_rows(&empty).0, []);
    let lines: String = (0..3000)
        .map(|i| format!("http://e.example/{i}\n"))
        .collect();
    urikey()
        .args(["dedup", "-q", "--state"])
        .arg(&s)
        .write_stdin(lines)
        .assert()
        .success();
    // Written to stdout (a pipe) as well as to a file.
    let out = urikey()
        .args(["state", "export", "--format", "parquet"])
        .arg(&s)
        .output()
        .expect("runs");
    assert!(out.status.success());
    let piped = dir.path().join("piped.parquet");
    std::fs::write(&piped, &out.stdout).expect("writes");
    let (rows, _) = parquet_rows(&piped);
    assert_eq!(rows.len(), 3000);
    let hex = stdout_of(urikey().args(["state", "export"]).arg(&s));
    let from_parquet: Vec<String> = rows
        .iter()
        .map(|&(hi, lo)| format!("{:016x}{:016x}", hi as u64, lo as u64))
        .collect();
    assert_eq!(from_parquet, hex.lines().collect::<Vec<_>>());
}

/// Kills `child` after `delay`, unless it ended; returns whether it ended
/// by itself, successfully.
fn kill_after(mut child: std::process::Child, delay: Duration) -> bool {
    let until = Instant::now() + delay;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status.success();
        }
        if Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            return false;
        }
        std::thread::sleep(Duration::from_micros(300));
    }
}

fn store_keys(dir: &Path) -> HashSet<u128> {
    let store = SeenStore::open_for(dir, &KeyConfig::default(), Access::ReadOnly)
        .unwrap_or_else(|e| panic!("the store opens: {e}"));
    let mut keys = HashSet::new();
    store
        .for_each(Path::new("-"), |fp| {
            keys.insert(fp);
            Ok(())
        })
        .expect("readable");
    assert_eq!(keys.len() as u64, store.len());
    keys
}

/// A writer killed (`SIGKILL`) at random moments, inside commits too
/// (every commit step sleeps a little): after each kill the store opens,
/// verifies, and holds exactly the keys of the runs that committed, and
/// the next run prints exactly the lines new to it. `URIKEY_CRASH_RUNS`
/// sets the number of kills (200 by default).
#[test]
fn state_survives_sigkill_at_any_moment() {
    let runs: usize = std::env::var("URIKEY_CRASH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let dir = TempDir::new().expect("temp dir");
    let state = state_dir(&dir);
    let spill = dir.path().join("spill");
    std::fs::create_dir(&spill).expect("mkdir");
    // Inputs of canonical URLs (each line its own key): most drawn from a
    // shared population, so that runs share keys, some new to every input,
    // so that every run commits.
    let make = |k: usize| -> (Vec<String>, PathBuf) {
        let lines: Vec<String> = (0..200u64)
            .map(|j| {
                if j % 8 != 0 {
                    let n = (k as u64 * 7919 + j * 104_729) % 2000;
                    format!("http://h{}.example/p{n}", n % 13)
                } else {
                    format!("http://new{k}.example/{j}")
                }
            })
            .collect();
        let p = dir.path().join(format!("in{}", k % 4));
        std::fs::write(&p, joined(&lines)).expect("write");
        (lines, p)
    };
    // Killed runs sleep 2 ms at every step of their commit, to be hit there
    // more often; the others do not.
    let spawn = |input: &Path, variant: usize, pause: bool| {
        let mut cmd = StdCommand::new(bin());
        cmd.args(["dedup", "-q", "--state"]).arg(&state);
        // A killed run cannot remove its spill directory: keep them here.
        cmd.env("TMPDIR", &spill);
        if pause {
            cmd.env(PAUSE_ENV, "2");
        }
        cmd.stdout(Stdio::piped()).stderr(Stdio::null());
        match variant % 3 {
            0 => {}
            // Spilled, and additions through temporary files in the store.
            1 => {
                cmd.args(["--memory-limit", "0", "--state-buffer", "0", "--temp-dir"])
                    .arg(&spill);
            }
            _ => {
                cmd.args(["--threads", "1"]);
            }
        }
        cmd.arg(input).spawn().expect("spawns")
    };
    let mut committed: HashSet<u128> = HashSet::new();
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    // How long an undisturbed run takes here (the longest of the last
    // few, and the pauses): kills fall anywhere in such a run.
    let (first, path) = make(1 << 20);
    let timed = Instant::now();
    let probe = spawn(&path, 0, false).wait_with_output().expect("runs");
    assert!(probe.status.success());
    let mut recent = [timed.elapsed(); 8];
    for line in &first {
        committed.insert(fingerprint(line.as_bytes()));
    }
    let (mut finished, mut mid_commit, mut before) = (0, 0, 0);
    for k in 0..runs {
        let (lines, path) = make(2 * k);
        let typical = recent.iter().max().copied().unwrap_or_default() + Duration::from_millis(15);
        let delay = typical.mul_f64((next() % 1000) as f64 / 1000.0);
        let ended = kill_after(spawn(&path, k, true), delay);
        let keys = store_keys(&state);
        let report = verify(&state);
        assert!(report.is_ok(), "run {k}: {report:?}");
        let with: HashSet<u128> = committed
            .iter()
            .copied()
            .chain(lines.iter().map(|l| fingerprint(l.as_bytes())))
            .collect();
        if ended {
            finished += 1;
            assert!(keys == with, "run {k} ended but its keys are not all there");
        } else if keys == with && with != committed {
            mid_commit += 1;
        } else {
            assert!(keys == committed, "run {k}: the store is not at a commit");
            if report
                .notes
                .iter()
                .any(|n| n.contains("interrupted writer"))
            {
                mid_commit += 1;
            } else {
                before += 1;
            }
        }
        committed = keys;
        // The next run, undisturbed, prints exactly the lines new to the
        // store, and commits them.
        let (lines, path) = make(2 * k + 1);
        let timed = Instant::now();
        let out = spawn(&path, k + 1, false).wait_with_output().expect("runs");
        let took = timed.elapsed();
        assert!(out.status.success(), "run {k}: the next run failed");
        let mut want = String::new();
        let mut seen = committed.clone();
        for line in &lines {
            if seen.insert(fingerprint(line.as_bytes())) {
                want.push_str(line);
                want.push('\n');
            }
        }
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "run {k}");
        recent[k % 8] = took;
        committed = seen;
        assert_eq!(store_keys(&state), committed, "run {k}");
    }
    eprintln!(
        "{runs} kills: {before} before the commit point, {mid_commit} inside a commit, \
         {finished} after the run ended (committing runs took up to {:?})",
        recent.iter().max()
    );
    assert!(
        mid_commit > 0 && before > 0,
        "the kills missed the commit windows"
    );
    assert!(common::listing(&spill).is_empty() || runs > 0);
}

/// What a writer can do to a store's files: truncate, flip a bit, delete
/// a run or the manifest. Each is a clear error naming the file, for
/// `dedup --state` and `state verify` alike, never an answer.
#[test]
fn state_damage_is_a_clear_error() {
    let dir = TempDir::new().expect("temp dir");
    let state = state_dir(&dir);
    let lines: String = (0..5000)
        .map(|i| format!("http://a.example/{i}\n"))
        .collect();
    urikey()
        .args(["dedup", "-q", "--state"])
        .arg(&state)
        .write_stdin(lines.clone())
        .assert()
        .success();
    let run = std::fs::read_dir(&state)
        .expect("listing")
        .map(|e| e.expect("entry").path())
        .find(|p| p.extension().is_some_and(|e| e == "ukr"))
        .expect("a run file");
    let good = std::fs::read(&run).expect("read");
    let manifest = state.join("MANIFEST");
    let good_manifest = std::fs::read(&manifest).expect("read");
    let check = |what: &str, needle: &str| {
        let out = urikey()
            .args(["dedup", "-q", "--state-readonly"])
            .arg(&state)
            .write_stdin(lines.clone())
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(out.stdout.is_empty(), "{what}: printed something");
        assert!(err.contains(needle), "{what}: {err}");
        let out = urikey()
            .args(["state", "verify"])
            .arg(&state)
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        assert!(err.contains(needle), "{what}: {err}");
    };
    let name = run
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    std::fs::write(&run, &good[..good.len() - 100]).expect("write");
    check("truncated", "truncated");
    let mut bad = good.clone();
    bad[64 + 16 * 100 + 5] ^= 0x20;
    std::fs::write(&run, &bad).expect("write");
    check("flipped key", "checksum mismatch in block 1");
    let mut bad = good.clone();
    let last = bad.len() - 40;
    bad[last] ^= 1;
    std::fs::write(&run, &bad).expect("write");
    check("flipped index", "checksum");
    std::fs::remove_file(&run).expect("rm");
    check("missing run", &name);
    std::fs::write(&run, &good).expect("write");
    let mut bad = good_manifest.clone();
    bad[30] ^= 1;
    std::fs::write(&manifest, &bad).expect("write");
    check("flipped manifest", "manifest checksum");
    std::fs::remove_file(&manifest).expect("rm");
    check(
        "missing manifest",
        "missing, though the directory holds the store's runs",
    );
    std::fs::write(&manifest, &good_manifest).expect("write");
    urikey()
        .args(["state", "verify"])
        .arg(&state)
        .assert()
        .success();
}

/// One writer at a time: a second one fails at once naming the first (its
/// pid); a read-only run goes on beside it; a writer killed leaves a lock
/// the next one takes over.
#[test]
fn state_lock_one_writer_readers_beside_it() {
    let dir = TempDir::new().expect("temp dir");
    let state = state_dir(&dir);
    let spawn_writer = || {
        StdCommand::new(bin())
            .args(["dedup", "-q", "--state"])
            .arg(&state)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawns")
    };
    let mut first = spawn_writer();
    let pid = first.id();
    let lock = state.join("LOCK");
    let until = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&lock).is_ok_and(|s| s.contains(&format!("pid {pid} "))) {
        assert!(Instant::now() < until, "the writer never took the lock");
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = urikey()
        .args(["dedup", "--state"])
        .arg(&state)
        .write_stdin("http://x.example/\n")
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("locked") && err.contains(&format!("pid {pid}")),
        "{err}"
    );
    // A reader needs no lock.
    let out = stdout_of(
        urikey()
            .args(["dedup", "--state-readonly"])
            .arg(&state)
            .write_stdin("http://x.example/\n"),
    );
    assert_eq!(out, "http://x.example/\n");
    let info = stdout_of(urikey().args(["state", "info"]).arg(&state));
    assert!(info.contains(&format!("pid {pid}")), "{info}");
    // The first writer ends well.
    let mut stdin = first.stdin.take().expect("stdin");
    stdin.write_all(b"http://y.example/\n").expect("write");
    drop(stdin);
    assert!(first.wait().expect("waits").success());
    assert_eq!(store_keys(&state).len(), 1);
    // A writer killed holding the lock: the next one takes it over.
    let mut killed = spawn_writer();
    let pid = killed.id();
    while !std::fs::read_to_string(&lock).is_ok_and(|s| s.contains(&format!("pid {pid} "))) {
        std::thread::sleep(Duration::from_millis(10));
    }
    killed.kill().expect("kill");
    killed.wait().expect("wait");
    let out = stdout_of(
        urikey()
            .args(["dedup", "--state"])
            .arg(&state)
            .write_stdin("http://y.example/\nhttp://z.example/\n"),
    );
    assert_eq!(out, "http://z.example/\n");
}

/// A failed or interrupted run leaves the store unchanged: an input that
/// cannot be read, `--fail-on-invalid`, a full disk during the commit
/// (`ulimit -f`: writes past it fail with EFBIG, the stand-in for ENOSPC
/// that needs no root).
#[test]
fn state_failed_runs_leave_the_store_unchanged() {
    let dir = TempDir::new().expect("temp dir");
    let state = state_dir(&dir);
    urikey()
        .args(["dedup", "-q", "--state"])
        .arg(&state)
        .write_stdin("http://a.example/\n")
        .assert()
        .success();
    let before = store_keys(&state);
    urikey()
        .args(["dedup", "-q", "--state"])
        .arg(&state)
        .arg(dir.path().join("missing"))
        .assert()
        .code(2);
    assert_eq!(store_keys(&state), before);
    urikey()
        .args(["dedup", "-q", "--fail-on-invalid", "--state"])
        .arg(&state)
        .write_stdin("http://b.example/\nnot a url\n")
        .assert()
        .code(1);
    assert_eq!(store_keys(&state), before);
    // 20,000 new keys: a run file of about 300 KB, past a 64 KiB limit.
    let big = dir.path().join("big");
    let lines: String = (0..20_000)
        .map(|i| format!("http://c.example/{i}\n"))
        .collect();
    std::fs::write(&big, &lines).expect("write");
    let out = StdCommand::new("bash")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 64; exec \"$0\" dedup -q --state \"$1\" \"$2\"")
        .arg(bin())
        .arg(&state)
        .arg(&big)
        .output()
        .expect("bash runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not added to the store"), "{err}");
    assert!(verify(&state).is_ok());
    assert_eq!(store_keys(&state), before);
    assert_eq!(
        common::listing(&state),
        vec!["LOCK", "MANIFEST", "run-00000001-0.ukr"],
        "the failed commit's files are gone"
    );
    // With room again, the same run commits.
    urikey()
        .args(["dedup", "-q", "--state"])
        .arg(&state)
        .arg(&big)
        .assert()
        .success();
    assert_eq!(store_keys(&state).len(), 20_001);
}
