//! Power loss inside real commits: the file-system operations of a real
//! `urikey dedup --state` run are recorded with `strace` (`trace.rs`), every
//! state a power loss could leave is built from them (`states.rs`), and
//! each is checked: the store opens at its old or its new commit, never a
//! mix; `verify` finds it sound; the next writer takes it over; when the
//! new keys are there, so is the output that announced them; and once the
//! run has returned, the new commit and its output survive whatever was
//! not synced.
//!
//! `strace` is the Debian package (`.ci/run` installs it); outside CI a
//! machine without it skips these tests, saying so.

mod faults;
mod signals;
mod states;
mod trace;

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use tempfile::TempDir;
use urikey::engine::store::{verify, Access, SeenStore};
use urikey::uri::key::{fingerprint, KeyConfig};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_urikey")
}

/// True when the tests can run; false (with the reason on stderr) when
/// they skip. In CI a missing `strace` fails them.
pub fn strace_or_skip(test: &str) -> bool {
    if trace::strace_available() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{test}: strace is missing (.ci/run installs the Debian package)"
    );
    super::common::skip_notice(&format!(
        "{test}: no strace on this machine (apt-get install strace)"
    ));
    false
}

/// Where a run's output goes.
#[derive(Clone, Copy)]
enum Output {
    /// `-o FILE`.
    File(&'static str),
    /// Stdout into FILE, opened before the run (a shell's `> FILE`).
    Redirect(&'static str),
}

impl Output {
    fn path(self) -> &'static str {
        match self {
            Output::File(p) | Output::Redirect(p) => p,
        }
    }
}

/// A traced run: the store (relative to the run's working directory, the
/// traced root), its output, the lines it reads, and the lines committed
/// before it (the store is made by the traced run when there are none).
struct Scenario {
    store: &'static str,
    output: Output,
    input: Vec<String>,
    before: Vec<Vec<String>>,
}

fn lines(prefix: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("http://{prefix}.example/{i}"))
        .collect()
}

fn keys_of(lines: &[String]) -> HashSet<u128> {
    lines.iter().map(|l| fingerprint(l.as_bytes())).collect()
}

fn store_keys(dir: &Path) -> Result<HashSet<u128>, String> {
    let store = SeenStore::open_for(dir, &KeyConfig::default(), Access::ReadOnly)
        .map_err(|e| format!("the store does not open: {e}"))?;
    let mut keys = HashSet::new();
    store
        .for_each(Path::new("-"), |fp| {
            keys.insert(fp);
            Ok(())
        })
        .map_err(|e| format!("the store cannot be read: {e}"))?;
    Ok(keys)
}

/// Which commit a crash state is at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    Old,
    New,
}

/// What one run is checked against.
struct Expected {
    /// The keys before the run (`None`: there was no store).
    old: Option<HashSet<u128>>,
    new: HashSet<u128>,
    output: Vec<u8>,
}

/// Checks the crash state in `root`.
fn check(root: &Path, sc: &Scenario, want: &Expected) -> Result<At, String> {
    let dir = root.join(sc.store);
    if !dir.join("MANIFEST").exists() {
        if want.old.is_some() {
            return Err("the store lost its manifest".to_owned());
        }
        // Never made: the next writer makes it.
        let s = SeenStore::open_or_create(&dir, &KeyConfig::default())
            .map_err(|e| format!("a store being made cannot be made again: {e}"))?;
        if !s.is_empty() {
            return Err("a store being made has keys".to_owned());
        }
        return Ok(At::Old);
    }
    let keys = store_keys(&dir)?;
    let report = verify(&dir);
    if !report.is_ok() {
        return Err(format!("verify: {:?}", report.problems));
    }
    let old = want.old.clone().unwrap_or_default();
    let at = if keys == want.new {
        At::New
    } else if keys == old {
        At::Old
    } else {
        return Err(format!(
            "a mix: {} keys, neither the old {} nor the new {}",
            keys.len(),
            old.len(),
            want.new.len()
        ));
    };
    if at == At::New {
        let out = std::fs::read(root.join(sc.output.path())).unwrap_or_default();
        if out != want.output {
            return Err(format!(
                "the keys are committed but the output that announced them is not on disk \
                 ({} of {} bytes)",
                out.len(),
                want.output.len()
            ));
        }
    }
    let w = SeenStore::open_for(&dir, &KeyConfig::default(), Access::Write)
        .map_err(|e| format!("the next writer cannot open it: {e}"))?;
    if w.len() != keys.len() as u64 {
        return Err("the next writer sees other keys".to_owned());
    }
    Ok(at)
}

/// Runs `sc` under strace, then checks every crash state of its trace.
fn replay(test: &str, sc: &Scenario) {
    let temp = TempDir::new().expect("temp dir");
    let root = temp.path().join("root");
    std::fs::create_dir(&root).expect("mkdir");
    let root = root.canonicalize().expect("canonical");
    let spill = temp.path().join("spill");
    std::fs::create_dir(&spill).expect("mkdir");
    let run = |input: &[String], output: Option<&str>, stdout: Option<std::fs::File>| {
        let file = temp.path().join("input");
        std::fs::write(
            &file,
            input.iter().map(|l| format!("{l}\n")).collect::<String>(),
        )
        .expect("write");
        let mut cmd = Command::new(bin());
        cmd.args(["dedup", "-q", "--no-progress", "--state", sc.store])
            .current_dir(&root)
            .env("TMPDIR", &spill);
        if let Some(o) = output {
            cmd.args(["-o", o]);
        }
        cmd.arg(&file);
        (cmd, stdout)
    };
    let mut old: Option<HashSet<u128>> = None;
    for (i, earlier) in sc.before.iter().enumerate() {
        let (mut cmd, _) = run(earlier, None, None);
        let out = cmd.output().expect("runs");
        assert!(out.status.success(), "earlier run {i} failed");
        old.get_or_insert_with(HashSet::new)
            .extend(keys_of(earlier));
    }
    if let Output::Redirect(p) = sc.output {
        std::fs::write(root.join(p), b"").expect("write");
    }
    let base = trace::snapshot(&root);
    let log = temp.path().join("trace.log");
    let stdout = match sc.output {
        Output::Redirect(p) => Some(
            std::fs::OpenOptions::new()
                .write(true)
                .open(root.join(p))
                .expect("open"),
        ),
        Output::File(_) => None,
    };
    let output = match sc.output {
        Output::File(p) => Some(p),
        Output::Redirect(_) => None,
    };
    let (mut cmd, stdout) = run(&sc.input, output, stdout);
    let (status, stderr) = trace::record(&mut cmd, &log, stdout);
    assert!(
        status.success(),
        "{test}: the traced run failed: {}",
        String::from_utf8_lossy(&stderr)
    );
    let want = Expected {
        new: store_keys(&root.join(sc.store)).expect("the run's store"),
        old,
        output: std::fs::read(root.join(sc.output.path())).expect("the output"),
    };
    let mut all = want.old.clone().unwrap_or_default();
    all.extend(keys_of(&sc.input));
    assert_eq!(want.new, all, "{test}: the run committed other keys");
    let text = std::fs::read_to_string(&log).expect("the trace");
    let trace = trace::parse(&text, &root, &root, base);
    let crashes = states::crash_states(&trace);
    let place = temp.path().join("state");
    let (mut at_old, mut at_new, mut failures) = (0, 0, Vec::new());
    for crash in &crashes {
        let _ = std::fs::remove_dir_all(&place);
        std::fs::create_dir(&place).expect("mkdir");
        states::materialize(&trace, crash, &place);
        match check(&place, sc, &want) {
            Ok(At::Old) => at_old += 1,
            Ok(At::New) => at_new += 1,
            Err(e) => failures.push(format!("{}: {e}", crash.what)),
        }
    }
    // Once the run returned, only what it synced counts: it must be the
    // new commit.
    let last = crashes
        .iter()
        .find(|c| c.prefix == trace.events.len() && c.what.contains("only what was synced"))
        .expect("the final state");
    std::fs::remove_dir_all(&place).expect("rm");
    std::fs::create_dir(&place).expect("mkdir");
    states::materialize(&trace, last, &place);
    match check(&place, sc, &want) {
        Ok(At::New) => {}
        Ok(At::Old) => failures.push(
            "after the run returned, a power loss leaves the store without its new commit"
                .to_owned(),
        ),
        Err(e) => failures.push(format!("after the run returned: {e}")),
    }
    eprintln!(
        "{test}: {} events, {} crash states: {at_old} at the old commit, {at_new} at the new",
        trace.events.len(),
        crashes.len()
    );
    assert!(
        failures.is_empty(),
        "{test}: {} of {} crash states fail; the first ones:\n{}",
        failures.len(),
        crashes.len(),
        failures
            .iter()
            .take(8)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(at_old > 0 && at_new > 0, "{test}: the states missed a side");
}

/// `--state s` (a bare name) made by the run, stdout into a file.
#[test]
fn state_crash_replay_making_a_store_by_a_bare_name() {
    if !strace_or_skip("state_crash_replay_making_a_store_by_a_bare_name") {
        return;
    }
    replay(
        "bare name",
        &Scenario {
            store: "s",
            output: Output::Redirect("new.txt"),
            input: lines("a", 300),
            before: Vec::new(),
        },
    );
}

/// `--state a/b/s`: three new directories, `-o FILE`.
#[test]
fn state_crash_replay_making_nested_directories() {
    if !strace_or_skip("state_crash_replay_making_nested_directories") {
        return;
    }
    replay(
        "nested",
        &Scenario {
            store: "a/b/s",
            output: Output::File("new.txt"),
            input: lines("b", 300),
            before: Vec::new(),
        },
    );
}

/// A commit to a store of two runs that merges them and removes the old
/// ones, `-o FILE` and stdout into a file.
#[test]
fn state_crash_replay_commit_that_merges_runs() {
    if !strace_or_skip("state_crash_replay_commit_that_merges_runs") {
        return;
    }
    for output in [Output::File("new.txt"), Output::Redirect("new.txt")] {
        replay(
            "merge",
            &Scenario {
                store: "s",
                output,
                input: lines("c", 400),
                before: vec![lines("d", 500), lines("e", 200)],
            },
        );
    }
}

/// A writer killed while making a store leaves `LOCK` (and perhaps
/// `MANIFEST.tmp`) without `MANIFEST`: `state init` and `dedup --state`
/// make the store there, as for an empty directory.
#[test]
fn state_crash_lock_without_manifest_is_made_again() {
    let temp = TempDir::new().expect("temp dir");
    for (i, make) in [["state", "init"], ["dedup", "--state"]].iter().enumerate() {
        let dir = temp.path().join(format!("s{i}"));
        std::fs::create_dir(&dir).expect("mkdir");
        std::fs::write(dir.join("LOCK"), b"pid 1 on host h since 0\n").expect("write");
        std::fs::write(dir.join("MANIFEST.tmp"), b"urikey-seen").expect("write");
        let out = Command::new(bin())
            .args(make)
            .arg(&dir)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("runs");
        assert!(
            out.status.success(),
            "{make:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(verify(&dir).is_ok());
        assert_eq!(store_keys(&dir).expect("a store").len(), 0);
    }
}
