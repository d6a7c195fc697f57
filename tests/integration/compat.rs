//! The compat presets against the w3lib cases of the crawl canonicalization
//! vectors (`crawl_canon.jsonl`, read in place): every case whose options
//! are the defaults (`w3lib`) or `keep_fragments=True`
//! (`w3lib-keep-fragments`). The other option sets (`encoding`,
//! `keep_blank_values=False`) have no preset and are skipped.
//! The full differential test against the real references is
//! `scripts/compat-diff`.

use crate::common::{assert_no_failures, field, load};
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

/// Pieces that reach the presets' corner cases: delimiters, escapes,
/// brackets, dots, digits, and characters that NFKC, nameprep or
/// lowercasing change or refuse.
const PIECES: &[&str] = &[
    "http://",
    "https://",
    "foo:",
    "//",
    "/",
    "\\",
    "?",
    "#",
    "&",
    "=",
    ";",
    ":",
    "@",
    "[",
    "]",
    ".",
    "..",
    "%",
    "%2",
    "%25",
    "%2f",
    "%41",
    "%e9",
    "+",
    " ",
    "\t",
    "a",
    "B",
    "www1.",
    "0",
    "09",
    "255",
    "::",
    "v1",
    "é",
    "ß",
    "Σ",
    "İ",
    "ﬁ",
    "．",
    "＠",
    "℀",
    "\u{200d}",
    "ا",
    "😀",
    "\u{301}",
    "xn--",
    "jsessionid=",
    "cfid=",
    "&cftoken=",
    "(",
    ")",
    ".aspx",
];

fn dirty() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
    use proptest::prelude::*;
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..64),
        proptest::collection::vec(proptest::sample::select(PIECES), 0..24)
            .prop_map(|p| p.concat().into_bytes()),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::common::proptest_cases(2048)))]

    /// Bad input is data: any bytes give a key or an error, never a panic,
    /// and the scratch buffers carry nothing from one line to the next.
    #[test]
    fn any_bytes_give_a_key_or_an_error(a in dirty(), b in dirty()) {
        let mut shared = CompatScratch::default();
        for c in Compat::ALL {
            for line in [&a, &b] {
                let mut k1 = b"prefix ".to_vec();
                let r1 = c.write_key(line, &mut k1, &mut shared);
                if r1.is_err() {
                    proptest::prop_assert_eq!(&k1[..], b"prefix ", "out changed on error");
                }
                k1.drain(..7);
                let mut k2 = Vec::new();
                let r2 = c.write_key(line, &mut k2, &mut CompatScratch::default());
                proptest::prop_assert_eq!(r1, r2);
                if r1.is_ok() {
                    proptest::prop_assert_eq!(k1, k2);
                }
            }
        }
    }
}

#[test]
fn long_adversarial_lines_stay_fast() {
    // Repeated escapes and session-id look-alikes are linear, not quadratic.
    let mut scratch = CompatScratch::default();
    let lines = [
        format!("http://example.com/{}41", "%25".repeat(200_000)),
        format!("http://example.com/?{}", "cfid=".repeat(200_000)),
        format!("http://example.com/{}", "a/../".repeat(200_000)),
        format!("http://example.com/?{}", "a=1&".repeat(200_000)),
    ];
    let start = std::time::Instant::now();
    for c in Compat::ALL {
        for l in &lines {
            let mut key = Vec::new();
            let _ = c.write_key(l.as_bytes(), &mut key, &mut scratch);
        }
    }
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
}
