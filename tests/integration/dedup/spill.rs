//! Runs larger than memory: spilled runs give the in-memory output, and
//! leave no temporary files whatever happens.

use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::sync::Arc;

use predicates::prelude::*;
use proptest::prelude::*;
use tempfile::TempDir;
use urikey::engine::{self, Config, Emit, Input, InvalidLine, Select};
use urikey::uri::key::Keyer;

use super::*;
use crate::common::{self, urikey, write};

// ---------------------------------------------------------------------------
// Larger than memory: a spilled run equals the in-memory run.

/// Lines with many distinct keys and repeats far apart, so that spilled
/// keys have first lines and duplicates on both sides of the spill point.
fn spill_input_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((0u32..120, 0..4usize), 0..400).prop_map(|lines| {
        let mut v = Vec::new();
        for (n, form) in lines {
            let line = match form {
                0 => format!("http://h{}.example/p/{n}", n % 7),
                1 => format!("HTTP://H{}.EXAMPLE:80/p/{n}", n % 7),
                2 => format!("http://h{}.example/p/%7E{n}#f", n % 5),
                _ => format!("bad url {n}"),
            };
            v.extend_from_slice(line.as_bytes());
            v.push(b'\n');
        }
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: common::proptest_cases(48),
        ..ProptestConfig::default()
    })]

    #[test]
    fn prop_spilled_run_matches_in_memory(
        input in spill_input_strategy(),
        threads in 1usize..=3,
        chunk_size in prop_oneof![16usize..256, 256usize..4096],
        stream in any::<bool>(),
        output in prop_oneof![Just(Select::Unique), Just(Select::Duplicates), Just(Select::Counts)],
        original in any::<bool>(),
        surt in any::<bool>(),
        after_keys in 0u64..80,
        partition_keys in 1usize..40,
        exact in any::<bool>(),
    ) {
        let keyer = if surt {
            "rfc key=surt".parse::<urikey::uri::key::KeyConfig>().expect("a config").keyer()
        } else {
            Keyer::default()
        };
        let mut config = Config::new(keyer);
        config.threads = threads;
        config.chunk_size = chunk_size;
        config.select = output;
        config.emit = if original { Emit::Original } else { Emit::Key };
        config.exact = exact;
        let (want, want_stats) = run_engine(&config, &input, false).expect("in-memory run");
        let temp = common::churn_dir();
        config.temp_dir = Some(temp.path().to_owned());
        config.spill_hooks.after_keys = Some(after_keys);
        config.spill_hooks.partition_keys = Some(partition_keys);
        let (got, stats) = run_engine(&config, &input, stream).expect("spilled run");
        prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
        prop_assert_eq!((stats.unique, stats.duplicates, stats.invalid), (want_stats.unique, want_stats.duplicates, want_stats.invalid));
        prop_assert!(common::listing(temp.path()).is_empty(), "left behind: {:?}", common::listing(temp.path()));
    }
}

#[test]
fn dedup_spill_files_removed_after_success_and_failure() {
    let input: Vec<u8> = (0..20_000)
        .flat_map(|i| format!("http://h.example/{}\n", i % 15_000).into_bytes())
        .collect();
    let mut config = Config::new(Keyer::default());
    config.chunk_size = 4096;
    let (want, _) = run_engine(&config, &input, false).expect("in-memory run");
    let temp = TempDir::new().expect("temp dir");
    config.temp_dir = Some(temp.path().to_owned());
    config.spill_hooks.after_keys = Some(1000);
    config.spill_hooks.partition_keys = Some(300);
    for stream in [false, true] {
        let (got, _) = run_engine(&config, &input, stream).expect("spilled run");
        assert!(got == want, "spilled output differs (stream: {stream})");
        assert!(common::listing(temp.path()).is_empty());
    }
    // A write failure midway (in phase 2, in the writer, while resolving).
    for fail_after in [0u64, 1000, 100_000, 400_000] {
        config.spill_hooks.fail_after_bytes = Some(fail_after);
        let err = run_engine(&config, &input, true).expect_err("the temp disk is full");
        assert!(matches!(err, engine::Error::Spill { .. }), "{err:?}");
        let text = format!("{err}");
        assert!(text.contains(&temp.path().display().to_string()), "{text}");
        assert!(
            common::listing(temp.path()).is_empty(),
            "{fail_after}: {:?}",
            common::listing(temp.path())
        );
    }
}

/// Several inputs, mapped files and a stream between them: the lines file
/// of a spilled run points into each mapped file in turn (and carries the
/// stream's bytes), and the output is still the in-memory one.
#[test]
fn dedup_spill_several_mapped_inputs() {
    let dir = TempDir::new().expect("temp dir");
    let part = |from: u32, to: u32| -> Vec<u8> {
        (from..to)
            .flat_map(|i| {
                let line = match i % 3 {
                    0 => format!("http://h{}.example/p/{}\n", i % 5, i % 700),
                    1 => format!("HTTP://H{}.EXAMPLE:80/p/{}\r\n", i % 5, i % 700),
                    _ => format!("http://h{}.example/p/%7E{}\n", i % 5, i % 900),
                };
                line.into_bytes()
            })
            .collect()
    };
    let (a, b, c) = (part(0, 1500), part(1500, 2500), part(2500, 4000));
    let fa = write(&dir, "a.txt", &a);
    let fc = write(&dir, "c.txt", &c);
    let inputs = |stream_b: bool| {
        let b = if stream_b {
            Input::Reader {
                name: "b".into(),
                reader: Box::new(std::io::Cursor::new(b.clone())),
            }
        } else {
            Input::Bytes {
                name: "b".into(),
                bytes: Arc::from(&b[..]),
            }
        };
        vec![Input::Path(fa.clone()), b, Input::Path(fc.clone())]
    };
    let temp = TempDir::new().expect("temp dir");
    for select in [Select::Unique, Select::Duplicates, Select::Counts] {
        for emit in [Emit::Key, Emit::Original] {
            let mut config = Config::new(Keyer::default());
            config.threads = 2;
            config.chunk_size = 4096;
            config.select = select;
            config.emit = emit;
            let mut want = Vec::new();
            engine::run(&config, inputs(false), &mut want, &mut |_: &InvalidLine<
                '_,
            >| {})
            .expect("in-memory run");
            // The same inputs read as streams: no line is a slice of a
            // mapped input (with counts, the outputs kept are then copies).
            let streamed = [&a, &b, &c]
                .into_iter()
                .map(|bytes| Input::Reader {
                    name: "s".into(),
                    reader: Box::new(std::io::Cursor::new(bytes.clone())),
                })
                .collect();
            let mut from_streams = Vec::new();
            engine::run(
                &config,
                streamed,
                &mut from_streams,
                &mut |_: &InvalidLine<'_>| {},
            )
            .expect("in-memory run from streams");
            assert!(from_streams == want, "{select:?} {emit:?} from streams");
            config.temp_dir = Some(temp.path().to_owned());
            config.spill_hooks.after_keys = Some(200);
            config.spill_hooks.partition_keys = Some(50);
            for stream_b in [false, true] {
                let mut got = Vec::new();
                engine::run(
                    &config,
                    inputs(stream_b),
                    &mut got,
                    &mut |_: &InvalidLine<'_>| {},
                )
                .expect("spilled run");
                assert!(got == want, "{select:?} {emit:?} stream: {stream_b}");
                assert!(common::listing(temp.path()).is_empty());
            }
        }
    }
}

#[test]
fn dedup_memory_limit_cli_matches_in_memory() {
    let dir = TempDir::new().expect("temp dir");
    let temp = TempDir::new().expect("temp dir");
    let f = write(&dir, "in.txt", SAMPLE);
    for extra in [
        &[][..],
        &["--duplicates"],
        &["--count"],
        &["--emit", "original"],
    ] {
        let want = stdout_of(urikey().arg("dedup").arg("-q").args(extra).arg(&f));
        // A limit below the fixed working set: everything spills.
        let got = stdout_of(
            urikey()
                .args(["dedup", "-q", "--memory-limit", "1K", "--temp-dir"])
                .arg(temp.path())
                .args(extra)
                .arg(&f),
        );
        assert_eq!(got, want, "{extra:?}");
        let piped = stdout_of(
            urikey()
                .args([
                    "dedup",
                    "-q",
                    "--threads",
                    "1",
                    "--memory-limit",
                    "0",
                    "--temp-dir",
                ])
                .arg(temp.path())
                .args(extra)
                .write_stdin(SAMPLE),
        );
        assert_eq!(piped, want, "{extra:?} from stdin");
        assert!(common::listing(temp.path()).is_empty());
    }
    urikey()
        .args(["dedup", "--memory-limit", "lots"])
        .write_stdin(SAMPLE)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a size"));
}

#[test]
fn dedup_exact_spills_with_the_same_output() {
    let dir = TempDir::new().expect("temp dir");
    let temp = TempDir::new().expect("temp dir");
    let f = write(&dir, "in.txt", SAMPLE);
    for extra in [&[][..], &["--duplicates"], &["--count"]] {
        let want = stdout_of(
            urikey()
                .args(["dedup", "-q", "--exact"])
                .args(extra)
                .arg(&f),
        );
        for threads in ["1", "2"] {
            let got = stdout_of(
                urikey()
                    .args(["dedup", "-q", "--exact", "--memory-limit", "0"])
                    .args(["--threads", threads, "--temp-dir"])
                    .arg(temp.path())
                    .args(extra)
                    .write_stdin(SAMPLE),
            );
            assert_eq!(got, want, "{extra:?} {threads}");
        }
        assert!(common::listing(temp.path()).is_empty());
    }
}

/// Lines decoded from gzip members come in segments, not as ranges of the
/// input: a spilled or counted run must copy them, not note where they
/// are (it once noted offsets into the first segment and printed other
/// lines' bytes). Several segments of 128 KiB, mapped and piped.
#[test]
fn dedup_gzip_members_spilled_and_counted_read_as_the_plain_file() {
    let dir = TempDir::new().expect("temp dir");
    let temp = TempDir::new().expect("temp dir");
    let text: Vec<u8> = (0..120_000u64)
        .flat_map(|i| {
            let n = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 44;
            format!("http://h{}.example/p/{n}?q={}\n", n % 97, i % 5).into_bytes()
        })
        .collect();
    let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    let members: Vec<Vec<u8>> = lines.chunks(3000).map(<[&[u8]]>::concat).collect();
    let gz = common::gzip_members(&members.iter().map(Vec::as_slice).collect::<Vec<_>>());
    assert!(gz.len() > 4 * (128 << 10), "{} compressed bytes", gz.len());
    let plain = write(&dir, "plain.txt", &text);
    let members = write(&dir, "members.gz", &gz);
    for select in [&[][..], &["--duplicates"], &["--count"]] {
        let want = stdout_of(urikey().args(["dedup", "-q"]).args(select).arg(&plain));
        for spill in [&[][..], &["--memory-limit", "0", "--temp-dir"]] {
            let run = || {
                let mut cmd = urikey();
                cmd.args(["dedup", "-q", "--threads", "2"]).args(spill);
                if !spill.is_empty() {
                    cmd.arg(temp.path());
                }
                cmd.args(select);
                cmd
            };
            let mapped = stdout_of(run().arg(&members));
            assert!(
                mapped == want,
                "{select:?} {spill:?}: the mapped file differs"
            );
            let piped = stdout_of(run().arg("-").write_stdin(gz.clone()));
            assert!(piped == want, "{select:?} {spill:?}: the pipe differs");
        }
    }
    assert!(common::listing(temp.path()).is_empty());
}

/// A big enough input that a spilling debug build runs for a while.
fn big_input(dir: &TempDir) -> PathBuf {
    let mut input = Vec::new();
    for i in 0..1_500_000u32 {
        input.extend_from_slice(format!("http://h{}.example/some/path/{i}\n", i % 97).as_bytes());
    }
    write(dir, "big.txt", &input)
}

#[cfg(unix)]
#[test]
fn dedup_spill_ctrl_c_leaves_no_temp_files() {
    let dir = TempDir::new().expect("temp dir");
    let f = big_input(&dir);
    for signal in ["-INT", "-TERM"] {
        let temp = TempDir::new().expect("temp dir");
        let out = dir.path().join("out.txt");
        let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("urikey"))
            .args(["dedup", "--memory-limit", "1", "-o"])
            .arg(&out)
            .arg("--temp-dir")
            .arg(temp.path())
            .arg(&f)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawns");
        // Wait until spill files exist, then interrupt.
        let spilling = |p: &Path| {
            std::fs::read_dir(p)
                .into_iter()
                .flatten()
                .flatten()
                .any(|e| e.path().is_dir() && !common::listing(&e.path()).is_empty())
        };
        for _ in 0..1000 {
            if spilling(temp.path()) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(spilling(temp.path()), "{signal}: the run spills");
        let status = StdCommand::new("kill")
            .arg(signal)
            .arg(child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success());
        let code = child.wait().expect("exits");
        assert_ne!(code.code(), Some(0), "{signal}");
        assert!(!out.exists(), "{signal}");
        assert!(
            common::listing(temp.path()).is_empty(),
            "{signal}: {:?}",
            common::listing(temp.path())
        );
    }
}

/// A full temporary filesystem: exit 2, a message naming the directory, no
/// output file. Needs a small tmpfs, so it runs only where this test may
/// mount one (as root); elsewhere the engine-level injected failure of
/// `dedup_spill_files_removed_after_success_and_failure` covers it.
#[cfg(target_os = "linux")]
#[test]
fn dedup_spill_full_temp_disk() {
    let small = TempDir::new().expect("temp dir");
    let mounted = StdCommand::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(small.path())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("note: cannot mount a tmpfs here; skipping the full-disk CLI test");
        return;
    }
    let dir = TempDir::new().expect("temp dir");
    let sample =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/crawl-sample.txt"))
            .expect("the crawl sample");
    let f = write(&dir, "in.txt", &sample);
    let out = dir.path().join("out.txt");
    let result = urikey()
        .args(["dedup", "-q", "--memory-limit", "1", "-o"])
        .arg(&out)
        .arg("--temp-dir")
        .arg(small.path())
        .arg(&f)
        .output();
    let leftover = common::listing(small.path());
    let _ = StdCommand::new("umount").arg(small.path()).status();
    let result = result.expect("runs");
    assert_eq!(result.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        stderr.contains(&small.path().display().to_string()) && stderr.contains("No space left"),
        "{stderr}"
    );
    assert!(!out.exists());
    assert_eq!(common::listing(dir.path()), ["in.txt"]);
    assert!(leftover.is_empty(), "{leftover:?}");
}
