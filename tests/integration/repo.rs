//! The repository's own rules, so that its docs cannot drift from it: every
//! repository path the docs name exists, the README stays short, the
//! committed benchmark results stay few, and no hand-written source file
//! grows past 1,000 lines.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("cannot read {rel}: {e}"))
}

/// The files under `dir` (relative to the root), recursively, sorted.
fn files_under(dir: &str) -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(&root().join(dir), &mut found);
    let mut out: Vec<String> = found
        .iter()
        .filter_map(|p| p.strip_prefix(root()).ok())
        .map(|p| p.to_string_lossy().replace('\\', "/"))
        .filter(|p| !ignored(p))
        .collect();
    out.sort();
    out
}

/// The places `.gitignore` keeps out of the repository by their path from the
/// root (`/target`, `/datasets/generated/`): tools write there, so a doc may
/// name them although a clean clone has none.
fn ignored_places() -> Vec<String> {
    read(".gitignore")
        .lines()
        .filter_map(|l| l.trim().strip_prefix('/'))
        .map(|l| l.trim_end_matches('/').to_string())
        .collect()
}

fn ignored(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name == "__pycache__"
        || rel.contains("/__pycache__/")
        || rel.contains("/.mypy_cache/")
        || rel.contains("/.ruff_cache/")
        || ignored_places()
            .iter()
            .any(|p| rel == p || rel.starts_with(&format!("{p}/")))
}

// ---------------------------------------------------------------------------
// Every repository path the docs name exists.

/// The documents whose paths are checked: the READMEs, the CHANGELOG, every
/// page of `docs/`, and the two crate roots (their module maps). Left out:
/// the READMEs of single benchmark results (each records a run at its
/// commit, with the files of that day) and `tests/conformance/README.md`
/// (its paths are in the repositories its vectors come from).
fn documents() -> Vec<String> {
    let mut docs: Vec<String> = [
        "README.md",
        "CHANGELOG.md",
        "python/README.md",
        "python/src/lib.rs",
        "src/lib.rs",
        "benches/results/README.md",
        "datasets/README.md",
    ]
    .map(String::from)
    .to_vec();
    docs.extend(
        files_under("docs")
            .into_iter()
            .filter(|p| p.ends_with(".md")),
    );
    docs
}

/// The repository's top-level folders: a word that starts with one of them
/// and a `/` is a path from the root.
const TOP_FOLDERS: &[&str] = &[
    ".ci", "benches", "datasets", "docs", "examples", "fuzz", "python", "scripts", "src", "tests",
];

/// The top-level files a doc may name by their bare name.
const TOP_FILES: &[&str] = &[
    "README.md",
    "CHANGELOG.md",
    "Cargo.toml",
    "Cargo.lock",
    "LICENSE-MIT",
    "LICENSE-APACHE",
    "rustfmt.toml",
    ".gitignore",
    ".gitattributes",
];

/// The repository paths a line names. The rule: split the line (prose, code
/// spans, link targets and code blocks alike) into words at spaces, quotes,
/// backticks, brackets, parentheses, `,`, `;`, `=` and `|`; drop a word's
/// trailing `.`, `:`, `!` and `?`, and what follows its `#` (an anchor), `::`
/// (an item) or `:N` (a line number). The word is a path when it starts with
/// a top-level folder and `/` (`src/uri/mod.rs`, `scripts/bench-cli`) or is a
/// top-level file (`Cargo.toml`). Words holding `*`, `{`, `<`, `$` or `…` are
/// patterns or placeholders (`benches/results/<date>-…/`), not paths, and a
/// path inside a place `.gitignore` names from the root is made by a tool
/// (`datasets/generated/`). Relative links (`../src/lib.rs`) are checked by
/// `scripts/check-links`.
fn named_paths(line: &str) -> Vec<String> {
    let separators = |c: char| c.is_whitespace() || "`\"'()[],;=|".contains(c);
    let mut out = Vec::new();
    for word in line.split(separators) {
        let mut word = word.trim_end_matches(['.', ':', '!', '?']);
        if word.chars().any(|c| "*{<$…".contains(c)) {
            continue;
        }
        for cut in ["#", "::"] {
            if let Some(at) = word.find(cut) {
                word = &word[..at];
            }
        }
        if let Some(at) = word.find(':') {
            if word[at + 1..].starts_with(|c: char| c.is_ascii_digit()) {
                word = &word[..at];
            }
        }
        let in_folder = TOP_FOLDERS.iter().any(|folder| {
            word.strip_prefix(folder)
                .is_some_and(|rest| rest.len() > 1 && rest.starts_with('/'))
        });
        if in_folder || TOP_FILES.contains(&word) {
            out.push(word.to_string());
        }
    }
    out
}

#[test]
fn named_paths_follows_its_rule() {
    let line = "See `src/uri/mod.rs`, [it](docs/testing.md#fuzzing) and `scripts/bench-cli \
                --quick`: tests/integration/cli.rs:12, python/tests/test_docs.py::test_x, \
                Cargo.toml. Not: `benches/results/<date>/`, src/*.rs, ../src/lib.rs, \
                https://example.com/src/x, srcs/x, `src/`.";
    assert_eq!(
        named_paths(line),
        [
            "src/uri/mod.rs",
            "docs/testing.md",
            "scripts/bench-cli",
            "tests/integration/cli.rs",
            "python/tests/test_docs.py",
            "Cargo.toml"
        ]
    );
}

#[test]
fn docs_name_only_paths_that_exist() {
    let places = ignored_places();
    let mut missing = Vec::new();
    let mut named = 0;
    for doc in documents() {
        for (number, line) in read(&doc).lines().enumerate() {
            for path in named_paths(line) {
                named += 1;
                let made_by_a_tool = places
                    .iter()
                    .any(|p| path.trim_end_matches('/') == p || path.starts_with(&format!("{p}/")));
                if !made_by_a_tool && !root().join(&path).exists() {
                    missing.push(format!("{doc}:{}: {path}", number + 1));
                }
            }
        }
    }
    assert!(
        named > 200,
        "only {named} paths found: is the rule still finding them?"
    );
    assert!(
        missing.is_empty(),
        "the docs name paths that do not exist (name what is there now):\n{}",
        missing.join("\n")
    );
}

/// A file named bare in a code span (`` `cdxj_fast.rs` ``, `` `spark.py` ``):
/// some Rust or Python file of the repository has that name. (Where it lives
/// is the text's business; that it still exists is the test's.)
#[test]
fn docs_name_only_source_files_that_exist() {
    let mut names = std::collections::BTreeSet::new();
    for dir in TOP_FOLDERS {
        for file in files_under(dir) {
            names.insert(file.rsplit('/').next().unwrap_or(&file).to_string());
        }
    }
    let mut missing = Vec::new();
    for doc in documents().iter().filter(|d| d.ends_with(".md")) {
        for (number, line) in read(doc).lines().enumerate() {
            for span in line.split('`').skip(1).step_by(2) {
                let bare = !span.is_empty()
                    && span
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
                let source = [".rs", ".py", ".pyi"].iter().any(|ext| span.ends_with(ext));
                if bare && source && !names.contains(span) {
                    missing.push(format!("{doc}:{}: {span}", number + 1));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the docs name source files that no longer exist anywhere:\n{}",
        missing.join("\n")
    );
}

/// The Python extension's module map (the `//!` list of `python/src/lib.rs`)
/// names each of its modules, and only those.
#[test]
fn python_module_map_names_every_module() {
    let lib = read("python/src/lib.rs");
    let map: String = lib
        .lines()
        .take_while(|l| l.starts_with("//!"))
        .filter_map(|l| l.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut mapped: Vec<&str> = map
        .split("\n *")
        .skip(1)
        .flat_map(|item| item.split(':').next().unwrap_or("").split(','))
        .map(|name| name.trim().trim_matches('`'))
        .collect();
    mapped.sort_unstable();
    let mut declared: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    declared.sort_unstable();
    assert_eq!(
        mapped, declared,
        "python/src/lib.rs: the module map and the `mod` lines differ"
    );
    for name in declared {
        let file = root().join(format!("python/src/{name}.rs"));
        let folder = root().join(format!("python/src/{name}/mod.rs"));
        assert!(
            file.is_file() || folder.is_file(),
            "python/src/lib.rs declares {name}, with no file"
        );
    }
}

// ---------------------------------------------------------------------------
// Sizes: short enough to read, few enough to find.

/// The README is the first page: what urikey is, the two first commands, the
/// claims and where to read on. Detail goes to `docs/`.
const README_MAX_LINES: usize = 450;

#[test]
fn readme_is_at_most_450_lines() {
    let lines = read("README.md").lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, more than {README_MAX_LINES}: move detail to a page of docs/"
    );
}

/// Committed benchmark results: one folder per result a doc cites. A new run
/// of the same topic replaces its folder (the history of figures lives in
/// docs/performance.md).
const RESULT_FOLDERS_MAX: usize = 8;

#[test]
fn at_most_8_benchmark_result_folders() {
    let mut folders: Vec<String> = std::fs::read_dir(root().join("benches/results"))
        .expect("benches/results/")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    assert!(
        folders.len() <= RESULT_FOLDERS_MAX,
        "benches/results/ holds {} result folders, more than {RESULT_FOLDERS_MAX}: merge or retire \
         superseded ones (and keep benches/results/README.md true):\n{}",
        folders.len(),
        folders.join("\n")
    );
    let index = read("benches/results/README.md");
    for folder in &folders {
        assert!(
            index.contains(folder.as_str()),
            "benches/results/README.md does not list {folder}"
        );
    }
}

/// A source file is read whole by whoever changes it: past about 1,000 lines
/// it holds more than one job.
const SOURCE_MAX_LINES: usize = 1000;

/// Files exempt from the cap, each with its reason.
const LONG_FILES: &[(&str, &str)] = &[(
    "src/uri/compat/tables.rs",
    "generated by scripts/gen-compat-tables (CPython's Unicode data); CI checks it is its output",
)];

/// The hand-written source files: Rust, Python and stub files anywhere in the
/// code folders, and every script of `scripts/` and `.ci/`.
fn source_files() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["src", "tests", "benches", "examples", "fuzz", "python"] {
        out.extend(
            files_under(dir)
                .into_iter()
                .filter(|p| [".rs", ".py", ".pyi"].iter().any(|ext| p.ends_with(ext))),
        );
    }
    for dir in ["scripts", ".ci"] {
        out.extend(files_under(dir));
    }
    out
}

#[test]
fn no_source_file_is_over_1000_lines() {
    let files = source_files();
    assert!(files.len() > 100, "only {} source files found", files.len());
    let mut long = Vec::new();
    for file in &files {
        let lines = read(file).lines().count();
        if lines > SOURCE_MAX_LINES && !LONG_FILES.iter().any(|(name, _)| name == file) {
            long.push(format!("{file}: {lines} lines"));
        }
    }
    assert!(
        long.is_empty(),
        "source files over {SOURCE_MAX_LINES} lines (split them by job):\n{}",
        long.join("\n")
    );
    for (name, reason) in LONG_FILES {
        assert!(
            files.contains(&(*name).to_string()),
            "{name} is exempt from the line cap ({reason}) but is gone: drop it from LONG_FILES"
        );
    }
}
