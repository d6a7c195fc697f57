//! Parser unit tests: components, null versus empty, and error positions.

use super::*;

#[track_caller]
fn fail(input: &str, index: usize, kind: ParseErrorKind) {
    let err = UriRef::parse(input).expect_err(input);
    assert_eq!((err.index(), err.kind()), (index, kind), "{input}");
}

type Parts<'a> = (
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
);

#[track_caller]
fn parts(input: &str) -> Parts<'_> {
    let u = UriRef::parse(input).expect(input);
    (
        u.scheme(),
        u.userinfo(),
        u.host(),
        u.port(),
        u.path(),
        u.query(),
        u.fragment(),
    )
}

#[test]
fn parse_components_rfc_section_3() {
    assert_eq!(
        parts("foo://example.com:8042/over/there?name=ferret#nose"),
        (
            Some("foo"),
            None,
            Some("example.com"),
            Some("8042"),
            "/over/there",
            Some("name=ferret"),
            Some("nose")
        )
    );
    assert_eq!(
        parts("urn:example:animal:ferret:nose"),
        (
            Some("urn"),
            None,
            None,
            None,
            "example:animal:ferret:nose",
            None,
            None
        )
    );
}

#[test]
fn parse_null_versus_empty() {
    assert_eq!(
        parts("http://h?"),
        (Some("http"), None, Some("h"), None, "", Some(""), None)
    );
    assert_eq!(
        parts("http://h"),
        (Some("http"), None, Some("h"), None, "", None, None)
    );
    assert_eq!(
        parts("file:///x"),
        (Some("file"), None, Some(""), None, "/x", None, None)
    );
    assert_eq!(
        parts("http://@:#"),
        (
            Some("http"),
            Some(""),
            Some(""),
            Some(""),
            "",
            None,
            Some("")
        )
    );
    assert_eq!(parts(""), (None, None, None, None, "", None, None));
    assert_eq!(parts("//"), (None, None, Some(""), None, "", None, None));
}

#[test]
fn parse_host_kinds_first_match_wins() {
    let kind = |s: &str| UriRef::parse(s).unwrap().host_kind();
    assert_eq!(kind("http://127.0.0.1/"), Some(HostKind::Ipv4));
    assert_eq!(kind("http://256.0.0.1/"), Some(HostKind::RegName));
    assert_eq!(kind("http://127.0.0.01/"), Some(HostKind::RegName));
    assert_eq!(kind("http://[::1]/"), Some(HostKind::Ipv6));
    assert_eq!(kind("http://[v7.aB]/"), Some(HostKind::IpvFuture));
    assert_eq!(kind("mailto:a@b"), None);
    assert_eq!(
        UriRef::parse("http://[::1]:99999").unwrap().port_u16(),
        None
    );
    assert_eq!(UriRef::parse("http://h:080").unwrap().port_u16(), Some(80));
}

#[test]
fn parse_error_positions() {
    use ParseErrorKind as K;
    fail("://x", 0, K::InvalidScheme);
    fail("1a:b", 0, K::InvalidScheme);
    fail("a_b:c", 1, K::InvalidScheme);
    fail("http://a b/", 8, K::InvalidHost);
    fail("http://u b@h/", 8, K::InvalidUserinfo);
    fail("http://h:80x/", 11, K::InvalidPort);
    fail("http://h:8:9/", 10, K::InvalidPort);
    fail("http://h/a b", 10, K::InvalidPath);
    fail("http://h/%zz", 9, K::InvalidPercentEncoding);
    fail("http://h/%4", 9, K::InvalidPercentEncoding);
    fail("http://h/?a b", 11, K::InvalidQuery);
    fail("http://h/#a#b", 11, K::InvalidFragment);
    fail("http://[::1/", 11, K::UnclosedIpLiteral);
    fail("http://[::g]/", 10, K::InvalidIpv6);
    fail("http://[v.x]/", 9, K::InvalidIpvFuture);
    fail("http://[::1]x/", 12, K::InvalidHost);
    fail("http://a@b@c/", 10, K::InvalidHost);
    fail("http://h/é", 9, K::InvalidPath);
    fail("a:b\n", 3, K::InvalidPath);
}

#[test]
fn parse_bytes_rejects_non_ascii_at_offset() {
    let err = UriRef::parse_bytes(b"http://h/\xff").unwrap_err();
    assert_eq!((err.index(), err.kind()), (9, ParseErrorKind::InvalidPath));
    assert!(UriRef::parse_bytes(b"http://h/ok").is_ok());
}

#[test]
fn parse_error_display_is_short_and_lowercase() {
    let err = UriRef::parse("http://h:x").unwrap_err();
    assert_eq!(err.to_string(), "port is not digits at byte 9");
    assert_eq!(err.kind().name(), "invalid-port");
}
