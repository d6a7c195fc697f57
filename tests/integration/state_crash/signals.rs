//! SIGTERM to a real `dedup --state` process, before and inside its commit
//! (each commit step sleeps through the test hook): the exit status says
//! what the store is. 130 "interrupted": the store is at its old commit;
//! 0: at the new one, with the whole output.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;
use urikey::engine::store::PAUSE_ENV;

use super::{bin, keys_of, lines, store_keys};

fn sigterm(pid: u32) {
    let ok = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill runs")
        .success();
    assert!(ok, "kill -TERM {pid}");
}

/// Waits until `dir` holds a file named `name`.
fn wait_for(dir: &Path, name: &str) {
    let until = Instant::now() + Duration::from_secs(30);
    while !dir.join(name).exists() {
        assert!(Instant::now() < until, "{name} never appeared");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn state_crash_sigterm_inside_a_commit_and_before_it() {
    let temp = TempDir::new().expect("temp dir");
    let store = temp.path().join("s");
    let first = lines("t", 100);
    let mut make = Command::new(bin())
        .args(["dedup", "-q", "--state"])
        .arg(&store)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("spawns");
    make.stdin
        .take()
        .expect("stdin")
        .write_all((first.join("\n") + "\n").as_bytes())
        .expect("write");
    assert!(make.wait().expect("waits").success());
    let old = store_keys(&store).expect("a store");
    let second = lines("u", 100);
    let mut new: HashSet<u128> = old.clone();
    new.extend(keys_of(&second));

    // Inside the commit: the signal comes once the new run is written, and
    // every step of the commit then takes 300 ms, past the handler's grace
    // of 1.5 s.
    let out = temp.path().join("new.txt");
    let mut child = Command::new(bin())
        .args(["dedup", "-q", "--state"])
        .arg(&store)
        .arg("-o")
        .arg(&out)
        .env(PAUSE_ENV, "300")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all((second.join("\n") + "\n").as_bytes())
        .expect("write");
    wait_for(&store, "run-00000002-0.ukr");
    sigterm(child.id());
    let done = child.wait_with_output().expect("waits");
    let err = String::from_utf8_lossy(&done.stderr);
    let keys = store_keys(&store).expect("the store opens");
    match done.status.code() {
        Some(0) => {
            assert_eq!(keys, new, "exit 0 without the commit");
            assert_eq!(
                std::fs::read_to_string(&out).expect("the output"),
                second.join("\n") + "\n"
            );
        }
        code => panic!(
            "a commit under way ended with {code:?} ({err}), the store at {} keys",
            keys.len()
        ),
    }

    // Before the commit (the input never ends): 130, the store unchanged.
    let mut child = Command::new(bin())
        .args(["dedup", "-q", "--state"])
        .arg(&store)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(b"http://v.example/\n").expect("write");
    wait_for(&store, "LOCK");
    std::thread::sleep(Duration::from_millis(200));
    sigterm(child.id());
    let done = child.wait_with_output().expect("waits");
    drop(stdin);
    assert_eq!(done.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&done.stderr).contains("interrupted"));
    assert_eq!(store_keys(&store).expect("the store opens"), new);
}
