//! The fast tier borrows its key from the line when nothing changes.

use super::*;

/// The key, and whether it is (a prefix of) the input itself.
fn borrowed(c: &Keyer, input: &str) -> (String, bool) {
    let mut scratch = KeyScratch::default();
    let key = c.uri_key(input.as_bytes(), &mut scratch).expect(input);
    (s(&key), key.as_ptr() == input.as_ptr())
}

#[test]
fn canonical_lines_are_their_own_key() {
    for p in [Profile::Syntax, Profile::Rfc, Profile::Crawl, Profile::None] {
        let c = Keyer::new(Normalizer::profile(p));
        for u in [
            "http://example.com/",
            "https://www.example.com/a/b.html?x=1&y=%2F",
            "https://a.b-c_d~e.io:8080/%E2%82%AC/..a/.b/a../?q=/./&r=..",
            "http://example.com/.well-known/x",
            "https://example.com/a%20b?%3D",
            "http://x1.example/path",
        ] {
            assert_eq!(borrowed(&c, u), (u.to_string(), true), "{u} {p:?}");
        }
    }
}

#[test]
fn a_removed_fragment_or_empty_query_leaves_a_prefix() {
    let crawl = Keyer::new(Normalizer::profile(Profile::Crawl));
    for (u, want) in [
        ("http://a.com/x#f", "http://a.com/x"),
        ("http://a.com/x?q#f", "http://a.com/x?q"),
        ("http://a.com/x#", "http://a.com/x"),
        ("http://a.com/x?#f", "http://a.com/x"),
        ("http://a.com/x?", "http://a.com/x"),
    ] {
        assert_eq!(borrowed(&crawl, u).0, want, "{u}");
    }
    assert!(borrowed(&crawl, "http://a.com/x?q#f").1);
}

#[test]
fn changed_lines_are_written() {
    let c = Keyer::default();
    for (u, want) in [
        ("HTTP://example.com/", "http://example.com/"),
        ("http://Example.com/", "http://example.com/"),
        ("http://example.com", "http://example.com/"),
        ("http://example.com?q", "http://example.com/?q"),
        ("http://example.com:/", "http://example.com/"),
        ("http://example.com:80/", "http://example.com/"),
        ("https://example.com:443/", "https://example.com/"),
        ("http://example.com:080/", "http://example.com/"),
        ("http://example.com/%7e", "http://example.com/~"),
        ("http://example.com/%2f", "http://example.com/%2F"),
        ("http://example.com/%4A", "http://example.com/J"),
        ("http://example.com/.", "http://example.com/"),
        ("http://example.com/a/./b", "http://example.com/a/b"),
        ("http://example.com/a/../b", "http://example.com/b"),
        ("http://example.com/..?x", "http://example.com/?x"),
        ("http://example.com/.#x", "http://example.com/#x"),
    ] {
        assert_eq!(borrowed(&c, u), (want.to_string(), false), "{u}");
    }
}
