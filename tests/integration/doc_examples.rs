//! The `console` blocks of the README, python/README.md and `docs/` run as
//! written and print what they show (their Python blocks run in
//! `python/tests/test_docs.py`, their Rust blocks as doctests), and
//! docs/cli.md names every option of `urikey dedup`.
//!
//! In a block, a line starting with `$ ` is a command (continued on the next
//! line while it ends with `\`), run by `sh` from the repository root with the
//! `urikey` under test first on `PATH`. The lines after it, up to the next
//! command, are what it prints: its stdout, then its stderr.

use std::path::Path;
use std::process::{Command, Stdio};

struct Example {
    at: String,
    command: String,
    shows: String,
}

fn examples(doc: &Path, rel: &str) -> Vec<Example> {
    let text = std::fs::read_to_string(doc).unwrap();
    let mut out = Vec::new();
    let mut in_block = false;
    let mut current: Option<Example> = None;
    let mut continued = false;
    for (number, line) in text.lines().enumerate() {
        if !in_block {
            in_block = line.trim_end() == "```console";
            continue;
        }
        if line.starts_with("```") {
            in_block = false;
            out.extend(current.take());
            continue;
        }
        if continued {
            let example = current.as_mut().unwrap();
            example.command.push('\n');
            example.command.push_str(line);
            continued = line.ends_with('\\');
        } else if let Some(command) = line.strip_prefix("$ ") {
            out.extend(current.take());
            current = Some(Example {
                at: format!("{rel}:{}", number + 1),
                command: command.to_string(),
                shows: String::new(),
            });
            continued = command.ends_with('\\');
        } else {
            let example = current
                .as_mut()
                .unwrap_or_else(|| panic!("{rel}:{}: output before a `$ ` command", number + 1));
            example.shows.push_str(line);
            example.shows.push('\n');
        }
    }
    out
}

#[test]
fn console_examples_print_what_they_show() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin = assert_cmd::cargo::cargo_bin("urikey");
    let path = std::env::join_paths(std::iter::once(bin.parent().unwrap().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let mut docs = vec!["README.md".to_string(), "python/README.md".to_string()];
    let mut pages: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| format!("docs/{}", e.file_name().to_string_lossy()))
        .filter(|p| p.ends_with(".md"))
        .collect();
    pages.sort();
    docs.extend(pages);
    let mut ran = 0;
    for rel in &docs {
        for example in examples(&root.join(rel), rel) {
            let output = Command::new("sh")
                .arg("-c")
                .arg(&example.command)
                .current_dir(root)
                .env("PATH", &path)
                .stdin(Stdio::null())
                .output()
                .unwrap_or_else(|e| panic!("{}: cannot run sh: {e}", example.at));
            let printed = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            assert_eq!(
                printed, example.shows,
                "{}: `{}` prints something else than the block shows",
                example.at, example.command
            );
            ran += 1;
        }
    }
    assert!(ran >= 3, "only {ran} console examples found");
}

/// docs/cli.md names every option `urikey dedup --help` lists, so that a new
/// option cannot go undocumented.
#[test]
fn docs_cli_names_every_dedup_option() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let page = std::fs::read_to_string(root.join("docs/cli.md")).unwrap();
    let help = crate::common::stdout_of(crate::common::urikey().args(["dedup", "--help"]));
    let mut missing = Vec::new();
    let mut options = 0;
    for word in help.split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == '=') {
        let Some(name) = word.strip_prefix("--") else {
            continue;
        };
        if name.is_empty()
            || name == "help"
            || !name.chars().all(|c| c.is_ascii_lowercase() || c == '-')
        {
            continue;
        }
        options += 1;
        if !page.contains(&format!("`--{name}")) {
            missing.push(format!("--{name}"));
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        options > 20,
        "only {options} options found in `urikey dedup --help`"
    );
    assert!(
        missing.is_empty(),
        "docs/cli.md does not name these options of `urikey dedup --help`: {}",
        missing.join(", ")
    );
}
