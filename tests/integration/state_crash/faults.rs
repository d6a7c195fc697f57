//! Failing syncs: each `fsync` and each `fdatasync` of a real
//! `dedup --state -o FILE` run fails in turn with EIO (`strace`'s fault
//! injection), and what the run says must be what the store is: exit 0
//! only with the new commit and its whole output; "not added" only when
//! the store is at its old commit; a store at its new commit after a
//! failed run says the keys were added.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use tempfile::TempDir;
use urikey::engine::store::verify;

use super::{bin, lines, store_keys, strace_or_skip};

/// Copies the files of `from` into `to` (one level: a store).
fn copy_store(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("listing") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
    }
}

/// The syncs of the run in `root`, in order (`fsync` or `fdatasync`),
/// each with whether it comes before the commit is durable (up to the
/// directory sync after the manifest's rename): a failure there must fail
/// the run. A merged run's sync is not needed (the commit is then made
/// unmerged).
fn syncs(root: &Path, input: &Path) -> Vec<(&'static str, bool)> {
    let log = root.join("count.log");
    let status = Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-y",
            "-e",
            "trace=fsync,fdatasync,rename,renameat,renameat2",
        ])
        .arg("-o")
        .arg(&log)
        .arg("--")
        .arg(bin())
        .args([
            "dedup",
            "-q",
            "--no-progress",
            "--state",
            "s",
            "-o",
            "new.txt",
        ])
        .arg(input)
        .current_dir(root)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("strace runs");
    assert!(status.success());
    let text = std::fs::read_to_string(&log).expect("the log");
    std::fs::remove_file(&log).expect("rm");
    let mut out = Vec::new();
    let mut renamed = false;
    let mut durable_at = None;
    for l in text.lines().filter(|l| l.contains("= 0")) {
        if l.contains("MANIFEST\"") && l.contains("rename") {
            renamed = true;
        } else if l.contains("fsync(") || l.contains("fdatasync(") {
            let merged = l.contains("-1.ukr>");
            let name = if l.contains("fdatasync(") {
                "fdatasync"
            } else {
                "fsync"
            };
            out.push((name, merged));
            if renamed && durable_at.is_none() {
                durable_at = Some(out.len());
            }
        }
    }
    let durable_at = durable_at.expect("a commit");
    out.into_iter()
        .enumerate()
        .map(|(i, (s, merged))| (s, i < durable_at && !merged))
        .collect()
}

#[test]
fn state_crash_every_failing_sync_is_reported_as_what_it_did() {
    if !strace_or_skip("state_crash_every_failing_sync_is_reported_as_what_it_did") {
        return;
    }
    let temp = TempDir::new().expect("temp dir");
    let template = temp.path().join("template");
    std::fs::create_dir(&template).expect("mkdir");
    let before = temp.path().join("before");
    std::fs::write(&before, lines("f", 300).join("\n") + "\n").expect("write");
    let out = Command::new(bin())
        .args(["dedup", "-q", "--state"])
        .arg(template.join("s"))
        .arg(&before)
        .output()
        .expect("runs");
    assert!(out.status.success());
    let old = store_keys(&template.join("s")).expect("a store");
    let input = temp.path().join("input");
    let new_lines = lines("g", 200);
    std::fs::write(&input, new_lines.join("\n") + "\n").expect("write");
    let want_output = new_lines.join("\n") + "\n";
    let mut new: HashSet<u128> = old.clone();
    new.extend(super::keys_of(&new_lines));
    let fresh = |name: &str| {
        let root = temp.path().join(name);
        copy_store(&template.join("s"), &root.join("s"));
        root
    };
    let mut failures = Vec::new();
    let mut tried = 0;
    let order = syncs(&fresh("count"), &input);
    for syscall in ["fsync", "fdatasync"] {
        let of_kind: Vec<bool> = order
            .iter()
            .filter(|(s, _)| *s == syscall)
            .map(|&(_, before)| before)
            .collect();
        assert!(!of_kind.is_empty(), "the run calls {syscall}");
        for (when, must_fail) in (1..).zip(of_kind) {
            tried += 1;
            let root = fresh(&format!("{syscall}-{when}"));
            let out = Command::new("strace")
                .args(["-f", "-qq", "-o", "/dev/null", "-e"])
                .arg(format!("trace={syscall}"))
                .arg("-e")
                .arg(format!("inject={syscall}:error=EIO:when={when}"))
                .arg("--")
                .arg(bin())
                .args([
                    "dedup",
                    "-q",
                    "--no-progress",
                    "--state",
                    "s",
                    "-o",
                    "new.txt",
                ])
                .arg(&input)
                .current_dir(&root)
                .output()
                .expect("strace runs");
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            let what = format!(
                "{syscall} #{when} failing (exit {:?}: {err})",
                out.status.code()
            );
            let dir = root.join("s");
            let keys = match store_keys(&dir) {
                Ok(k) => k,
                Err(e) => {
                    failures.push(format!("{what}: {e}"));
                    continue;
                }
            };
            if !verify(&dir).is_ok() {
                failures.push(format!("{what}: verify finds problems"));
            }
            let output = std::fs::read_to_string(root.join("new.txt")).ok();
            let at_new = keys == new;
            if !at_new && keys != old {
                failures.push(format!("{what}: a mix of commits"));
            }
            if at_new && output.as_deref() != Some(want_output.as_str()) {
                failures.push(format!("{what}: committed without its whole output"));
            }
            match (out.status.success(), at_new) {
                (true, _) if must_fail => {
                    failures.push(format!("{what}: exit 0, though the sync was needed"));
                }
                (true, false) => failures.push(format!("{what}: exit 0 without the commit")),
                (false, true) if !err.contains("were added") => {
                    failures.push(format!("{what}: the store is at the new commit"));
                }
                (false, false) if err.contains("were added") => {
                    failures.push(format!(
                        "{what}: says added, the store is at the old commit"
                    ));
                }
                _ => {}
            }
            if !out.status.success() && !err.contains("urikey:") {
                failures.push(format!("{what}: no message"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {tried} injected failures misreported:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
