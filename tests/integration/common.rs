//! Shared helpers for the integration tests: the conformance vectors (an
//! unchanged copy in `tests/conformance/`), the known-deviations list, and
//! running the `urikey` binary.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::PathBuf;
use tempfile::TempDir;

/// Where the conformance vectors are looked for: `$URIKEY_CONFORMANCE_DIR`,
/// or the copy in `tests/conformance/`.
pub fn conformance_path() -> PathBuf {
    std::env::var_os("URIKEY_CONFORMANCE_DIR").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests")
                .join("conformance")
        },
        PathBuf::from,
    )
}

/// Says that a test skipped, and why, where `cargo test` shows it: straight
/// to stderr, past the test harness's capture (which keeps `eprintln!` of
/// a passing test to itself, so a skip would read as a plain `ok`).
pub fn skip_notice(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(format!("SKIPPED: {text}\n").as_bytes());
}

/// The conformance directory. `None` (with a note on stderr) when it is
/// missing outside CI, so each conformance test returns early; a panic when
/// it is missing in CI. A skipped run still shows in the test summary:
/// `conformance_vectors_present` (tests/conformance.rs) fails unless
/// `URIKEY_ALLOW_MISSING_CONFORMANCE=1` says the skip is wanted.
pub fn conformance_dir() -> Option<PathBuf> {
    let dir = conformance_path();
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "conformance directory {} is missing (required when CI is set)",
            dir.display()
        );
    }
    skip_notice(&format!(
        "conformance directory {} not found; the test checked nothing",
        dir.display()
    ));
    None
}

/// Reads one JSON Lines file of the conformance directory.
pub fn load(name: &str) -> Option<Vec<serde_json::Value>> {
    let path = conformance_dir()?.join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let cases: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}: bad JSON line {l}: {e}"))
        })
        .collect();
    assert!(!cases.is_empty(), "{name} has no cases");
    Some(cases)
}

/// A string field of a case, `None` for JSON null or a missing key.
pub fn field<'a>(case: &'a serde_json::Value, key: &str) -> Option<&'a str> {
    case.get(key).and_then(serde_json::Value::as_str)
}

/// `tests/data/known-deviations.txt`: lines `file<TAB>case<TAB>reason`,
/// where `case` is the input (or `base<SPACE>reference` for resolution).
pub struct KnownDeviations {
    file: &'static str,
    cases: BTreeSet<String>,
}

impl KnownDeviations {
    /// The deviations listed for conformance file `file`.
    pub fn for_file(file: &'static str) -> Self {
        let text = include_str!("../data/known-deviations.txt");
        let cases = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|l| {
                let mut cols = l.splitn(3, '\t');
                let (f, case) = (cols.next()?, cols.next()?);
                (f == file).then(|| case.to_owned())
            })
            .collect();
        Self { file, cases }
    }

    /// Checks one outcome: a listed case must fail, any other must pass.
    /// Returns a failure description, or `None` when the outcome is expected.
    pub fn check(
        &self,
        case: &str,
        passed: bool,
        detail: impl FnOnce() -> String,
    ) -> Option<String> {
        match (self.cases.contains(case), passed) {
            (false, true) | (true, false) => None,
            (false, false) => Some(format!("{}: {case:?}: {}", self.file, detail())),
            (true, true) => Some(format!(
                "{}: {case:?} is listed in known-deviations.txt but now passes: remove it",
                self.file
            )),
        }
    }
}

/// Panics with every failure, one per line, if there are any.
pub fn assert_no_failures(what: &str, total: usize, failures: &[String]) {
    eprintln!(
        "{what}: {} of {total} cases as expected",
        total - failures.len()
    );
    assert!(
        failures.is_empty(),
        "{what}: {} unexpected results:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Cases per property test: `$PROPTEST_CASES` when set (CI raises it),
/// else `default`.
pub fn proptest_cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A temporary directory for a property test that creates and deletes
/// many files: on tmpfs where the machine has one at `/dev/shm`, else in
/// the usual temporary directory. On ext4, creating a file soon after many
/// were deleted makes the kernel look through the recently deleted inodes
/// (`recently_deleted`): with every temporary file on tmpfs, these tests
/// took 33 s instead of 179 s (2 cores), nearly all of it in the spill and
/// store property tests. What they check does not depend on the file
/// system; the crash tests stay on the usual one.
pub fn churn_dir() -> TempDir {
    tempfile::Builder::new()
        .prefix("urikey-test-")
        .tempdir_in("/dev/shm")
        .or_else(|_| TempDir::new())
        .expect("temp dir")
}

/// Files in `dir`, sorted, as names.
pub fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("readable dir")
        .map(|e| {
            e.expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    v.sort();
    v
}

/// The `urikey` binary of this build, to run as a user would.
#[cfg(feature = "cli")]
pub fn urikey() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("urikey").expect("the binary is built")
}

/// Writes `bytes` to `name` in `dir` and returns its path.
#[cfg(feature = "cli")]
pub fn write(dir: &TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("temp files can be written");
    path
}

/// The standard output of `cmd`, which must succeed.
#[cfg(feature = "cli")]
pub fn stdout_of(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.output().expect("the binary runs");
    assert!(
        out.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// `bytes` gzip-compressed.
#[cfg(feature = "engine")]
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut enc, bytes).expect("in-memory write");
    enc.finish().expect("in-memory write")
}

/// Each of `parts` gzip-compressed as a member of its own, one after
/// another (as Common Crawl's and `bgzip`'s files are).
#[cfg(feature = "engine")]
pub fn gzip_members(parts: &[&[u8]]) -> Vec<u8> {
    parts.iter().flat_map(|p| gzip(p)).collect()
}

#[cfg(feature = "engine")]
/// Runs the engine on `input` (streamed or in memory) and returns the
/// output, or the error.
pub fn run_engine(
    config: &urikey::engine::Config,
    input: &[u8],
    stream: bool,
) -> Result<(Vec<u8>, urikey::engine::Stats), urikey::engine::Error> {
    let source = if stream {
        urikey::engine::Input::Reader {
            name: "r".into(),
            reader: Box::new(std::io::Cursor::new(input.to_vec())),
        }
    } else {
        urikey::engine::Input::Bytes {
            name: "b".into(),
            bytes: std::sync::Arc::from(input),
        }
    };
    let mut got = Vec::new();
    let stats = urikey::engine::run(
        config,
        vec![source],
        &mut got,
        &mut |_: &urikey::engine::InvalidLine<'_>| {},
    )?;
    Ok((got, stats))
}
