//! Every input format is named wherever a user looks for it: the
//! `--format` help of the commands that read formats, the Python stub's
//! `format` type, the README's table of input formats and the table of
//! docs/formats.md. A new format that one of them forgets fails here.

use std::path::Path;

use urikey::engine::formats::Format;

use crate::common::{stdout_of, urikey};

fn repo_file(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The text of `after` up to the first later line that starts with
/// `until` (or the end).
fn section<'a>(text: &'a str, after: &str, until: &str) -> &'a str {
    let start = text
        .find(after)
        .unwrap_or_else(|| panic!("no {after:?} in the text"));
    let rest = &text[start + after.len()..];
    let end = rest
        .lines()
        .scan(0, |at, line| {
            let here = *at;
            *at += line.len() + 1;
            Some((here, line))
        })
        .skip(1)
        .find(|(_, line)| line.trim_start().starts_with(until))
        .map_or(rest.len(), |(at, _)| at);
    &rest[..end]
}

#[test]
fn format_list_is_named_in_help_stub_and_docs() {
    for command in ["dedup", "normalize"] {
        let help = stdout_of(urikey().args([command, "--help"]));
        let option = section(&help, "--format <FORMAT>", "--");
        for f in Format::ALL {
            assert!(
                option.contains(f.name()),
                "`urikey {command} --help` does not name {f} under --format:\n{option}"
            );
        }
    }

    let stub = repo_file("python/urikey/__init__.pyi");
    let literal = section(&stub, "format: Literal[", "]");
    let literal = &literal[..literal.find(']').unwrap_or(literal.len())];
    let mut named: Vec<&str> = literal
        .split(',')
        .map(|s| s.trim().trim_matches('"'))
        .filter(|s| !s.is_empty())
        .collect();
    let mut all: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
    named.sort_unstable();
    all.sort_unstable();
    assert_eq!(named, all, "the stub's `format` type");

    let readme = repo_file("README.md");
    let table = section(&readme, "## Input formats", "## ");
    let formats_md = repo_file("docs/formats.md");
    for f in Format::ALL {
        let spelled = format!("`{}`", f.name());
        let option = format!("`--format {}`", f.name());
        assert!(
            table.contains(&spelled) || table.contains(&option),
            "README's input-format table does not name {spelled}"
        );
        assert!(
            formats_md.contains(&format!("| {spelled} |")),
            "docs/formats.md's table has no row for {spelled}"
        );
    }
}
