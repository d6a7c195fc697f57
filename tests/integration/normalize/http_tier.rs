//! The fast tier of `uri_key`, the one pass over `scheme://` lines: what it
//! covers, and that it writes exactly what the general parser and
//! normalizer write.

use super::*;
use proptest::prelude::*;
use proptest::sample::select;

/// The fast tier's key, `None` when it leaves the line to the general
/// path.
fn http_key(c: &Keyer, input: &[u8]) -> Option<Vec<u8>> {
    let mut scratch = KeyScratch::default();
    c.fast_tier_key(input, &mut scratch).map(|k| k.to_vec())
}

/// Every path agrees on `input`: the fast tier (when it covers the line)
/// with the CPU's scanner, with the portable one and without the mask
/// tier, the full `uri_key` and the general path.
fn check_all_paths(c: &Keyer, input: &[u8]) -> Result<(), TestCaseError> {
    let slow = slow_key(c, input);
    prop_assert_eq!(&key(c, input), &slow, "{:?}", s(input));
    let fast = http_key(c, input);
    if let Some(k) = fast.clone() {
        prop_assert_eq!(Ok(k), slow, "{:?}", s(input));
    }
    let portable = c.clone().with_portable_scan();
    prop_assert_eq!(http_key(&portable, input), fast.clone(), "{:?}", s(input));
    let avx2 = c.clone().without_mask_tier();
    prop_assert_eq!(http_key(&avx2, input), fast, "{:?}", s(input));
    Ok(())
}

#[test]
fn covers_the_common_variants() {
    let c = Keyer::default();
    for (input, want) in [
        ("HTTP://Example.COM/", "http://example.com/"),
        (
            "hTTpS://WWW.A-B.io/X/Y?Q=1#F",
            "https://www.a-b.io/X/Y?Q=1#F",
        ),
        ("http://a.com/%7euser/%7E", "http://a.com/~user/~"),
        (
            "http://a.com/%2f%2F%e2%82%ac?%3d#%5b",
            "http://a.com/%2F%2F%E2%82%AC?%3D#%5B",
        ),
        ("http://a.com/%41%62%2D%2e%5F", "http://a.com/Ab-._"),
        ("http://%41.com/", "http://a.com/"),
        ("http://a%2ecom/", "http://a.com/"),
        ("http://a.com/a/./b/../c/.", "http://a.com/a/c/"),
        ("http://a.com/%2E%2E/x/%2e", "http://a.com/x/"),
        ("http://a.com:/x", "http://a.com/x"),
        ("http://a.com:80/x", "http://a.com/x"),
        ("http://a.com:0080/x", "http://a.com/x"),
        ("https://a.com:443", "https://a.com/"),
        ("https://a.com:80/", "https://a.com:80/"),
        ("http://a.com", "http://a.com/"),
        ("http://a.com?q", "http://a.com/?q"),
        ("http://a.com#f", "http://a.com/#f"),
        ("http://1.2.3.4:8080/", "http://1.2.3.4:8080/"),
        ("http://a.com/?", "http://a.com/?"),
        ("http://a.com/#", "http://a.com/#"),
        ("http://a.com/", "http://a.com/"),
        ("FTP://A.com:21", "ftp://a.com/"),
        ("file://a.com/", "file://a.com/"),
        ("WSX://A.com:80", "wsx://a.com:80"),
        ("FILE:///%7eA/./b", "file:///~A/b"),
        ("gopher://h:70", "gopher://h"),
        ("Ab+1.-x://H/", "ab+1.-x://h/"),
        ("http:///x", "http:///x"),
        ("http://:80", "http:///"),
        ("http://u@/x", "http://u@/x"),
        ("ws://a.com:80/x", "ws://a.com/x"),
        ("WSS://a.com:443?x", "wss://a.com/?x"),
        ("wss://a.com:80/", "wss://a.com:80/"),
        ("http://U%7e:P%2f@A.com:80/", "http://U~:P%2F@a.com/"),
        ("http://u@a.com", "http://u@a.com/"),
        ("http://:@a.com/", "http://:@a.com/"),
        ("http://[::1]/", "http://[::1]/"),
        ("HTTP://[2001:DB8::1]:80", "http://[2001:db8::1]/"),
        (
            "http://u@[::FFFF:1.2.3.4]:8080/x",
            "http://u@[::ffff:1.2.3.4]:8080/x",
        ),
    ] {
        let got = http_key(&c, input.as_bytes()).map(|k| s(&k));
        assert_eq!(got.as_deref(), Some(want), "{input}");
        assert_eq!(s(&slow_key(&c, input.as_bytes()).unwrap()), want, "{input}");
    }
}

#[test]
fn leaves_the_rest_to_the_general_path() {
    let c = Keyer::default();
    for input in [
        "http:/a.com/",
        "http:a.com",
        "urn:a:b",
        "1http://a/",
        "://a/",
        "h_t://a/",
        "http://[v1.x]/",
        "http://[::1/]",
        "http://[::g]/",
        "http://[::1]x/",
        "http://u@[::1/",
        "http://a@b@c/",
        "http://u%zz@a.com/",
        "http://a!b.com/",
        "http://a%zz.com/",
        "http://a.com:8x/",
        "http://a.com/ x",
        "http://a.com/%4",
        "http://a.com/%",
        "http://a.com/\u{e9}",
        "http://a.com/#a#b",
        "http://a.com/?a[0]",
        "http://a.com/|",
    ] {
        assert_eq!(http_key(&c, input.as_bytes()), None, "{input}");
    }
    // The crawl host rules: escapes (idna), number-like hosts
    // (ipv4-canonical) and trailing dots go to the general path.
    let crawl = Keyer::new(Normalizer::profile(Profile::Crawl));
    for input in [
        "http://b%C3%BCcher.de/",
        "http://0x7f.1/",
        "http://a.1/",
        "http://a.com./",
    ] {
        assert_eq!(http_key(&crawl, input.as_bytes()), None, "{input}");
    }
    assert_eq!(
        http_key(&crawl, b"HTTP://A.com:80/x?#f")
            .map(|k| s(&k))
            .as_deref(),
        Some("http://a.com/x")
    );
    // IPv6 literals get the RFC 5952 text form under `crawl`.
    assert_eq!(
        http_key(&crawl, b"http://[2001:DB8:0:0:0:0:0:01]/")
            .map(|k| s(&k))
            .as_deref(),
        Some("http://[2001:db8::1]/")
    );
    // Opt-in flags turn the fast tier off; without flags it only checks.
    let sort = Keyer::new(Normalizer::default().with(Flag::SortQuery));
    assert_eq!(http_key(&sort, b"HTTP://a.com/"), None);
    let none = Keyer::new(Normalizer::profile(Profile::None));
    assert_eq!(
        http_key(&none, b"HTTP://A.com:80/%7e/./?#f"),
        Some(b"HTTP://A.com:80/%7e/./?#f".to_vec())
    );
    assert_eq!(http_key(&none, b"HTTP://A.com:80/%7x"), None);
}

/// Bytes that steer the writer into its corners.
const TRICKY: &[u8] = b"aAzZ09.-_~%2eE7fF:/?#@[]!$&'()*+,;= \"<>\\^`{|}\x7f\x80\xc3\xa9\t";

fn tricky_tail() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(prop_oneof![4 => select(TRICKY), 1 => any::<u8>()], 0..40)
}

fn cases() -> u32 {
    crate::common::proptest_cases(512)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn agrees_on_generated_references(u in props::uri_ref(), n in props::normalizers(), lenient in any::<bool>()) {
        let c = Keyer::new(n).with_lenient(lenient);
        check_all_paths(&c, u.as_bytes())?;
    }

    #[test]
    fn agrees_on_crawl_variants(
        u in "([hH][tT][tT][pP][sS]?|[fF][tT][pP]|[wW][sS][sS]?)://(([a-zA-Z0-9._~!$&'()*+,;=:-]|%[0-9a-fA-F]{2}){0,6}@)?(([a-zA-Z0-9._~-]|%[0-9a-fA-F]{2}){0,12}|\\[(::|[0-9a-fA-F]{1,4}:|:[0-9a-fA-F]{1,4}|1\\.2\\.3\\.4|[vV]1\\.x){1,5}\\])(:0*(21|80|443|[0-9]{0,5}))?(/(\\.|\\.\\.|%2[eE]|[a-zA-Z0-9._~!$&'()*+,;=:@-]|%[0-9a-fA-F]{2}){0,6}){0,4}(\\?([a-zA-Z0-9=&/?.]|%[0-9a-fA-F]{2}){0,8})?(#([a-z0-9/?]|%[0-9a-fA-F]{2}){0,4})?",
        n in props::normalizers(),
    ) {
        let c = Keyer::new(n);
        check_all_paths(&c, u.as_bytes())?;
    }

    #[test]
    fn covers_crawl_variants_under_rfc(
        u in "[hH][tT][tT][pP][sS]?://[a-zA-Z][a-zA-Z0-9-]{0,8}(\\.[a-zA-Z]{1,4}){0,2}(:0*(80|443|[0-9]{0,5}))?(/(\\.|\\.\\.|%2[eE]|[a-zA-Z0-9._~!$&'()*+,;=:@-]|%[0-9a-fA-F]{2}){0,6}){0,4}(\\?([a-zA-Z0-9=&/?.]|%[0-9a-fA-F]{2}){0,8})?(#([a-z0-9/?]|%[0-9a-fA-F]{2}){0,4})?",
    ) {
        for p in [Profile::Syntax, Profile::Rfc, Profile::Crawl] {
            let c = Keyer::new(Normalizer::profile(p));
            let k = http_key(&c, u.as_bytes());
            prop_assert!(k.is_some(), "{} not covered under {:?}", u, p);
            prop_assert_eq!(k.map(Ok), Some(slow_key(&c, u.as_bytes())), "{}", u);
        }
    }

    #[test]
    fn agrees_on_arbitrary_bytes(
        head in select(&["http://", "https://", "HTTP://", "hTtPs://", "http:", "http://a.com", "https://A.b:443/", "ftp://", "wS://", "http://[", "http://[::1", "http://u@", ""][..]),
        tail in tricky_tail(),
        n in props::normalizers(),
        lenient in any::<bool>(),
    ) {
        let mut input = head.as_bytes().to_vec();
        input.extend_from_slice(&tail);
        let c = Keyer::new(n).with_lenient(lenient);
        check_all_paths(&c, &input)?;
    }
}
