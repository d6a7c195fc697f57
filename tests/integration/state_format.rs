//! Stores written by earlier releases: `tests/data/seen-store-v1` was
//! written by the format-1 code (before run lines carried a content
//! checksum; `crawl`, commit 1 `http://v1.example/0` to `99`, commit 2
//! `HTTP://V1.example/100` to `109`). It opens, answers and verifies, and
//! the next commit writes it in the current format.

use std::path::Path;

use tempfile::TempDir;
use urikey::engine::store::{verify, Access, SeenStore};
use urikey::uri::key::{fingerprint, KeyConfig};

use super::common::{stdout_of, urikey};

fn fixture() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/seen-store-v1"
    ))
}

#[test]
fn state_format_1_store_opens_answers_and_is_upgraded_by_a_commit() {
    let temp = TempDir::new().expect("temp dir");
    let store = temp.path().join("s");
    std::fs::create_dir(&store).expect("mkdir");
    for e in std::fs::read_dir(fixture()).expect("the fixture") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), store.join(e.file_name())).expect("copy");
    }
    let crawl: KeyConfig = "crawl".parse().expect("a profile");
    let s = SeenStore::open_for(&store, &crawl, Access::ReadOnly).expect("opens");
    assert_eq!(s.len(), 110);
    for i in 0..110 {
        let key = format!("http://v1.example/{i}");
        assert!(
            s.contains(fingerprint(key.as_bytes())).expect("reads"),
            "{key}"
        );
    }
    assert!(!s
        .contains(fingerprint(b"http://v1.example/110"))
        .expect("reads"));
    drop(s);
    assert!(verify(&store).is_ok());
    let input = "http://v1.example/5\nhttp://v1.example/110\n";
    let out = stdout_of(
        urikey()
            .args(["dedup", "--profile", "crawl", "--state"])
            .arg(&store)
            .write_stdin(input),
    );
    assert_eq!(out, "http://v1.example/110\n");
    let manifest = std::fs::read_to_string(store.join("MANIFEST")).expect("read");
    assert!(manifest.contains("\nformat 2\n"), "{manifest}");
    assert!(verify(&store).is_ok());
    let s = SeenStore::open_for(&store, &crawl, Access::ReadOnly).expect("opens");
    assert_eq!(s.len(), 111);
}
