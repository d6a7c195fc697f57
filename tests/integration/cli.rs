//! The per-line commands `urikey parse` and `urikey resolve`, run as a user
//! would run them.

use crate::common::urikey;
use predicates::prelude::*;

#[test]
fn cli_parse_json_fields() {
    let out = urikey()
        .args(["parse", "--json"])
        .write_stdin("http://u@[::1]:080/p?q#f\nfile:///x\nhttp://h?\n")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let lines: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    let first = &lines[0];
    assert_eq!(first["input"], "http://u@[::1]:080/p?q#f");
    assert_eq!(first["valid"], true);
    assert_eq!(first["scheme"], "http");
    assert_eq!(first["userinfo"], "u");
    assert_eq!(first["host"], "[::1]");
    assert_eq!(first["port"], "080");
    assert_eq!(first["path"], "/p");
    assert_eq!(first["query"], "q");
    assert_eq!(first["fragment"], "f");
    assert_eq!(first["host_type"], "ipv6");
    assert_eq!(lines[1]["host"], "");
    assert_eq!(lines[1]["query"], serde_json::Value::Null);
    assert_eq!(lines[2]["query"], "");
    assert_eq!(lines[2]["path"], "");
}

#[test]
fn cli_parse_invalid_line_is_reported_and_run_goes_on() {
    urikey()
        .args(["parse", "--json"])
        .write_stdin("http://ok/\nhttp://h/a b\nhttp://ok2/\n")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            r#"{"input":"http://h/a b","valid":false,"error":{"index":10,"kind":"invalid character in path"}}"#,
        ))
        .stdout(predicate::str::contains("http://ok2/"))
        .stderr("urikey: -:2: byte 21: invalid character in path\n");
}

#[test]
fn cli_parse_text_view_keeps_lines_aligned() {
    urikey()
        .arg("parse")
        .write_stdin("bad uri\r\nurn:a:b\n")
        .assert()
        .success()
        .stdout("\nscheme=\"urn\" userinfo=- host=- port=- path=\"a:b\" query=- fragment=-\n");
}

#[test]
fn cli_resolve_against_base() {
    urikey()
        .args(["resolve", "--base", "http://a/b/c/d;p?q"])
        .write_stdin("../g\n\n#s\nhttp:g\nbad ref\n//g\n")
        .assert()
        .success()
        .stdout("http://a/b/g\nhttp://a/b/c/d;p?q\nhttp://a/b/c/d;p?q#s\nhttp:g\n\nhttp://g\n")
        .stderr(predicate::str::contains("-:5: byte"));
}

#[test]
fn cli_resolve_non_strict() {
    urikey()
        .args(["resolve", "--non-strict", "--base", "http://a/b/c/d;p?q"])
        .write_stdin("http:g\n")
        .assert()
        .success()
        .stdout("http://a/b/c/g\n");
}

#[test]
fn cli_resolve_rejects_relative_base() {
    urikey()
        .args(["resolve", "--base", "/relative"])
        .write_stdin("g\n")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("needs a scheme"));
}

#[test]
fn cli_missing_input_names_the_path() {
    urikey()
        .args(["parse", "no/such/file.txt"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no/such/file.txt"));
}

/// A line over the 1 MiB limit of the per-line commands: reported as too
/// long with its line number, given an empty output line, and the run goes
/// on with the next line; also with `\r\n` endings and a line of exactly
/// the limit (which is fine).
#[test]
fn cli_per_line_commands_bound_line_length() {
    const LIMIT: usize = 1 << 20;
    let long = format!("http://h/{}", "a".repeat(LIMIT));
    let exact = format!("http://h/{}", "b".repeat(LIMIT - 9));
    let input = format!("{long}\r\nhttp://h/ok\r\n{exact}\n");
    for cmd in [
        vec!["parse", "--json"],
        vec!["normalize"],
        vec!["normalize", "--on-invalid", "keep"],
        vec!["resolve", "--base", "http://b/"],
    ] {
        let assert = urikey()
            .args(&cmd)
            .write_stdin(input.clone())
            .assert()
            .success();
        let output = assert.get_output();
        let stdout = String::from_utf8(output.stdout.clone()).unwrap();
        let stderr = String::from_utf8(output.stderr.clone()).unwrap();
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 3, "{cmd:?}");
        assert!(
            stderr.contains(&format!(":1: byte {LIMIT}: line too long")),
            "{cmd:?}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{cmd:?}: {stderr}");
        if cmd[0] == "parse" {
            let first: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
            assert_eq!(first["valid"], false);
            assert_eq!(first["error"]["kind"], "line too long");
            let second: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
            assert_eq!(second["path"], "/ok");
            let third: serde_json::Value = serde_json::from_str(lines[2]).unwrap();
            assert_eq!(third["valid"], true);
        } else {
            assert_eq!(lines[0], "", "{cmd:?}");
            assert!(lines[1].ends_with("/ok"), "{cmd:?}");
            assert_eq!(lines[2].len(), exact.len(), "{cmd:?}");
        }
    }
}

// The compatibility presets through the commands. The presets' fidelity to
// the reference libraries is tested against the real libraries (the
// Python differential test and tests/compat.rs); here: the wiring.
#[test]
fn cli_compat_presets_key_normalize_and_dedup() {
    urikey()
        .args(["normalize", "--compat", "ia-surt"])
        .write_stdin("http://www.Example.com/a?b=2&a=1#x\nhttps://example.com/a?a=1&b=2\n")
        .assert()
        .success()
        .stdout("com,example)/a?a=1&b=2\ncom,example)/a?a=1&b=2\n");
    // w3lib sorts the query and drops the fragment: the two lines merge.
    urikey()
        .args(["dedup", "--compat", "w3lib", "--emit", "original"])
        .write_stdin("http://Example.com/do?c=1&b=2#f\nhttp://example.com/do?b=2&c=1\n")
        .assert()
        .success()
        .stdout("http://Example.com/do?c=1&b=2#f\n");
    urikey()
        .args(["normalize", "--compat", "w3lib-keep-fragments"])
        .write_stdin("http://Example.com/do?c=1&b=2#f\n")
        .assert()
        .success()
        .stdout("http://example.com/do?b=2&c=1#f\n");
}

#[test]
fn cli_compat_comes_alone_and_reports_reference_errors() {
    for other in [
        ["--profile", "crawl"],
        ["--key", "surt"],
        ["--with", "sort-query"],
    ] {
        urikey()
            .args(["normalize", "--compat", "w3lib"])
            .args(other)
            .write_stdin("")
            .assert()
            .code(2)
            .stderr(predicate::str::contains("cannot be used with"));
    }
    urikey()
        .args(["normalize", "--compat", "w3lib"])
        .write_stdin("http://[::1/\n")
        .assert()
        .success()
        .stdout("\n")
        .stderr(predicate::str::contains("-:1: byte"));
}

#[test]
fn cli_completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let out = urikey()
            .args(["completions", shell])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let script = String::from_utf8(out).expect("utf-8");
        for word in ["dedup", "normalize", "duplicates", "stats-json"] {
            assert!(script.contains(word), "{shell}: {word}");
        }
    }
    // The bash script is valid bash (the others need their shells).
    let dir = tempfile::TempDir::new().expect("temp dir");
    let path = dir.path().join("urikey.bash");
    let out = urikey()
        .args(["completions", "bash"])
        .output()
        .expect("runs");
    std::fs::write(&path, out.stdout).expect("written");
    if let Ok(status) = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .status()
    {
        assert!(status.success(), "bash -n accepts the script");
    }
    urikey().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn cli_man_pages() {
    urikey()
        .arg("man")
        .assert()
        .success()
        .stdout(predicate::str::starts_with(".ie"))
        .stdout(predicate::str::contains(".TH urikey 1"))
        .stdout(predicate::str::contains("urikey\\-dedup(1)"))
        .stdout(predicate::str::contains("130 interrupted"));
    let dir = tempfile::TempDir::new().expect("temp dir");
    urikey()
        .args(["man", "--dir"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout("");
    let dedup =
        std::fs::read_to_string(dir.path().join("urikey-dedup.1")).expect("a page per command");
    assert!(dedup.contains("\\-\\-duplicates"), "{dedup}");
    for page in [
        "urikey.1",
        "urikey-normalize.1",
        "urikey-parse.1",
        "urikey-resolve.1",
    ] {
        assert!(dir.path().join(page).is_file(), "{page}");
    }
}
