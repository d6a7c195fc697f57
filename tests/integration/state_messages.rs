//! What a new user meets with a seen-store: a closed pipe, a path that is
//! a file, an empty or manifest-less directory, a nearly full disk, a
//! damaged manifest, the messages and their exit codes.

use std::path::Path;
use std::process::Command as StdCommand;

use tempfile::TempDir;
use urikey::engine::store::{verify, Access, SeenStore};
use urikey::uri::key::KeyConfig;

use super::common::{listing, urikey};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_urikey")
}

fn lines(n: usize, host: &str) -> String {
    (0..n)
        .map(|i| format!("http://{host}.example/{i}\n"))
        .collect()
}

fn store_len(dir: &Path) -> u64 {
    SeenStore::open_for(dir, &KeyConfig::default(), Access::ReadOnly)
        .expect("the store opens")
        .len()
}

/// `dedup --state S | head`: the run adds nothing, so it must not exit 0
/// quietly; without a store, or read-only, a closed pipe is success.
#[test]
fn state_closed_pipe_is_not_success() {
    let dir = TempDir::new().expect("temp dir");
    let input = dir.path().join("in");
    std::fs::write(&input, lines(50_000, "p")).expect("write");
    let state = dir.path().join("s");
    let run = |opts: &str| {
        StdCommand::new("bash")
            .arg("-c")
            .arg(format!(
                "\"$0\" dedup -q {opts} \"$1\" | head -1 > /dev/null; echo \"${{PIPESTATUS[0]}}\""
            ))
            .arg(bin())
            .arg(&input)
            .output()
            .expect("bash runs")
    };
    let out = run(&format!("--state '{}'", state.display()));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2", "{err}");
    assert!(
        err.contains("nothing was added") && err.contains(&state.display().to_string()),
        "{err}"
    );
    assert_eq!(store_len(&state), 0);
    let out = run(&format!("--state-readonly '{}'", state.display()));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0");
    let out = run("");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0");
}

/// An OS error is said once, and a path that is a file is called a file,
/// by `dedup`, `info` and `verify` alike (exit 2: no store; exit 1 is
/// `verify`'s damage); a store without its manifest is damaged.
#[test]
fn state_not_a_store_messages_and_exit_codes() {
    let dir = TempDir::new().expect("temp dir");
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").expect("write");
    let out = urikey()
        .args(["dedup", "--state"])
        .arg(file.join("s"))
        .write_stdin("http://a.example/\n")
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.matches("os error 20").count(), 1, "{err}");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    for (place, words) in [(&file, "is a file"), (&empty, "is empty")] {
        for cmd in [
            &["state", "info"][..],
            &["state", "verify"],
            &["state", "export"],
        ] {
            let out = urikey().args(cmd).arg(place).output().expect("runs");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{cmd:?} {words}: {err}");
            assert!(err.contains(words), "{cmd:?}: {err}");
            // The command line says which command makes a store (the
            // library's message names none).
            if words == "is empty" {
                assert!(err.contains("`urikey state init "), "{cmd:?}: {err}");
            }
        }
    }
    // A store that lost its manifest: damaged, with the way out; `init`
    // refuses it (it is not empty).
    let s = dir.path().join("s");
    urikey()
        .args(["dedup", "-q", "--state"])
        .arg(&s)
        .write_stdin("http://a.example/\n")
        .assert()
        .success();
    std::fs::remove_file(s.join("MANIFEST")).expect("rm");
    let out = urikey()
        .args(["state", "verify"])
        .arg(&s)
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("damaged") && err.contains("rebuild"), "{err}");
    assert!(err.contains("`urikey state init NEW`"), "{err}");
    let out = urikey()
        .args(["state", "info"])
        .arg(&s)
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("damaged") && !err.contains("makes one"),
        "{err}"
    );
    // A manifest that is not text is damaged too.
    std::fs::write(s.join("MANIFEST"), b"urikey-seen-store\n\xff\xfe\n").expect("write");
    let out = urikey()
        .args(["state", "info"])
        .arg(&s)
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("damaged") && err.contains("UTF-8"), "{err}");
}

/// A nearly full disk (`ulimit -f`, the stand-in for ENOSPC that needs no
/// root): the new run fits, the merged run it would make does not. The
/// commit is made unmerged, and no temporary file is left behind by a run
/// whose additions could not be spilled.
#[test]
fn state_nearly_full_disk_commits_unmerged_and_leaves_no_spill() {
    let dir = TempDir::new().expect("temp dir");
    let state = dir.path().join("s");
    let first = dir.path().join("first");
    std::fs::write(&first, lines(20_000, "q")).expect("write");
    urikey()
        .args(["dedup", "-q", "--state"])
        .arg(&state)
        .arg(&first)
        .assert()
        .success();
    let second = dir.path().join("second");
    std::fs::write(&second, lines(15_000, "r")).expect("write");
    // The run file of 15,000 keys is about 230 KB, the merged one 530 KB.
    let limited = |kib: u32, extra: &str, input: &Path| {
        StdCommand::new("bash")
            .arg("-c")
            .arg(format!(
                "trap '' XFSZ; ulimit -f {kib}; exec \"$0\" dedup -q {extra} --state \"$1\" \"$2\" > /dev/null"
            ))
            .arg(bin())
            .arg(&state)
            .arg(input)
            .output()
            .expect("bash runs")
    };
    let out = limited(400, "", &second);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(store_len(&state), 35_000);
    assert!(verify(&state).is_ok());
    let runs = listing(&state)
        .iter()
        .filter(|n| n.ends_with(".ukr"))
        .count();
    assert_eq!(runs, 2, "{:?}", listing(&state));
    // Additions spilled in 64 KiB files, past a 32 KiB limit: the run
    // fails and takes its temporary files with it.
    let third = dir.path().join("third");
    std::fs::write(&third, lines(10_000, "t")).expect("write");
    let out = limited(32, "--state-buffer 0", &third);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !listing(&state).iter().any(|n| n.starts_with("tmp-")),
        "{:?}",
        listing(&state)
    );
    assert_eq!(store_len(&state), 35_000);
}

/// The words of the summaries: plurals, nothing to merge, the lock's
/// holder with a date.
#[test]
fn state_summaries_read_well() {
    let dir = TempDir::new().expect("temp dir");
    let s = dir.path().join("s");
    urikey()
        .args(["dedup", "-q", "--state"])
        .arg(&s)
        .write_stdin("http://a.example/\n")
        .assert()
        .success();
    let out = urikey()
        .args(["state", "verify"])
        .arg(&s)
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("1 key in 1 run,"), "{err}");
    let out = urikey()
        .args(["state", "compact"])
        .arg(&s)
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing to merge"), "{err}");
    let lock = std::fs::read_to_string(s.join("LOCK")).expect("read");
    assert!(
        lock.contains(" UTC") && !lock.contains("unix time"),
        "{lock}"
    );
}

/// A usage error reads `urikey: <message>`, as every other error.
#[test]
fn state_usage_errors_read_like_every_other_error() {
    let out = urikey()
        .args(["dedup", "--state", "s", "--no-such-option"])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("urikey: unexpected argument"), "{err}");
}
