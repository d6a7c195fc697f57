//! The compat presets against the w3lib cases of the crawl canonicalization
//! vectors (`crawl_canon.jsonl`, read in place): every case whose options
//! are the defaults (`w3lib`) or `keep_fragments=True`
//! (`w3lib-keep-fragments`). The other option sets (`encoding`,
//! `keep_blank_values=False`) have no preset and are skipped.
//! The full differential test against the real references is
//! `scripts/compat-diff`.

mod common;

use common::{assert_no_failures, field, load};
use urikey::uri::compat::{Compat, CompatScratch};

#[test]
fn crawl_canon_w3lib_cases() {
    let Some(cases) = load("crawl_canon.jsonl") else {
        return;
    };
    let mut scratch = CompatScratch::default();
    let mut failures = Vec::new();
    let mut total = 0;
    for case in cases.iter().filter(|c| field(c, "tool") == Some("w3lib")) {
        let options = case["options"].as_object().expect("options");
        let preset = match options.iter().next() {
            None => Compat::W3lib,
            Some((k, v)) if options.len() == 1 && k == "keep_fragments" && v == true => {
                Compat::W3libKeepFragments
            }
            _ => continue,
        };
        total += 1;
        let input = field(case, "input").expect("input");
        let expected = field(case, "expected").expect("expected");
        let mut key = Vec::new();
        match preset.write_key(input.as_bytes(), &mut key, &mut scratch) {
            Ok(()) if key == expected.as_bytes() => {}
            Ok(()) => failures.push(format!(
                "{preset} {input:?}: expected {expected:?}, got {:?}",
                String::from_utf8_lossy(&key)
            )),
            Err(e) => failures.push(format!(
                "{preset} {input:?}: expected {expected:?}, got {e}"
            )),
        }
    }
    assert_eq!(total, 41, "w3lib cases with a preset");
    assert_no_failures("crawl_canon.jsonl (w3lib)", total, &failures);
}

#[test]
fn presets_parse_and_print_their_names() {
    for c in Compat::ALL {
        assert_eq!(c.to_string().parse::<Compat>(), Ok(c));
        assert!(!c.reference().is_empty());
    }
    let e = "w3".parse::<Compat>().unwrap_err().to_string();
    assert!(e.contains("w3lib, w3lib-keep-fragments, ia-surt"), "{e}");
}

#[test]
fn invalid_utf8_is_an_error_for_every_preset() {
    let mut scratch = CompatScratch::default();
    for c in Compat::ALL {
        let mut key = Vec::new();
        let e = c
            .write_key(b"http://example.com/\xff", &mut key, &mut scratch)
            .unwrap_err();
        assert_eq!((e.reason(), e.index()), ("invalid-utf8", 19));
    }
}
