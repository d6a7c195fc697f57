//! Two references split at the first newline: resolution never panics, its
//! result is a valid URI, and once through remove_dot_segments a target is a
//! fixed point.
#![no_main]

use libfuzzer_sys::fuzz_target;
use urikey::uri::{resolve, UriRef};

fuzz_target!(|data: &[u8]| {
    let Some(nl) = data.iter().position(|&b| b == b'\n') else { return };
    let (Ok(base), Ok(reference)) = (UriRef::parse_bytes(&data[..nl]), UriRef::parse_bytes(&data[nl + 1..]))
    else {
        return;
    };
    let Ok(target) = resolve(&base, &reference) else {
        assert!(base.is_relative());
        return;
    };
    let t = UriRef::parse(&target).expect("a resolved target must parse");
    assert!(!t.is_relative());
    let fixed = resolve(&base, &t).expect("absolute base");
    let again = resolve(&base, &UriRef::parse(&fixed).expect("parses")).expect("absolute base");
    assert_eq!(again, fixed);
});
