//! Fuzz target `fluent`: differential test against fluent-uri's
//! `normalize()` on the RFC 3986 §6.2.2 subset both implement.
//!
//! fluent-uri's normalization (0.3) is our `syntax` profile plus
//! `ipv6-canonical`: case of scheme and host, escapes (decode unreserved,
//! upper-case the rest), dot segments in hierarchical paths, an empty port,
//! and the RFC 5952 form of an IPv6 literal. It also applies these to
//! relative references, which we key with the case and escape rules only
//! (§6.1 compares references after resolution), so only references with a
//! scheme are compared, and only where both parsers accept the line.

#![no_main]

use libfuzzer_sys::fuzz_target;
use urikey::uri::key::{KeyScratch, Keyer};
use urikey::uri::normalize::{Flag, Normalizer, Profile};

fuzz_target!(|data: &[u8]| {
    let Ok(line) = core::str::from_utf8(data) else {
        return;
    };
    let Ok(theirs) = fluent_uri::UriRef::parse(line) else {
        return;
    };
    if !theirs.has_scheme() {
        return;
    }
    let keyer = Keyer::new(Normalizer::profile(Profile::Syntax).with(Flag::Ipv6Canonical));
    let mut scratch = KeyScratch::default();
    let Ok(ours) = keyer.uri_key(data, &mut scratch) else {
        return;
    };
    let theirs = theirs.normalize();
    assert_eq!(
        ours.as_str(),
        theirs.as_str(),
        "urikey and fluent-uri normalize {line:?} differently"
    );
});
