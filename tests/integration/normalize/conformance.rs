use super::*;

#[test]
fn normalize_jsonl() {
    let Some(cases) = crate::common::load("normalize.jsonl") else {
        return;
    };
    let known = crate::common::KnownDeviations::for_file("normalize.jsonl");
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let input = crate::common::field(case, "input").expect("input");
        let expected = crate::common::field(case, "expected").expect("expected");
        let profile = match crate::common::field(case, "level") {
            Some("syntax") => Profile::Syntax,
            Some("scheme") => Profile::Rfc,
            other => panic!("case {i}: unknown level {other:?}"),
        };
        let c = Keyer::new(Normalizer::profile(profile));
        let fast = key(&c, input.as_bytes()).map(|k| s(&k));
        let slow = slow_key(&c, input.as_bytes()).map(|k| s(&k));
        assert_eq!(
            fast, slow,
            "case {i}: fast and slow paths disagree on {input:?}"
        );
        let actual = fast.unwrap_or_else(|e| format!("error: {e}"));
        let detail = || format!("case {i}: expected {expected:?}, actual {actual:?}");
        if let Some(f) = known.check(input, actual == expected, detail) {
            failures.push(f);
        }
    }
    crate::common::assert_no_failures("normalize.jsonl", cases.len(), &failures);
}
