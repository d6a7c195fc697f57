//! `urikey dedup` as a user runs it: options, inputs, outputs and every
//! failure mode.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command as StdCommand, Stdio};

use predicates::prelude::*;
use tempfile::TempDir;

use super::*;
use crate::common::{self, urikey, write};

#[test]
fn dedup_keeps_first_of_each_in_order() {
    urikey()
        .arg("dedup")
        .write_stdin(SAMPLE)
        .assert()
        .success()
        .stdout("http://a.example/x\nhttp://b.example/\nhttp://c.example/y?q\n")
        .stderr("");
}

#[test]
fn dedup_crlf_bom_blank_and_missing_final_newline() {
    let input = b"\xEF\xBB\xBFhttp://a.example/\r\n\r\n\nhttp://b.example/\r\nhttp://a.example/\r\nhttp://c.example/";
    urikey()
        .args(["dedup", "--emit", "original", "--stats"])
        .write_stdin(&input[..])
        .assert()
        .success()
        .stdout("http://a.example/\nhttp://b.example/\nhttp://c.example/\n")
        .stderr(predicate::str::contains("6 lines").and(predicate::str::contains("2 blank")));
}

#[test]
fn dedup_empty_input() {
    urikey()
        .arg("dedup")
        .write_stdin("")
        .assert()
        .success()
        .stdout("");
    let dir = TempDir::new().expect("temp dir");
    let empty = write(&dir, "empty.txt", b"");
    urikey()
        .arg("dedup")
        .arg(&empty)
        .assert()
        .success()
        .stdout("");
}

#[test]
fn dedup_invalid_lines_reported_and_run_goes_on() {
    let input = b"http://a.example/\nht tp://bad\nhttp://a.example/\xff\nhttp://b.example/\n";
    let out = urikey()
        .arg("dedup")
        .write_stdin(&input[..])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, b"http://a.example/\nhttp://b.example/\n");
    let err = String::from_utf8_lossy(&out.stderr);
    // "ht tp://bad" starts at byte 18; the space is at index 2.
    assert!(err.contains("urikey: -:2: byte 20: "), "{err}");
    // The 0xFF byte of line 3 is at 30 + 17.
    assert!(err.contains("urikey: -:3: byte 47: "), "{err}");
    urikey()
        .args(["dedup", "--fail-on-invalid", "--quiet"])
        .write_stdin(&input[..])
        .assert()
        .code(1)
        .stdout("http://a.example/\nhttp://b.example/\n")
        .stderr("");
}

#[test]
fn dedup_invalid_reports_are_capped_but_rejects_keep_all() {
    let dir = TempDir::new().expect("temp dir");
    let mut input = Vec::new();
    for i in 0..50 {
        input.extend_from_slice(format!("bad line {i}\n").as_bytes());
    }
    let rejects = dir.path().join("rejects.txt");
    let out = urikey()
        .arg("dedup")
        .arg("--rejects")
        .arg(&rejects)
        .write_stdin(input)
        .output()
        .expect("runs");
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().filter(|l| l.contains(": byte ")).count(), 20);
    assert!(err.contains("30 more invalid lines not shown"), "{err}");
    let rej = std::fs::read_to_string(&rejects).expect("rejects written");
    assert_eq!(rej.lines().count(), 50);
    assert!(rej.starts_with("-:1:3:"), "{rej}");
    assert!(rej
        .lines()
        .nth(1)
        .is_some_and(|l| l.starts_with("-:2:14:") && l.ends_with("\tbad line 1")));
}

#[test]
fn dedup_rejects_format() {
    let dir = TempDir::new().expect("temp dir");
    let f = write(&dir, "in.txt", b"http://a.example/\nhttp://x y/\r\n");
    let rejects = dir.path().join("r.txt");
    urikey()
        .arg("dedup")
        .arg("-q")
        .arg(&f)
        .arg("--rejects")
        .arg(&rejects)
        .assert()
        .success();
    let rej = std::fs::read_to_string(&rejects).expect("rejects written");
    let want = format!("{}:2:26:", f.display());
    assert!(rej.starts_with(&want), "{rej}");
    assert!(rej.ends_with("\thttp://x y/\n"), "{rej:?}");
}

#[test]
fn dedup_line_too_long() {
    let mut input = b"http://a.example/\n".to_vec();
    input.extend_from_slice(b"http://b.example/");
    input.extend(std::iter::repeat_n(b'a', 100));
    input.extend_from_slice(b"\nhttp://c.example/\n");
    let dir = TempDir::new().expect("temp dir");
    let f = write(&dir, "long.txt", &input);
    let json = dir.path().join("s.json");
    for source in [Some(&f), None] {
        let mut cmd = urikey();
        cmd.args(["dedup", "--max-line-bytes", "40", "--stats-json"])
            .arg(&json);
        match source {
            Some(f) => cmd.arg(f),
            None => cmd.write_stdin(input.clone()),
        };
        cmd.assert()
            .success()
            .stdout("http://a.example/\nhttp://c.example/\n")
            .stderr(predicate::str::contains(":2: byte 58: line too long"));
        let stats: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).expect("stats")).expect("json");
        assert_eq!(stats["invalid_by_reason"]["line-too-long"], 1);
        assert_eq!(stats["lines"], 3);
        assert_eq!(stats["bytes"], input.len());
    }
}

#[test]
fn dedup_stdin_mmap_gzip_zstd_agree() {
    let dir = TempDir::new().expect("temp dir");
    let mut input = Vec::new();
    for i in 0..5000 {
        input.extend_from_slice(
            format!("http://h{}.example/p/{}\r\n", (i % 1013) % 97, i % 1013).as_bytes(),
        );
        if i % 71 == 0 {
            input.extend_from_slice(b"not a url\n\n");
        }
    }
    let plain = write(&dir, "plain.txt", &input);
    // Names say nothing: compression is recognised by content.
    let gz = write(&dir, "gz.dat", &gzip(&input));
    let zst = write(&dir, "zst.txt", &zstd(&input));
    let want = stdout_of(urikey().args(["dedup", "-q"]).write_stdin(input.clone()));
    assert_eq!(want.lines().count(), 1013);
    for f in [&plain, &gz, &zst] {
        for threads in ["1", "3"] {
            let got = stdout_of(
                urikey()
                    .args(["dedup", "-q", "--chunk-size", "1000", "--threads", threads])
                    .arg(f),
            );
            assert_eq!(got, want, "{}", f.display());
        }
    }
    let via_stdin = stdout_of(
        urikey()
            .args(["dedup", "-q", "-"])
            .write_stdin(gzip(&input)),
    );
    assert_eq!(via_stdin, want);
}

#[test]
fn dedup_multiple_inputs_are_one_stream() {
    let dir = TempDir::new().expect("temp dir");
    let a = write(&dir, "a.txt", b"http://a.example/\nhttp://b.example/");
    let b = write(
        &dir,
        "b.txt",
        &gzip(b"http://b.example/\nbad url\nhttp://c.example/\n"),
    );
    let out = urikey()
        .arg("dedup")
        .arg(&a)
        .arg(&b)
        .output()
        .expect("runs");
    assert!(out.status.success());
    assert_eq!(
        out.stdout,
        b"http://a.example/\nhttp://b.example/\nhttp://c.example/\n"
    );
    // Line numbers are per input.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:2: byte 21: ", b.display())),
        "{err}"
    );
}

#[test]
fn dedup_field_and_delimiter() {
    let input = b"1,http://a.example/,x\r\n2,http://b.example/,y\n3,http://a.example/,z\n4\n";
    let out = urikey()
        .args([
            "dedup",
            "--field",
            "2",
            "--delimiter",
            ",",
            "--emit",
            "canonical",
        ])
        .write_stdin(&input[..])
        .output()
        .expect("runs");
    assert!(out.status.success());
    assert_eq!(
        out.stdout,
        b"1,http://a.example/,x\n2,http://b.example/,y\n"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("-:4: byte 68: missing field"), "{err}");
    // TAB by default.
    urikey()
        .args(["dedup", "--field", "1"])
        .write_stdin("http://a.example/\tone\nhttp://a.example/\ttwo\n")
        .assert()
        .success()
        .stdout("http://a.example/\tone\n");
    urikey()
        .args(["dedup", "--field", "0"])
        .write_stdin("")
        .assert()
        .code(2);
}

#[test]
fn dedup_duplicates_and_count() {
    urikey()
        .args(["dedup", "--duplicates"])
        .write_stdin(SAMPLE)
        .assert()
        .success()
        .stdout("http://a.example/x\nhttp://b.example/\n");
    urikey()
        .args(["dedup", "--count", "--emit", "original"])
        .write_stdin(SAMPLE)
        .assert()
        .success()
        .stdout("2\thttp://a.example/x\n2\thttp://b.example/\n1\thttp://c.example/y?q\n");
    urikey()
        .args([
            "dedup",
            "--count",
            "--exact",
            "--threads",
            "2",
            "--chunk-size",
            "7",
        ])
        .write_stdin(SAMPLE)
        .assert()
        .success()
        .stdout("2\thttp://a.example/x\n2\thttp://b.example/\n1\thttp://c.example/y?q\n");
    urikey()
        .args(["dedup", "--count", "--duplicates"])
        .write_stdin("")
        .assert()
        .code(2);
}

#[test]
fn dedup_exact_matches_fingerprints() {
    let a = stdout_of(urikey().args(["dedup", "--exact"]).write_stdin(SAMPLE));
    let b = stdout_of(urikey().args(["dedup"]).write_stdin(SAMPLE));
    assert_eq!(a, b);
}

#[test]
fn dedup_output_file_is_atomic() {
    let dir = TempDir::new().expect("temp dir");
    let input = write(&dir, "in.txt", SAMPLE);
    let out = dir.path().join("out.txt");
    urikey()
        .arg("dedup")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stdout("");
    assert_eq!(
        std::fs::read_to_string(&out).expect("output written"),
        "http://a.example/x\nhttp://b.example/\nhttp://c.example/y?q\n"
    );
    assert_eq!(common::listing(dir.path()), ["in.txt", "out.txt"]);
    // Writing over the input itself is safe: the input is read first.
    urikey()
        .arg("dedup")
        .arg(&input)
        .arg("-o")
        .arg(&input)
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(&input).expect("rewritten"),
        "http://a.example/x\nhttp://b.example/\nhttp://c.example/y?q\n"
    );
}

#[test]
fn dedup_stats_and_stats_json() {
    let dir = TempDir::new().expect("temp dir");
    let json = dir.path().join("stats.json");
    urikey()
        .args(["dedup", "--stats", "--threads", "2", "-q", "--stats-json"])
        .arg(&json)
        .write_stdin(
            b"http://a.example/\n\nbad url\nhttp://a.example/\nhttp://b.example/\n".to_vec(),
        )
        .assert()
        .success()
        .stderr(
            predicate::str::contains("5 lines")
                .and(predicate::str::contains("2 unique"))
                .and(predicate::str::contains("1 duplicates"))
                .and(predicate::str::contains("1 invalid"))
                .and(predicate::str::contains("MB/s"))
                .and(predicate::str::contains("time: keys")),
        );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("written"))
            .expect("valid json");
    assert_eq!(s["lines"], 5);
    assert_eq!(s["bytes"], 63);
    assert_eq!(s["blank"], 1);
    assert_eq!(s["invalid"], 1);
    assert_eq!(s["unique"], 2);
    assert_eq!(s["duplicates"], 1);
    assert_eq!(s["threads"], 2);
    assert!((s["duplicate_ratio"].as_f64().expect("number") - 1.0 / 3.0).abs() < 1e-5);
    assert_eq!(
        s["invalid_by_reason"].as_object().map(serde_json::Map::len),
        Some(1)
    );
    for key in ["wall_seconds", "mb_per_s", "urls_per_s"] {
        assert!(s[key].as_f64().is_some(), "{key}");
    }
    assert!(s["peak_rss_bytes"].as_u64().is_some_and(|v| v > 0));
    // Where the wall time went: four parts the run measured, and the rest.
    let phases = s["phases"].as_object().expect("an object");
    let seconds = |k: &str| phases[k].as_f64().expect("a number");
    let measured = [
        "keys_seconds",
        "inserts_seconds",
        "input_wait_seconds",
        "writer_wait_seconds",
    ];
    assert_eq!(phases.len(), measured.len() + 1);
    for k in measured.iter().chain(&["other_seconds"]) {
        assert!(seconds(k) >= 0.0, "{k}");
    }
    let wall = s["wall_seconds"].as_f64().expect("a number");
    let spent: f64 = measured.iter().map(|k| seconds(k)).sum();
    assert!(spent <= wall + 1e-6, "{spent} > {wall}");
    assert!((spent + seconds("other_seconds") - wall).abs() < 1e-3);
}

#[test]
fn dedup_threads_and_progress_do_not_change_output() {
    let mut input = Vec::new();
    for i in 0..3000 {
        input.extend_from_slice(format!("http://x{}.example/{}\n", i % 31, i % 257).as_bytes());
    }
    let want = stdout_of(
        urikey()
            .args(["dedup", "--threads", "1"])
            .write_stdin(input.clone()),
    );
    for args in [
        &["--threads", "2", "--chunk-size", "1"][..],
        &["--threads", "4", "--chunk-size", "333", "--progress"],
        &["--threads", "0", "--no-progress"],
    ] {
        let got = stdout_of(urikey().arg("dedup").args(args).write_stdin(input.clone()));
        assert_eq!(got, want, "{args:?}");
    }
}

#[test]
fn dedup_rejects_that_would_replace_an_input_or_the_output_are_refused() {
    let dir = TempDir::new().expect("temp dir");
    let input = write(&dir, "in.txt", b"http://a/\nbad url\n");
    let out = dir.path().join("out.txt");
    let spelled = dir.path().join(".").join("in.txt");
    // The input (spelled another way), and the output before it exists.
    for (rejects, output) in [(&spelled, &out), (&out, &out)] {
        urikey()
            .arg("dedup")
            .arg(&input)
            .arg("-o")
            .arg(output)
            .arg("--rejects")
            .arg(rejects)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("names an input or the output"));
        assert_eq!(
            std::fs::read(&input).expect("input"),
            b"http://a/\nbad url\n"
        );
        assert!(!out.exists());
    }
    // Any other file is fine.
    let rejects = dir.path().join("rejects.txt");
    urikey()
        .arg("dedup")
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .arg("--rejects")
        .arg(&rejects)
        .assert()
        .success();
    assert_eq!(std::fs::read(&out).expect("output"), b"http://a/\n");
    assert!(std::fs::read_to_string(&rejects)
        .expect("rejects")
        .contains("bad url"));
    // A device is written in place: both may go to it.
    #[cfg(unix)]
    urikey()
        .arg("dedup")
        .arg(&input)
        .args(["-o", "/dev/null", "--rejects", "/dev/null"])
        .assert()
        .success();
}

#[test]
fn dedup_too_many_threads_is_a_usage_error() {
    urikey()
        .args(["dedup", "--threads", "100000"])
        .write_stdin(SAMPLE)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("threads must be at most 4096"));
}

#[test]
fn dedup_missing_input_fails_cleanly() {
    let dir = TempDir::new().expect("temp dir");
    let ok = write(&dir, "ok.txt", SAMPLE);
    let missing = dir.path().join("missing.txt");
    let out = dir.path().join("out.txt");
    urikey()
        .arg("dedup")
        .arg(&ok)
        .arg(&missing)
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(format!(
            "cannot open {}",
            missing.display()
        )));
    assert_eq!(common::listing(dir.path()), ["ok.txt"]);
}

/// A file whose size reads 0 but that has content (`/proc`, `/sys`) is
/// read to its end, not taken as empty.
#[cfg(target_os = "linux")]
#[test]
fn dedup_reads_files_that_say_they_are_empty() {
    let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
    assert_eq!(
        std::fs::metadata("/proc/self/status").expect("stat").len(),
        0
    );
    let out = urikey()
        .args(["dedup", "--stats", "--allow-relative", "/proc/self/status"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    let lines = status.lines().count();
    assert!(lines > 10);
    assert!(err.contains(&format!("urikey: {lines} lines,")), "{err}");
}

#[test]
fn dedup_directory_input_fails_cleanly() {
    let dir = TempDir::new().expect("temp dir");
    let out = dir.path().join("out.txt");
    urikey()
        .arg("dedup")
        .arg(dir.path())
        .arg("-o")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains(dir.path().display().to_string())
                .and(predicate::str::contains("directory")),
        );
    assert!(common::listing(dir.path()).is_empty());
}

#[cfg(unix)]
#[test]
fn dedup_unreadable_input_fails_cleanly() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new().expect("temp dir");
    let f = write(&dir, "secret.txt", SAMPLE);
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    if std::fs::File::open(&f).is_ok() {
        // Running as root: permissions do not stop us, nothing to test.
        return;
    }
    urikey()
        .arg("dedup")
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(f.display().to_string()));
}

#[test]
fn dedup_corrupt_and_truncated_compressed_inputs() {
    let dir = TempDir::new().expect("temp dir");
    let mut input = Vec::new();
    for i in 0..20000 {
        input.extend_from_slice(format!("http://h.example/{i}\n").as_bytes());
    }
    let gz = gzip(&input);
    let zs = zstd(&input);
    let mut corrupt = gz.clone();
    let mid = corrupt.len() / 2;
    for b in &mut corrupt[mid..mid + 64] {
        *b ^= 0x5a;
    }
    let cases = [
        ("truncated.gz", gz[..gz.len() / 2].to_vec(), "gzip"),
        ("corrupt.gz", corrupt, "gzip"),
        ("truncated.zst", zs[..zs.len() / 2].to_vec(), "zstd"),
        ("no-trailer.gz", gz[..gz.len() - 4].to_vec(), "gzip"),
    ];
    for (name, bytes, kind) in cases {
        let f = write(&dir, name, &bytes);
        let out = dir.path().join("out.txt");
        urikey()
            .arg("dedup")
            .arg(&f)
            .arg("-o")
            .arg(&out)
            .assert()
            .code(2)
            .stderr(
                predicate::str::contains(format!("cannot decompress {}", f.display()))
                    .and(predicate::str::contains(format!(
                        "truncated {kind} data after"
                    )))
                    .and(predicate::str::contains("decompressed bytes")),
            );
        assert!(!out.exists(), "{name}");
        assert!(
            !common::listing(dir.path())
                .iter()
                .any(|n| n.ends_with(".tmp")),
            "{name}"
        );
        std::fs::remove_file(&f).expect("cleanup");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn dedup_full_disk_on_stdout() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full exists");
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("urikey"))
        .arg("dedup")
        .stdin(Stdio::piped())
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(SAMPLE)
        .expect("fed");
    let out = child.wait_with_output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("cannot write stdout: No space left on device"));
}

/// `--count` formats its output on several threads once the input has
/// ended: a write that fails stops them all, with exit 2 and the error.
#[cfg(target_os = "linux")]
#[test]
fn dedup_count_onto_a_full_disk_stops_with_the_error() {
    let lines: String = (0..50_000)
        .map(|i| format!("http://h{}.example/p/{i}\n", i % 89))
        .collect();
    for threads in ["1", "2", "3"] {
        urikey()
            .args(["dedup", "--count", "--threads", threads, "-o", "/dev/full"])
            .write_stdin(lines.as_bytes())
            .assert()
            .code(2)
            .stderr(predicate::str::contains("No space left on device"));
    }
}

/// `-o` onto a device writes in place: renaming a temporary file over
/// `/dev/null` would replace the device (we may run as root).
#[cfg(target_os = "linux")]
#[test]
fn dedup_output_to_a_device_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    urikey()
        .args(["dedup", "-o", "/dev/null"])
        .write_stdin(SAMPLE)
        .assert()
        .success();
    let kind = std::fs::metadata("/dev/null").expect("exists").file_type();
    assert!(kind.is_char_device(), "/dev/null must stay a device");
    // ENOSPC through -o: exit 2, a message naming the failure.
    urikey()
        .args(["dedup", "-o", "/dev/full"])
        .write_stdin(SAMPLE)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("urikey: "));
    assert!(std::fs::metadata("/dev/full")
        .expect("exists")
        .file_type()
        .is_char_device());
}

#[test]
fn dedup_output_dir_missing() {
    let dir = TempDir::new().expect("temp dir");
    let out = dir.path().join("no/such/dir/out.txt");
    urikey()
        .arg("dedup")
        .arg("-o")
        .arg(&out)
        .write_stdin(SAMPLE)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(out.display().to_string()));
    assert!(common::listing(dir.path()).is_empty());
}

#[test]
fn dedup_closed_pipe_is_quiet_success() {
    let mut input = Vec::new();
    for i in 0..400_000 {
        input.extend_from_slice(format!("http://h.example/{i}\n").as_bytes());
    }
    let dir = TempDir::new().expect("temp dir");
    let f = write(&dir, "big.txt", &input);
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("urikey"))
        .arg("dedup")
        .arg(&f)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).expect("some output");
    drop(stdout);
    let out = child.wait_with_output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[cfg(unix)]
#[test]
fn dedup_ctrl_c_leaves_no_output_file() {
    for signal in ["-INT", "-TERM"] {
        let dir = TempDir::new().expect("temp dir");
        let out = dir.path().join("out.txt");
        let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("urikey"))
            .arg("dedup")
            .arg("-o")
            .arg(&out)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawns");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(SAMPLE).expect("fed");
        // Wait until the temporary file exists, then interrupt.
        for _ in 0..500 {
            if !common::listing(dir.path()).is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(
            !common::listing(dir.path()).is_empty(),
            "the temporary output exists while running"
        );
        let status = StdCommand::new("kill")
            .arg(signal)
            .arg(child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success());
        let code = child.wait().expect("exits");
        drop(stdin);
        assert_ne!(code.code(), Some(0), "{signal}");
        assert!(!out.exists(), "{signal}");
        assert!(
            common::listing(dir.path()).is_empty(),
            "{signal}: {:?}",
            common::listing(dir.path())
        );
    }
}

/// A URL dump holds absolute URLs. A relative reference
/// is invalid by default, `--base` resolves it (§5.2) before keying, and
/// `--allow-relative` keys it as it is.
#[test]
fn dedup_relative_references() {
    let input = "hello\nwww.example.com\nhttp://a.example/x\n/x\n../y?q\n";
    let dir = TempDir::new().expect("temp dir");
    let json = dir.path().join("stats.json");
    let out = urikey()
        .args(["dedup", "--stats-json"])
        .arg(&json)
        .write_stdin(input)
        .output()
        .expect("runs");
    assert!(out.status.success());
    assert_eq!(out.stdout, b"http://a.example/x\n");
    let stats = stats_of(&json);
    assert_eq!(stats["invalid_by_reason"]["relative-reference"], 4);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("-:1: byte 0: relative reference"), "{err}");
    assert!(err.contains("-:2: byte 6: relative reference"), "{err}");
    urikey()
        .args(["dedup", "--base", "HTTP://A.example/b/c?q#f"])
        .write_stdin(input)
        .assert()
        .success()
        .stdout(
            "http://a.example/b/hello\nhttp://a.example/b/www.example.com\n\
             http://a.example/x\nhttp://a.example/y?q\n",
        )
        .stderr("");
    urikey()
        .args(["dedup", "--allow-relative"])
        .write_stdin(input)
        .assert()
        .success()
        .stdout("hello\nwww.example.com\nhttp://a.example/x\n/x\n../y?q\n")
        .stderr("");
    for bad in ["relative/base", "http://a b/"] {
        urikey()
            .args(["dedup", "--base", bad])
            .write_stdin(input)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--base"));
    }
    urikey()
        .args(["dedup", "--base", "http://a/", "--allow-relative"])
        .write_stdin(input)
        .assert()
        .code(2);
    // `normalize` keys any URI-reference, as before.
    urikey()
        .args(["normalize"])
        .write_stdin("hello\n/a/./b\n")
        .assert()
        .success()
        .stdout("hello\n/a/./b\n");
}

/// Issue 13 item 7: under --lenient a line of spaces and tabs is blank.
#[test]
fn dedup_lenient_whitespace_line_is_blank() {
    let dir = TempDir::new().expect("temp dir");
    let json = dir.path().join("stats.json");
    urikey()
        .args(["dedup", "--lenient", "--stats-json"])
        .arg(&json)
        .write_stdin(" \t \nhttp://a.example/\n\t\n  \r\n")
        .assert()
        .success()
        .stdout("http://a.example/\n")
        .stderr("");
    let stats = stats_of(&json);
    assert_eq!(
        (&stats["blank"], &stats["unique"], &stats["invalid"]),
        (&3.into(), &1.into(), &0.into())
    );
    // `normalize --lenient` keeps one (empty) output line per input line,
    // and reports nothing.
    urikey()
        .args(["normalize", "--lenient"])
        .write_stdin(" \t \nHTTP://a/\n")
        .assert()
        .success()
        .stdout("\nhttp://a/\n")
        .stderr("");
}

/// Issue 13 item 8: an empty column is invalid, `--csv` reads RFC 4180
/// quoting, and `--emit canonical --field` replaces the column by its key.
#[test]
fn dedup_field_empty_csv_and_canonical_column() {
    let out = urikey()
        .args(["dedup", "--field", "2", "--allow-relative"])
        .write_stdin("a\t\tx\nb\t\ty\nc\thttp://h/\tz\n")
        .output()
        .expect("runs");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "c\thttp://h/\tz\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("-:1: byte 2: empty field"), "{err}");
    assert!(err.contains("-:2: byte 7: empty field"), "{err}");
    // Lenient whitespace in a column is an empty column too.
    let dir = TempDir::new().expect("temp dir");
    let json = dir.path().join("stats.json");
    urikey()
        .args(["dedup", "--field", "2", "--lenient", "-q", "--stats-json"])
        .arg(&json)
        .write_stdin("a\t \tx\n")
        .assert()
        .success()
        .stdout("");
    assert_eq!(stats_of(&json)["invalid_by_reason"]["empty-field"], 1);

    let csv = "1,\"HTTP://a.example/?x=1,2\",x\n\
               2,http://a.example/?x=1%2c2,y\n\
               3,\"http://a.example:80/?x=1,2\",z\n\
               4,\"q\"\"uote\",w\n";
    urikey()
        .args(["dedup", "--field", "2", "--csv", "-q"])
        .write_stdin(csv)
        .assert()
        .success()
        .stdout("1,\"http://a.example/?x=1,2\",x\n2,http://a.example/?x=1%2C2,y\n");
    urikey()
        .args(["dedup", "--field", "2", "--csv", "--emit", "original", "-q"])
        .write_stdin(csv)
        .assert()
        .success()
        .stdout("1,\"HTTP://a.example/?x=1,2\",x\n2,http://a.example/?x=1%2c2,y\n");
    // Without --csv the quoted columns are cut at their comma: invalid.
    urikey()
        .args(["dedup", "--field", "2", "--delimiter", ",", "-q"])
        .write_stdin(csv)
        .assert()
        .success()
        .stdout("2,http://a.example/?x=1%2C2,y\n");
    // --csv needs --field.
    urikey()
        .args(["dedup", "--csv"])
        .write_stdin("")
        .assert()
        .code(2);

    // --emit canonical: the column becomes its key, in the --key form.
    urikey()
        .args(["dedup", "--field", "2"])
        .write_stdin("a\tHTTP://A.example:80/%7e\tz\nb\thttp://a.example/~\ty\n")
        .assert()
        .success()
        .stdout("a\thttp://a.example/~\tz\n");
    urikey()
        .args(["dedup", "--field", "1", "--key", "surt", "--count"])
        .write_stdin("HTTP://A.example:80/%7e\tz\nhttp://a.example/~\ty\n")
        .assert()
        .success()
        .stdout("2\texample,a)/~\tz\n");
}

fn stats_of(json: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(json).expect("stats written")).expect("json")
}

fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut enc = liblzma::write::XzEncoder::new(Vec::new(), 6);
    enc.write_all(bytes).expect("in-memory write");
    enc.finish().expect("in-memory write")
}

fn bzip2(bytes: &[u8]) -> Vec<u8> {
    let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
    enc.write_all(bytes).expect("in-memory write");
    enc.finish().expect("in-memory write")
}

/// Issue 13 item 9: `.xz` and `.bz2` inputs are recognised by their
/// magic bytes and decompressed (concatenated streams too); truncated
/// ones fail like truncated gzip; other binary input gives one warning.
#[test]
fn dedup_xz_bzip2_and_binary_input() {
    let dir = TempDir::new().expect("temp dir");
    let mut input = Vec::new();
    for i in 0..3000 {
        input.extend_from_slice(format!("http://h{}.example/p\n", i % 701).as_bytes());
    }
    let want = stdout_of(urikey().args(["dedup", "-q"]).write_stdin(input.clone()));
    assert_eq!(want.lines().count(), 701);
    for (name, packed) in [("x.dat", xz(&input)), ("b.dat", bzip2(&input))] {
        let path = write(&dir, name, &packed);
        let got = stdout_of(urikey().args(["dedup", "--chunk-size", "1000"]).arg(&path));
        assert_eq!(got, want, "{name}");
        let got = stdout_of(urikey().arg("dedup").write_stdin(packed.clone()));
        assert_eq!(got, want, "{name} on stdin");
        let twice = [packed.clone(), packed.clone()].concat();
        let got = stdout_of(urikey().args(["dedup", "--duplicates"]).write_stdin(twice));
        assert_eq!(got.lines().count(), 2 * 3000 - 701, "{name} twice");
        let cut = write(&dir, &format!("cut-{name}"), &packed[..packed.len() / 2]);
        urikey()
            .arg("dedup")
            .arg(&cut)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("corrupt or truncated"));
    }
    let mut binary = Vec::new();
    for i in 0..500u32 {
        binary.extend_from_slice(&i.to_le_bytes());
        binary.extend_from_slice(b"\x00\x00\x01\n");
    }
    let out = urikey()
        .args(["dedup", "-q"])
        .write_stdin(binary)
        .output()
        .expect("runs");
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("looks like binary data").count(), 1, "{err}");
    // Text with a stray NUL byte is no binary input.
    let out = urikey()
        .args(["dedup", "-q"])
        .write_stdin("http://a/\nhttp://b/\x00\nhttp://c/\n")
        .output()
        .expect("runs");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("binary"));
}
