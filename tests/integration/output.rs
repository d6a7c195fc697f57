//! Output files and streams of `urikey dedup` and `urikey normalize`, run as
//! a user would run them: file modes, symbolic links, `-` for stdout, a
//! closed stderr, progress in logs, the `--stats` wall time, Ctrl-C, and the
//! messages that name the user's paths.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use predicates::prelude::*;
use tempfile::TempDir;

use crate::common::{urikey, write};

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("urikey")
}

/// Three keys, two of them twice, and one invalid line.
const SAMPLE: &[u8] = b"http://a.example/x\nHTTP://A.EXAMPLE/x\nhttp://b.example/\nbad uri\nhttp://b.example:80/\nhttp://c.example/y?q\n";

/// The dedup output of [`SAMPLE`].
const SAMPLE_UNIQUE: &str = "http://a.example/x\nhttp://b.example/\nhttp://c.example/y?q\n";

/// The rejects record of [`SAMPLE`]'s invalid line.
fn sample_reject(path: &Path) -> String {
    format!("{}:4:59:invalid-path\tbad uri\n", path.display())
}

/// Runs `script` with `sh -c`, `$U` being the binary, in `dir`.
#[cfg(unix)]
fn sh(dir: &TempDir, script: &str) -> std::process::Output {
    StdCommand::new("sh")
        .arg("-c")
        .arg(script)
        .env("U", bin())
        .current_dir(dir.path())
        .output()
        .expect("sh runs")
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .expect("exists")
        .permissions()
        .mode()
        & 0o777
}

// ---------------------------------------------------------------------------
// Item 10: modes, existing files, symbolic links, for every output file.

#[cfg(unix)]
#[test]
fn output_new_files_get_0666_minus_umask() {
    let dir = TempDir::new().expect("temp dir");
    write(&dir, "in.txt", SAMPLE);
    for (umask, want) in [("022", 0o644), ("027", 0o640), ("077", 0o600)] {
        let _ = std::fs::remove_file(dir.path().join("out.txt"));
        let _ = std::fs::remove_file(dir.path().join("rej.txt"));
        let _ = std::fs::remove_file(dir.path().join("stats.json"));
        let _ = std::fs::remove_file(dir.path().join("norm.txt"));
        let out = sh(
            &dir,
            &format!(
                "umask {umask}; \"$U\" dedup -q -o out.txt --rejects rej.txt --stats-json stats.json in.txt \
                 && \"$U\" normalize -q -o norm.txt in.txt"
            ),
        );
        assert!(out.status.success(), "{out:?}");
        for name in ["out.txt", "rej.txt", "stats.json", "norm.txt"] {
            assert_eq!(
                mode(&dir.path().join(name)),
                want,
                "{name} with umask {umask}"
            );
        }
    }
}

#[cfg(unix)]
#[test]
fn output_existing_files_keep_their_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new().expect("temp dir");
    let input = write(&dir, "in.txt", SAMPLE);
    let names = ["out.txt", "rej.txt", "stats.json"];
    for (name, m) in names.iter().zip([0o640, 0o604, 0o664]) {
        let p = write(&dir, name, b"old\n");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(m)).expect("chmod");
    }
    urikey()
        .current_dir(dir.path())
        .args(["dedup", "-q", "-o", "out.txt", "--rejects", "rej.txt"])
        .args(["--stats-json", "stats.json"])
        .arg(&input)
        .assert()
        .success();
    for (name, m) in names.iter().zip([0o640, 0o604, 0o664]) {
        assert_eq!(mode(&dir.path().join(name)), m, "{name}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).expect("out"),
        SAMPLE_UNIQUE
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("rej.txt")).expect("rejects"),
        sample_reject(&input)
    );
}

#[cfg(unix)]
#[test]
fn output_symlinks_are_written_through() {
    use std::os::unix::fs::symlink;
    let dir = TempDir::new().expect("temp dir");
    let input = write(&dir, "in.txt", SAMPLE);
    std::fs::create_dir(dir.path().join("real")).expect("mkdir");
    for name in ["out.txt", "rej.txt", "stats.json", "norm.txt"] {
        // One link to an existing file, one dangling (the file is created).
        if name != "rej.txt" {
            write(&dir, &format!("real/{name}"), b"old\n");
        }
        symlink(format!("real/{name}"), dir.path().join(name)).expect("symlink");
    }
    urikey()
        .current_dir(dir.path())
        .args(["dedup", "-q", "-o", "out.txt", "--rejects", "rej.txt"])
        .args(["--stats-json", "stats.json"])
        .arg(&input)
        .assert()
        .success();
    urikey()
        .current_dir(dir.path())
        .args(["normalize", "-q", "-o", "norm.txt"])
        .arg(&input)
        .assert()
        .success();
    for name in ["out.txt", "rej.txt", "stats.json", "norm.txt"] {
        let link = dir.path().join(name);
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("exists")
                .file_type()
                .is_symlink(),
            "{name} is still a link"
        );
    }
    let read =
        |name: &str| std::fs::read_to_string(dir.path().join("real").join(name)).expect("target");
    assert_eq!(read("out.txt"), SAMPLE_UNIQUE);
    assert_eq!(read("rej.txt"), sample_reject(&input));
    assert!(read("stats.json").contains("\"unique\": 3"));
    assert_eq!(read("norm.txt").lines().count(), 6);
    // The temporary files were renamed in the targets' directory.
    assert_eq!(
        crate::common::listing(&dir.path().join("real")),
        ["norm.txt", "out.txt", "rej.txt", "stats.json"]
    );
}

/// `--stats-json` appears whole or not at all: when it cannot be written
/// (no room: a file size limit of 0), the old file is left as it was.
#[cfg(unix)]
#[test]
fn output_stats_json_is_atomic() {
    let dir = TempDir::new().expect("temp dir");
    write(&dir, "in.txt", SAMPLE);
    write(&dir, "stats.json", b"old\n");
    let out = sh(
        &dir,
        "trap '' XFSZ; ulimit -f 0; exec \"$U\" dedup -q -o /dev/null --stats-json stats.json in.txt",
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot write stats.json"), "{stderr}");
    assert_eq!(
        std::fs::read(dir.path().join("stats.json")).expect("kept"),
        b"old\n"
    );
    assert_eq!(crate::common::listing(dir.path()), ["in.txt", "stats.json"]);
}

// ---------------------------------------------------------------------------
// Item 11: `-` is stdout.

#[test]
fn output_dash_is_stdout() {
    let dir = TempDir::new().expect("temp dir");
    let input = write(&dir, "in.txt", SAMPLE);
    urikey()
        .current_dir(dir.path())
        .args(["dedup", "-q", "-o", "-"])
        .arg(&input)
        .assert()
        .success()
        .stdout(SAMPLE_UNIQUE);
    urikey()
        .current_dir(dir.path())
        .args(["dedup", "-q", "-o", "out.txt", "--rejects", "-"])
        .arg(&input)
        .assert()
        .success()
        .stdout(sample_reject(&input));
    let json = urikey()
        .current_dir(dir.path())
        .args(["dedup", "-q", "-o", "out.txt", "--stats-json", "-"])
        .arg(&input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&json).expect("JSON on stdout");
    assert_eq!(json["unique"], 3);
    urikey()
        .current_dir(dir.path())
        .args(["normalize", "-q", "-o", "-"])
        .arg(&input)
        .assert()
        .success()
        .stdout(predicate::str::starts_with("http://a.example/x\n"));
    assert_eq!(
        crate::common::listing(dir.path()),
        ["in.txt", "out.txt"],
        "no file named -"
    );
    // Two outputs on stdout would interleave.
    urikey()
        .args(["dedup", "--rejects", "-"])
        .arg(&input)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot share stdout"));
    urikey()
        .args(["dedup", "-o", "-", "--stats-json", "-"])
        .arg(&input)
        .assert()
        .code(2);
}

// ---------------------------------------------------------------------------
// Item 12: a closed stderr.

/// Runs the binary with `args` and a stderr whose reading end is closed
/// before the process starts: every write to it fails (EPIPE).
fn run_with_closed_stderr(dir: &TempDir, args: &[&str]) -> std::process::Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    StdCommand::new(bin())
        .args(args)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stderr(Stdio::from(writer))
        .output()
        .expect("runs")
}

#[test]
fn output_closed_stderr_does_not_end_the_run() {
    let dir = TempDir::new().expect("temp dir");
    // Many invalid lines, so reports are written all along.
    let mut input = Vec::new();
    for i in 0..2000 {
        input.extend_from_slice(format!("http://h{}.example/\nbad line {i}\n", i % 100).as_bytes());
    }
    write(&dir, "in.txt", &input);
    let out = run_with_closed_stderr(
        &dir,
        &[
            "dedup",
            "--stats",
            "--progress",
            "--rejects",
            "rej.txt",
            "-o",
            "out.txt",
            "in.txt",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let kept = std::fs::read_to_string(dir.path().join("out.txt")).expect("output written");
    assert_eq!(kept.lines().count(), 100);
    let rejects = std::fs::read_to_string(dir.path().join("rej.txt")).expect("rejects");
    assert_eq!(rejects.lines().count(), 2000);

    let out = run_with_closed_stderr(&dir, &["normalize", "-o", "norm.txt", "in.txt"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let norm = std::fs::read_to_string(dir.path().join("norm.txt")).expect("output written");
    assert_eq!(norm.lines().count(), 4000);

    // An error still gives exit status 2, even when it cannot be told.
    let out = run_with_closed_stderr(&dir, &["dedup", "missing.txt"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

// ---------------------------------------------------------------------------
// Item 13: `--progress` in a log.

#[test]
fn output_progress_lines_when_stderr_is_not_a_terminal() {
    let dir = TempDir::new().expect("temp dir");
    let mut input = Vec::new();
    for i in 0..20_000 {
        input.extend_from_slice(format!("http://h{i}.example/p\n").as_bytes());
    }
    let input = write(&dir, "in.txt", &input);
    let out = urikey()
        .args([
            "dedup",
            "--progress",
            "--chunk-size",
            "4096",
            "--threads",
            "1",
        ])
        .args(["--progress-interval", "0", "-o"])
        .arg(dir.path().join("out.txt"))
        .arg(&input)
        .assert()
        .success()
        .get_output()
        .stderr
        .clone();
    let stderr = String::from_utf8(out).expect("utf-8");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(lines.len() > 2, "a line per report: {stderr}");
    for line in &lines {
        assert!(line.starts_with("urikey: progress: "), "{line}");
        assert!(line.contains(" URLs/s"), "{line}");
        assert!(!line.contains('\r') && !line.contains('\x1b'), "{line:?}");
    }
    let last = lines.last().expect("a last line");
    assert!(
        last.contains("(100%), 20000 lines") && last.ends_with("(done)"),
        "{last}"
    );
    // The default interval (5 s) prints only the last line of a short run.
    urikey()
        .args(["dedup", "--progress", "-o"])
        .arg(dir.path().join("out.txt"))
        .arg(&input)
        .assert()
        .success()
        .stderr(predicate::str::is_match("^urikey: progress: .*\\(done\\)\n$").expect("regex"));
    // Without --progress, a log gets nothing.
    urikey()
        .args(["dedup", "-o"])
        .arg(dir.path().join("out.txt"))
        .arg(&input)
        .assert()
        .success()
        .stderr("");
}

// ---------------------------------------------------------------------------
// Item 14: `--stats` wall time covers the whole run.

/// The output is a named pipe nobody reads for a while: opening it waits,
/// and that wait is part of the run the user sees. The reported wall time
/// must include it, and must not fall short of the process's own wall time
/// by more than its start and exit.
#[cfg(unix)]
#[test]
fn output_stats_wall_time_covers_the_whole_run() {
    let dir = TempDir::new().expect("temp dir");
    let input = write(&dir, "in.txt", SAMPLE);
    let fifo = dir.path().join("out.fifo");
    let made = StdCommand::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let stats = dir.path().join("stats.json");
    let started = Instant::now();
    let child = StdCommand::new(bin())
        .args(["dedup", "-q", "-o"])
        .arg(&fifo)
        .arg("--stats-json")
        .arg(&stats)
        .arg(&input)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    // The process exists once spawn returns; its clock starts a little
    // later (loading, scheduling), so the bound leaves 100 ms for that.
    std::thread::sleep(Duration::from_millis(600));
    let wait = Duration::from_millis(500);
    let mut text = String::new();
    std::fs::File::open(&fifo)
        .expect("fifo opens")
        .read_to_string(&mut text)
        .expect("fifo reads");
    let out = child.wait_with_output().expect("exits");
    let measured = started.elapsed().as_secs_f64();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(text, SAMPLE_UNIQUE);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&stats).expect("stats")).expect("JSON");
    let wall = json["wall_seconds"].as_f64().expect("a number");
    assert!(
        wall >= wait.as_secs_f64(),
        "wall {wall} s misses the wait for the output ({wait:?})"
    );
    assert!(
        wall <= measured,
        "wall {wall} s exceeds the measured {measured} s"
    );
}

// ---------------------------------------------------------------------------
// Item 15: `normalize` writes files, is quiet on demand, checks its inputs.

#[test]
fn output_normalize_file_quiet_and_capped_reports() {
    let dir = TempDir::new().expect("temp dir");
    let mut input = Vec::new();
    for i in 0..30 {
        input.extend_from_slice(format!("http://A.example/{i}\nbad {i}\n").as_bytes());
    }
    let input = write(&dir, "in.txt", &input);
    let out = dir.path().join("keys.txt");
    let rejects = dir.path().join("rej.txt");
    let assert = urikey()
        .args(["normalize", "-o"])
        .arg(&out)
        .arg("--rejects")
        .arg(&rejects)
        .arg(&input)
        .assert()
        .success()
        .stdout("");
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert_eq!(stderr.lines().count(), 21, "{stderr}");
    assert!(
        stderr.ends_with("urikey: 10 more invalid lines not shown\n"),
        "{stderr}"
    );
    let keys = std::fs::read_to_string(&out).expect("output");
    assert_eq!(keys.lines().count(), 60);
    assert!(keys.starts_with("http://a.example/0\n\nhttp://a.example/1\n"));
    assert_eq!(
        std::fs::read_to_string(&rejects)
            .expect("rejects")
            .lines()
            .count(),
        30
    );
    urikey()
        .args(["normalize", "-q"])
        .arg(&input)
        .assert()
        .success()
        .stderr("");
    urikey()
        .args(["normalize", "--quiet"])
        .arg(&input)
        .assert()
        .success()
        .stderr("");
    // Without --rejects, the count says how to keep them all.
    urikey()
        .arg("normalize")
        .arg(&input)
        .assert()
        .success()
        .stderr(predicate::str::ends_with(
            "urikey: 10 more invalid lines not shown (keep them all with --rejects FILE)\n",
        ));
}

#[test]
fn output_normalize_checks_inputs_before_writing() {
    let dir = TempDir::new().expect("temp dir");
    let input = write(&dir, "in.txt", b"http://a.example/\n");
    let missing = dir.path().join("missing.txt");
    urikey()
        .arg("normalize")
        .arg(&input)
        .arg(&missing)
        .assert()
        .code(2)
        .stdout("")
        .stderr(format!(
            "urikey: cannot open {}: No such file or directory (os error 2)\n",
            missing.display()
        ));
    urikey()
        .args(["normalize", "-o"])
        .arg(dir.path().join("out.txt"))
        .arg(&input)
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is a directory"));
    assert_eq!(crate::common::listing(dir.path()), ["in.txt"]);
    for cmd in ["parse", "resolve"] {
        let mut c = urikey();
        c.arg(cmd);
        if cmd == "resolve" {
            c.args(["--base", "http://a/"]);
        }
        c.arg(&input).arg(&missing).assert().code(2).stdout("");
    }
}

// ---------------------------------------------------------------------------
// Item 16: one line per duplicated key, messages, Ctrl-C.

#[test]
fn output_duplicates_first() {
    let input = b"http://a/1\nhttp://b/\nHTTP://A/1\nhttp://c/\nhttp://a:80/1\nhttp://b/\n";
    urikey()
        .args(["dedup", "--duplicates=first", "--emit", "original"])
        .write_stdin(&input[..])
        .assert()
        .success()
        .stdout("http://a/1\nhttp://b/\n");
    urikey()
        .args(["dedup", "--duplicates=first", "--count"])
        .write_stdin(&input[..])
        .assert()
        .success()
        .stdout("3\thttp://a/1\n2\thttp://b/\n");
    // Every repeat, as before, with or without `=all`.
    for flag in ["--duplicates", "--duplicates=all"] {
        urikey()
            .args(["dedup", flag, "--emit", "original"])
            .write_stdin(&input[..])
            .assert()
            .success()
            .stdout("HTTP://A/1\nhttp://a:80/1\nhttp://b/\n");
    }
    // `--duplicates FILE` still takes FILE as an input.
    let dir = TempDir::new().expect("temp dir");
    let path = write(&dir, "in.txt", input);
    urikey()
        .args(["dedup", "--duplicates"])
        .arg(&path)
        .assert()
        .success()
        .stdout("http://a/1\nhttp://a/1\nhttp://b/\n");
    urikey()
        .args(["dedup", "--duplicates=all", "--count"])
        .write_stdin(&input[..])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--duplicates=first"));
}

#[test]
fn output_field_zero_says_fields_count_from_one() {
    urikey()
        .args(["dedup", "--field", "0"])
        .write_stdin("x\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("fields count from 1"));
}

/// A write error names the path the user gave, never the temporary file.
#[cfg(unix)]
#[test]
fn output_write_errors_name_the_users_path() {
    let dir = TempDir::new().expect("temp dir");
    write(&dir, "in.txt", SAMPLE);
    for cmd in ["dedup", "normalize"] {
        let out = sh(
            &dir,
            &format!("trap '' XFSZ; ulimit -f 0; exec \"$U\" {cmd} -q -o out.txt in.txt"),
        );
        assert_eq!(out.status.code(), Some(2), "{cmd}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with("urikey: cannot write out.txt: "),
            "{cmd}: {stderr}"
        );
        assert!(!stderr.contains(".tmp"), "{cmd}: {stderr}");
        assert_eq!(crate::common::listing(dir.path()), ["in.txt"], "{cmd}");
    }
}

/// Ctrl-C while the run goes on (input keeps coming) and while it waits for
/// input: the run says it was interrupted, exits 130 and leaves no file.
#[cfg(unix)]
#[test]
fn output_ctrl_c_says_interrupted_and_cleans_up() {
    for (cmd, feeding) in [
        ("dedup", true),
        ("dedup", false),
        ("normalize", true),
        ("normalize", false),
    ] {
        let dir = TempDir::new().expect("temp dir");
        let out = dir.path().join("out.txt");
        let mut child = StdCommand::new(bin())
            .args([cmd, "-q", "-o"])
            .arg(&out)
            .args(if cmd == "dedup" {
                &["--chunk-size", "4096", "--threads", "1"][..]
            } else {
                &[][..]
            })
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawns");
        let mut stdin = child.stdin.take().expect("stdin");
        let feeder = std::thread::spawn(move || {
            let line = b"http://a.example/some/path\n".repeat(200);
            loop {
                if stdin.write_all(&line).is_err() || !feeding {
                    break;
                }
            }
            // Holding stdin open keeps the command waiting for input.
            std::thread::sleep(Duration::from_secs(5));
        });
        for _ in 0..500 {
            if !crate::common::listing(dir.path()).is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(
            !crate::common::listing(dir.path()).is_empty(),
            "the temporary file exists"
        );
        std::thread::sleep(Duration::from_millis(200));
        let status = StdCommand::new("kill")
            .arg("-INT")
            .arg(child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success());
        let started = Instant::now();
        let output = child.wait_with_output().expect("exits");
        assert!(started.elapsed() < Duration::from_secs(4), "{cmd} stops");
        assert_eq!(output.status.code(), Some(130), "{cmd} feeding={feeding}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.ends_with("urikey: interrupted\n"),
            "{cmd}: {stderr:?}"
        );
        assert!(!out.exists(), "{cmd}");
        assert!(
            crate::common::listing(dir.path()).is_empty(),
            "{cmd}: {:?}",
            crate::common::listing(dir.path())
        );
        drop(feeder);
    }
}

/// A named pipe as the input, whose writer writes it all and closes at
/// once: the run reads every line. (Checking the input by opening it, and
/// closing it again, once lost what the writer had written, and left the
/// run waiting for a writer that had gone.)
#[cfg(unix)]
#[test]
fn output_named_pipe_input_is_read_whole() {
    let dir = TempDir::new().expect("temp dir");
    let fifo = dir.path().join("in.fifo");
    let made = StdCommand::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let child = StdCommand::new(bin())
        .args(["dedup", "-q"])
        .arg(&fifo)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    // SAMPLE fits in a pipe's buffer: the write returns before any read.
    let mut w = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .expect("fifo opens");
    w.write_all(SAMPLE).expect("fifo takes the input");
    drop(w);
    let started = Instant::now();
    let pid = child.id();
    let waiter = std::thread::spawn(move || child.wait_with_output().expect("exits"));
    while !waiter.is_finished() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    if !waiter.is_finished() {
        let _ = StdCommand::new("kill").arg(pid.to_string()).status();
        panic!("the run still waits on its input after 20 s");
    }
    let out = waiter.join().expect("waiter");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), SAMPLE_UNIQUE);
}
