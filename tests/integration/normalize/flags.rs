//! One test per flag: what it changes, and that nothing else changes it.

use super::*;

fn only(flag: Flag) -> Normalizer {
    Normalizer::from_flags(Flags::EMPTY.with(flag))
}

fn check(flag: Flag, cases: &[(&str, &str)]) {
    let n = only(flag);
    for (input, want) in cases {
        assert_eq!(norm(&n, input), *want, "{flag} on {input:?}");
    }
}

#[test]
fn lowercase_scheme() {
    check(
        Flag::LowercaseScheme,
        &[("HtTp://A/B", "http://A/B"), ("X+Y.Z-1:x", "x+y.z-1:x")],
    );
}

#[test]
fn lowercase_host() {
    check(
        Flag::LowercaseHost,
        &[
            ("http://ExAmple.COM/PaTh?Q#F", "http://example.com/PaTh?Q#F"),
            ("http://%C3%A9X.COM/", "http://%C3%A9x.com/"),
            ("http://%c3%a9X.COM/", "http://%c3%a9x.com/"),
            ("http://[ABCD::EF]/", "http://[abcd::ef]/"),
            ("http://[vA.B:C]/", "http://[va.b:c]/"),
            ("//USER@HOST/", "//USER@host/"),
        ],
    );
}

#[test]
fn uppercase_escapes() {
    check(
        Flag::UppercaseEscapes,
        &[
            ("http://h%2e/%7e%2f?%3d#%ff", "http://h%2E/%7E%2F?%3D#%FF"),
            ("%61", "%61"),
        ],
    );
}

#[test]
fn decode_unreserved() {
    check(
        Flag::DecodeUnreserved,
        &[
            (
                "http://%41%62@%45x.com/%7e%2d%2E%5F?%30#%7A",
                "http://Ab@Ex.com/~-._?0#z",
            ),
            (
                "http://h/%2F%3F%23%26%3D%25%2B%20%00%7F%80%ff",
                "http://h/%2F%3F%23%26%3D%25%2B%20%00%7F%80%ff",
            ),
            ("%2e%2E/x", "../x"),
        ],
    );
}

#[test]
fn remove_dot_segments() {
    check(
        Flag::RemoveDotSegments,
        &[
            ("http://a/b/c/./../../g", "http://a/g"),
            ("http://a/b/../../..", "http://a/"),
            ("foo:a/../b", "foo:a/../b"),
            ("foo:/.//x", "foo:/.//x"),
            ("foo:/a/..//x", "foo:/.//x"),
            ("http://a/%2E%2E/b", "http://a/%2E%2E/b"),
            ("../a/./b", "../a/./b"),
            ("http://a/b/.", "http://a/b/"),
            ("mid/content=5/../6", "mid/content=5/../6"),
        ],
    );
}

#[test]
fn remove_empty_port() {
    check(
        Flag::RemoveEmptyPort,
        &[
            ("http://a:/", "http://a/"),
            ("foo://a:", "foo://a"),
            ("http://a:80/", "http://a:80/"),
        ],
    );
}

#[test]
fn remove_default_port() {
    check(
        Flag::RemoveDefaultPort,
        &[
            ("http://a:80/", "http://a/"),
            ("http://a:080/", "http://a/"),
            ("HTTPS://a:443/", "HTTPS://a/"),
            ("https://a:80/", "https://a:80/"),
            ("ws://a:80/", "ws://a/"),
            ("wss://a:443/", "wss://a/"),
            ("ftp://a:21/", "ftp://a/"),
            ("foo://a:80/", "foo://a:80/"),
            ("http://a:8080/", "http://a:8080/"),
            ("http://a:/", "http://a:/"),
        ],
    );
}

#[test]
fn empty_path_slash() {
    check(
        Flag::EmptyPathSlash,
        &[
            ("http://a", "http://a/"),
            ("https://a?q", "https://a/?q"),
            ("ftp://a#f", "ftp://a/#f"),
            ("foo://a", "foo://a"),
            ("//a", "//a"),
            ("http:x", "http:x"),
        ],
    );
}

#[test]
fn remove_fragment() {
    check(
        Flag::RemoveFragment,
        &[
            ("http://a/#x", "http://a/"),
            ("http://a/#", "http://a/"),
            ("a#b", "a#b"),
        ],
    );
}

#[test]
fn ipv6_canonical() {
    check(
        Flag::Ipv6Canonical,
        &[
            ("http://[0000:0000:0000::1]/", "http://[::1]/"),
            (
                "http://[2001:DB8:0:0:1:0:0:1]/",
                "http://[2001:db8::1:0:0:1]/",
            ),
            (
                "http://[2001:db8:0:1:1:1:1:1]/",
                "http://[2001:db8:0:1:1:1:1:1]/",
            ),
            (
                "http://[0:0:0:0:0:ffff:192.0.2.1]/",
                "http://[::ffff:192.0.2.1]/",
            ),
            ("http://[::192.0.2.1]/", "http://[::c000:201]/"),
            ("http://[1:0:0:2:0:0:0:3]/", "http://[1:0:0:2::3]/"),
            ("http://[1:0:0:2:0:0:3:4]/", "http://[1::2:0:0:3:4]/"),
            ("http://[::]/", "http://[::]/"),
            ("http://[vF.X]/", "http://[vF.X]/"),
        ],
    );
}

#[test]
fn ipv4_canonical() {
    check(
        Flag::Ipv4Canonical,
        &[
            ("http://0x7f.1/", "http://127.0.0.1/"),
            ("http://2130706433/", "http://127.0.0.1/"),
            ("https://0177.0.0.1/", "https://127.0.0.1/"),
            ("http://127.1/", "http://127.0.0.1/"),
            ("http://192.168.257/", "http://192.168.1.1/"),
            ("http://1.2.3.4./", "http://1.2.3.4/"),
            ("http://0x100000000/", "http://0x100000000/"),
            ("http://256.1.1.1/", "http://256.1.1.1/"),
            ("http://1.2.3.4.5/", "http://1.2.3.4.5/"),
            ("http://09.1/", "http://09.1/"),
            ("http://example.com/", "http://example.com/"),
            ("foo://0x7f.1/", "foo://0x7f.1/"),
        ],
    );
}

#[test]
fn idna() {
    check(
        Flag::Idna,
        &[
            ("http://b%C3%BCcher.de/", "http://xn--bcher-kva.de/"),
            ("http://B%C3%9Ccher.DE/", "http://xn--bcher-kva.de/"),
            ("http://bucher.de/", "http://bucher.de/"),
            ("http://%FF.de/", "http://%FF.de/"),
            ("http://%C3%BC%2F.de/", "http://%C3%BC%2F.de/"),
        ],
    );
}

#[test]
fn remove_trailing_host_dot() {
    check(
        Flag::RemoveTrailingHostDot,
        &[
            ("http://a.com./", "http://a.com/"),
            ("http://./", "http://./"),
        ],
    );
}

/// Issue 13 item 1: only the single root dot of a DNS name goes.
#[test]
fn trailing_host_dot_only_the_root_dot() {
    let crawl = Normalizer::profile(Profile::Crawl);
    for (input, want) in [
        ("http://example.com../a", "http://example.com../a"),
        ("http://example.com.../a", "http://example.com.../a"),
        ("http://example.com./a", "http://example.com/a"),
        ("HTTP://Example.COM../", "http://example.com../"),
        ("http://../", "http://../"),
    ] {
        assert_eq!(norm(&crawl, input), want, "{input}");
    }
    let c = Keyer::new(crawl);
    assert_ne!(
        key(&c, b"http://example.com../a"),
        key(&c, b"http://example.com/a")
    );
}

/// Issue 13 item 2: the WHATWG IPv4 reader allows one trailing dot,
/// not two.
#[test]
fn ipv4_form_with_two_trailing_dots_is_no_address() {
    let crawl = Normalizer::profile(Profile::Crawl);
    assert_eq!(norm(&crawl, "http://127.1../"), "http://127.1../");
    assert_eq!(norm(&crawl, "http://127.1./"), "http://127.0.0.1/");
    assert_eq!(
        norm(&crawl, "http://0x7f.0.0.1../x"),
        "http://0x7f.0.0.1../x"
    );
}

/// Issue 13 item 3: an unknown scheme's reg-name need not be a DNS
/// name, so its trailing dot stays.
#[test]
fn trailing_host_dot_only_for_dns_schemes() {
    let crawl = Normalizer::profile(Profile::Crawl);
    assert_eq!(norm(&crawl, "foo://a./x"), "foo://a./x");
    assert_eq!(norm(&crawl, "gopher://a./x"), "gopher://a/x");
    assert_eq!(norm(&crawl, "https://a./x"), "https://a/x");
    let c = Keyer::new(crawl);
    assert_ne!(key(&c, b"foo://a./x"), key(&c, b"foo://a/x"));
}

/// Issue 13 item 4: dot segments go only in hierarchical paths.
#[test]
fn dot_segments_stay_in_rootless_paths() {
    for p in Profile::ALL.iter().copied().filter(|p| *p != Profile::None) {
        let n = Normalizer::profile(p);
        for (input, want) in [
            ("urn:example:a/../b", "urn:example:a/../b"),
            ("data:text/plain,a/../b", "data:text/plain,a/../b"),
            ("foo:./a", "foo:./a"),
            ("foo:/a/../b", "foo:/b"),
            ("foo://h/a/../b", "foo://h/b"),
            ("foo:/..//x", "foo:/.//x"),
        ] {
            assert_eq!(norm(&n, input), want, "{input} {p:?}");
        }
    }
}

/// Issue 13 item 5: a port is a decimal number, whatever the scheme.
#[test]
fn port_leading_zeros() {
    check(
        Flag::PortLeadingZeros,
        &[
            ("http://a:0081/", "http://a:81/"),
            ("foo://a:007", "foo://a:7"),
            ("http://a:000/", "http://a:0/"),
            ("http://a:0/", "http://a:0/"),
            ("http://a:81/", "http://a:81/"),
            ("http://a:/", "http://a:/"),
            ("//a:01/", "//a:01/"),
        ],
    );
    let rfc = Keyer::new(Normalizer::profile(Profile::Rfc));
    assert_eq!(key(&rfc, b"http://a:0081/x"), key(&rfc, b"http://a:81/x"));
    assert_eq!(key(&rfc, b"http://a:00080/x").unwrap(), b"http://a/x");
    let syntax = Keyer::new(Normalizer::profile(Profile::Syntax));
    assert_eq!(key(&syntax, b"http://a:0081/").unwrap(), b"http://a:0081/");
}

#[test]
fn remove_empty_query() {
    check(
        Flag::RemoveEmptyQuery,
        &[
            ("http://a/?", "http://a/"),
            ("http://a/?#f", "http://a/#f"),
            ("http://a/?x", "http://a/?x"),
        ],
    );
}

#[test]
fn sort_query() {
    check(
        Flag::SortQuery,
        &[
            ("http://a/?b=2&a=1&a=0", "http://a/?a=0&a=1&b=2"),
            ("http://a/?b=%2B&a=+", "http://a/?a=+&b=%2B"),
            ("http://a/?", "http://a/?"),
            ("http://a/?&&b&", "http://a/?b"),
            ("http://a/?&", "http://a/"),
        ],
    );
}

#[test]
fn remove_query_params() {
    let n = Normalizer::from_flags(Flags::EMPTY).remove_query_params(["utm_*", "ref"]);
    assert_eq!(
        norm(&n, "http://a/?utm_source=x&a=1&ref=2&refx=3&utm_=4"),
        "http://a/?a=1&refx=3"
    );
    assert_eq!(norm(&n, "http://a/?utm_source=x"), "http://a/");
    assert_eq!(norm(&n, "http://a/?"), "http://a/?");
}

#[test]
fn strip_session_ids() {
    check(
        Flag::StripSessionIds,
        &[
            (
                "http://a/x;jsessionid=AB12?b=1&PHPSESSID=2&sid=3",
                "http://a/x?b=1",
            ),
            ("http://a/x;JSESSIONID=1/y;v=2", "http://a/x/y;v=2"),
            ("http://a/?ASPSESSIONIDQQGG=1&c", "http://a/?c"),
            ("http://a/?sidebar=1", "http://a/?sidebar=1"),
        ],
    );
}

#[test]
fn remove_www() {
    check(
        Flag::RemoveWww,
        &[
            ("http://www.a.com/", "http://a.com/"),
            ("http://www.www.a/", "http://a/"),
            ("http://www./", "http://www./"),
            ("http://wwwx.a/", "http://wwwx.a/"),
        ],
    );
}

#[test]
fn trailing_slash() {
    check(
        Flag::RemoveTrailingSlash,
        &[
            ("http://a/b/", "http://a/b"),
            ("http://a/", "http://a/"),
            ("http://a/b//", "http://a/b"),
        ],
    );
    check(
        Flag::AddTrailingSlash,
        &[
            ("http://a/b", "http://a/b/"),
            ("http://a/b.html", "http://a/b.html"),
            ("http://a/", "http://a/"),
            ("http://a", "http://a"),
        ],
    );
}

#[test]
fn remove_duplicate_slashes() {
    check(
        Flag::RemoveDuplicateSlashes,
        &[
            ("http://a//b///c/", "http://a/b/c/"),
            ("foo:/.//x", "foo:/.//x"),
        ],
    );
}

#[test]
fn remove_directory_index() {
    check(
        Flag::RemoveDirectoryIndex,
        &[
            ("http://a/b/index.html", "http://a/b/"),
            ("http://a/Default.asp?x", "http://a/?x"),
            ("http://a/b/index.html2", "http://a/b/index.html2"),
        ],
    );
}

/// Things no profile and no flag may ever do.
#[test]
fn never_list() {
    let all = Flag::ALL
        .iter()
        .fold(Flags::EMPTY, |f, x| f.with(*x))
        .without(Flag::AddTrailingSlash);
    let n = Normalizer::from_flags(all);
    let cases = [
        (
            "http://a/%2F%3F%23%26%3D%25%5B%5D%40%3A%21%24%27%28%29%2A%2B%2C%3B",
            "http://a/%2F%3F%23%26%3D%25%5B%5D%40%3A%21%24%27%28%29%2A%2B%2C%3B",
        ),
        ("http://a/%00%1F%7F%80%FF", "http://a/%00%1F%7F%80%FF"),
        (
            "http://US%45R:Pw@a/PaTh?QuErY=A+B",
            "http://USER:Pw@a/PaTh?QuErY=A+B",
        ),
    ];
    for profile in Profile::ALL {
        for (input, _) in cases {
            let out = norm(&Normalizer::profile(*profile), input);
            assert!(!out.contains(' '), "{out}");
            for keep in [
                "PaTh", "QuErY", "Pw", "%2F", "%3F", "%23", "%25", "%00", "%80", "+",
            ] {
                assert_eq!(
                    input.contains(keep),
                    out.contains(keep),
                    "{profile:?} {input} -> {out}"
                );
            }
        }
    }
    for (input, want) in cases {
        assert_eq!(norm(&n, input), want);
    }
}

#[test]
fn flag_names_round_trip() {
    for f in Flag::ALL {
        assert_eq!(Flag::from_name(f.name()), Some(*f));
    }
    for p in Profile::ALL {
        assert_eq!(Profile::from_name(p.name()), Some(*p));
    }
    assert_eq!(Flag::ALL.len(), 23);
}
