//! RFC 3986 conformance: parsing, rejection, recomposition, resolution,
//! `remove_dot_segments` and percent-decoding against the third-party
//! vectors in `../shared/conformance` (read in place).

use crate::common::{assert_no_failures, conformance_path, field, load, KnownDeviations};
use urikey::uri::{pct, resolve, Components, UriRef};

/// The other conformance tests (here and in `normalize/conformance.rs`) pass
/// without checking anything when the vectors are missing; this one makes
/// that visible in the summary. It fails, naming the directory, unless the
/// vectors are there or `URIKEY_ALLOW_MISSING_CONFORMANCE=1` asks to skip
/// them knowingly.
#[test]
fn conformance_vectors_present() {
    let dir = conformance_path();
    if dir.join("parse.jsonl").is_file() {
        // Each file holds the cases its README counts: a file cut short
        // would pass every test with less to check.
        for (file, cases) in [
            ("crawl_canon.jsonl", 516),
            ("invalid.jsonl", 139),
            ("normalize.jsonl", 68),
            ("parse.jsonl", 512),
            ("percent_decode.jsonl", 14),
            ("quirks.jsonl", 57),
            ("remove_dot_segments.jsonl", 26),
            ("resolve.jsonl", 98),
        ] {
            assert_eq!(load(file).map(|c| c.len()), Some(cases), "{file}");
        }
        assert!(
            dir.join("README.md").is_file(),
            "the vectors' README is missing"
        );
        return;
    }
    let allowed = std::env::var("URIKEY_ALLOW_MISSING_CONFORMANCE").is_ok_and(|v| v == "1");
    let message = format!(
        "the conformance vectors are missing ({} has no parse.jsonl): every conformance \
         test was SKIPPED and checked nothing. Put the vectors there, point \
         URIKEY_CONFORMANCE_DIR at them, or set URIKEY_ALLOW_MISSING_CONFORMANCE=1 to \
         skip them knowingly.",
        dir.display()
    );
    assert!(allowed, "{message}");
    super::common::skip_notice(&message);
}

/// The copy in `tests/conformance/` is the shared one, unchanged, where the
/// shared one is beside the repository.
#[test]
fn conformance_copy_is_unchanged() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("..").join("shared").join("conformance");
    let Ok(entries) = std::fs::read_dir(&shared) else {
        eprintln!(
            "note: no shared conformance directory beside the repository; the copy is not compared"
        );
        return;
    };
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let name = path.file_name().expect("a file name");
        let ours = std::fs::read(root.join("tests").join("conformance").join(name));
        assert_eq!(
            ours.ok(),
            std::fs::read(&path).ok(),
            "tests/conformance/{} differs from the shared copy",
            name.to_string_lossy()
        );
    }
}

#[test]
fn conformance_fast_parser_agrees_with_precise_parser() {
    use urikey::uri::parsers::{parse_fast, parse_precise};
    for file in ["parse.jsonl", "invalid.jsonl"] {
        let Some(cases) = load(file) else { return };
        for case in &cases {
            let input = field(case, "input").expect("input").as_bytes();
            if let Some(fast) = parse_fast(input) {
                assert_eq!(
                    Ok(fast),
                    parse_precise(input),
                    "{file}: {:?}",
                    case["input"]
                );
            }
        }
    }
}

#[test]
fn conformance_parse_components_and_recomposition() {
    let Some(cases) = load("parse.jsonl") else {
        return;
    };
    let known = KnownDeviations::for_file("parse.jsonl");
    let mut failures = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let input = field(case, "input").expect("input");
        let (passed, actual) = match UriRef::parse(input) {
            Err(e) => (false, format!("rejected: {e}")),
            Ok(u) => {
                let mut diffs = Vec::new();
                let mut cmp = |name: &str, got: Option<&str>| {
                    let want = field(case, name);
                    if want != got {
                        diffs.push(format!("{name}: expected {want:?}, got {got:?}"));
                    }
                };
                cmp("scheme", u.scheme());
                cmp("userinfo", u.userinfo());
                cmp("host", u.host());
                cmp("port", u.port());
                cmp("path", Some(u.path()));
                cmp("query", u.query());
                cmp("fragment", u.fragment());
                if case.get("host_type").is_some() {
                    cmp("host_type", u.host_kind().map(urikey::uri::HostKind::name));
                }
                let rebuilt = Components::from(&u).to_string();
                if rebuilt != input {
                    diffs.push(format!("recomposed as {rebuilt:?}"));
                }
                (diffs.is_empty(), diffs.join("; "))
            }
        };
        if let Some(f) = known.check(input, passed, || format!("case {n}: {actual}")) {
            failures.push(f);
        }
    }
    assert_no_failures("parse.jsonl", cases.len(), &failures);
}

#[test]
fn conformance_invalid_inputs_are_rejected() {
    let Some(cases) = load("invalid.jsonl") else {
        return;
    };
    let known = KnownDeviations::for_file("invalid.jsonl");
    let mut failures = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let input = field(case, "input").expect("input");
        let only_as_uri = field(case, "rule") == Some("URI");
        let outcome = UriRef::parse(input);
        let rejected = match &outcome {
            Err(_) => true,
            Ok(u) => only_as_uri && u.is_relative(),
        };
        let detail = || {
            format!(
                "case {n}: accepted ({})",
                field(case, "reason").unwrap_or("")
            )
        };
        if let Some(f) = known.check(input, rejected, detail) {
            failures.push(f);
        }
        if let Err(e) = outcome {
            assert!(
                e.index() <= input.len(),
                "case {n}: error index past the end"
            );
        }
    }
    assert_no_failures("invalid.jsonl", cases.len(), &failures);
}

#[test]
fn conformance_resolve_strict() {
    let Some(cases) = load("resolve.jsonl") else {
        return;
    };
    let known = KnownDeviations::for_file("resolve.jsonl");
    let mut failures = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let base = field(case, "base").expect("base");
        let reference = field(case, "reference").expect("reference");
        let expected = field(case, "expected").expect("expected");
        let actual = match (UriRef::parse(base), UriRef::parse(reference)) {
            (Ok(b), Ok(r)) => resolve(&b, &r).map_err(|e| e.to_string()),
            (Err(e), _) | (_, Err(e)) => Err(e.to_string()),
        };
        let passed = actual.as_deref() == Ok(expected);
        let id = format!("{base} {reference}");
        let detail = || format!("case {n}: expected {expected:?}, got {actual:?}");
        if let Some(f) = known.check(&id, passed, detail) {
            failures.push(f);
        }
    }
    assert_no_failures("resolve.jsonl", cases.len(), &failures);
}

#[test]
fn conformance_remove_dot_segments() {
    let Some(cases) = load("remove_dot_segments.jsonl") else {
        return;
    };
    let known = KnownDeviations::for_file("remove_dot_segments.jsonl");
    let mut failures = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let input = field(case, "input").expect("input");
        let expected = field(case, "expected").expect("expected");
        let mut out = String::new();
        resolve::remove_dot_segments_into(input, &mut out);
        let detail = || format!("case {n}: expected {expected:?}, got {out:?}");
        if let Some(f) = known.check(input, out == expected, detail) {
            failures.push(f);
        }
    }
    assert_no_failures("remove_dot_segments.jsonl", cases.len(), &failures);
}

#[test]
fn conformance_percent_decode() {
    let Some(cases) = load("percent_decode.jsonl") else {
        return;
    };
    let known = KnownDeviations::for_file("percent_decode.jsonl");
    let mut failures = Vec::new();
    for (n, case) in cases.iter().enumerate() {
        let input = field(case, "input").expect("input");
        let expected = field(case, "expected_hex");
        let actual = pct::decode(input.as_bytes())
            .ok()
            .map(|bytes| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>());
        let detail = || format!("case {n}: expected {expected:?}, got {actual:?}");
        if let Some(f) = known.check(input, actual.as_deref() == expected, detail) {
            failures.push(f);
        }
    }
    assert_no_failures("percent_decode.jsonl", cases.len(), &failures);
}
