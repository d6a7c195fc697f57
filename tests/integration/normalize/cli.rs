//! `urikey normalize` end to end.

use assert_cmd::Command;
use predicates::prelude::*;
use predicates::str::contains;

fn urikey() -> Command {
    Command::cargo_bin("urikey").expect("binary")
}

const INPUT: &str =
    "HTTP://Example.COM:80/a/./b\nhttp://a b/\nhttps://www.example.com/?b=1&a=2#f\n";

#[test]
fn one_line_out_per_line_in() {
    urikey()
        .arg("normalize")
        .write_stdin(INPUT)
        .assert()
        .success()
        .stdout("http://example.com/a/b\n\nhttps://www.example.com/?b=1&a=2#f\n")
        .stderr(contains("-:2: byte 36: invalid character in host"));
}

#[test]
fn on_invalid_modes() {
    let run = |mode: &str| {
        urikey()
            .args(["normalize", "--on-invalid", mode])
            .write_stdin(INPUT)
            .assert()
    };
    run("skip")
        .success()
        .stdout("http://example.com/a/b\nhttps://www.example.com/?b=1&a=2#f\n");
    run("keep")
        .success()
        .stdout("http://example.com/a/b\nhttp://a b/\nhttps://www.example.com/?b=1&a=2#f\n");
    run("fail").code(1).stdout("http://example.com/a/b\n");
}

#[test]
fn profile_flags_lenient_and_key_formats() {
    urikey()
        .args([
            "normalize",
            "--profile",
            "crawl",
            "--with",
            "sort-query,remove-www",
            "--lenient",
            "--key",
            "surt",
        ])
        .write_stdin(INPUT)
        .assert()
        .success()
        .stdout("com,example)/a/b\na%20b)/\ncom,example)https:/?a=2&b=1\n");
    urikey()
        .args([
            "normalize",
            "--with",
            "remove-query-params=utm_*;ref",
            "--without",
            "empty-path-slash",
        ])
        .write_stdin("http://a?utm_x=1&ref=2&k=3\n")
        .assert()
        .success()
        .stdout("http://a?k=3\n");
    let out = urikey()
        .args(["normalize", "--key", "hash"])
        .write_stdin("http://a/\n")
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let want = format!("{:032x}\n", urikey::uri::key::fingerprint(b"http://a/"));
    assert_eq!(text, want);
}

#[test]
fn lenient_errors_point_into_the_original_line() {
    urikey()
        .args(["normalize", "--lenient"])
        .write_stdin("  ht tp://x/\n")
        .assert()
        .success()
        .stdout("\n")
        .stderr(contains("-:1: byte 4: invalid scheme"));
}

#[test]
fn help_names_every_flag() {
    let out = urikey().args(["normalize", "--help"]).assert().success();
    let help = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for f in urikey::uri::normalize::Flag::ALL {
        assert!(help.contains(f.name()), "--help does not name {f}");
    }
}

#[test]
fn repeated_with_adds_up() {
    urikey()
        .args([
            "normalize",
            "--with",
            "remove-query-params=utm_*",
            "--with",
            "remove-query-params=ref,sort-query",
        ])
        .write_stdin("http://a/?z=1&ref=2&utm_a=3&b=4\n")
        .assert()
        .success()
        .stdout("http://a/?b=4&z=1\n");
}

#[test]
fn unknown_names_are_usage_errors() {
    urikey()
        .args(["normalize", "--with", "bogus"])
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(contains("unknown normalization flag \"bogus\"").and(contains("sort-query")));
    urikey()
        .args(["normalize", "--profile", "x"])
        .write_stdin("")
        .assert()
        .code(2);
    urikey()
        .args(["normalize", "--key", "x"])
        .write_stdin("")
        .assert()
        .code(2);
}
