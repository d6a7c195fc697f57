//! Property tests for the parser, the component model and resolution, with
//! generators built from the RFC 3986 ABNF (not random strings).

use proptest::prelude::*;
use urikey::uri::{resolve, Components, HostKind, UriRef};

const UNRESERVED: &str = "[A-Za-z0-9._~-]";
const SUB_DELIMS: &str = "[!$&'()*+,;=]";
const PCT: &str = "%[0-9A-Fa-f]{2}";

fn alt(parts: &[&str]) -> String {
    format!("({})", parts.join("|"))
}

fn pchar() -> String {
    alt(&[UNRESERVED, PCT, SUB_DELIMS, "[:@]"])
}

/// `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`
fn scheme() -> impl Strategy<Value = String> {
    "[A-Za-z][A-Za-z0-9+.-]{0,6}"
}

/// `userinfo = *( unreserved / pct-encoded / sub-delims / ":" )`
fn userinfo() -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!(
        "{}{{0,6}}",
        alt(&[UNRESERVED, PCT, SUB_DELIMS, ":"])
    ))
    .expect("regex")
}

fn h16(v: u16) -> String {
    format!("{v:x}")
}

/// Any of the nine `IPv6address` forms: eight pieces, optionally with a
/// run compressed to `::` and optionally an IPv4 tail.
fn ipv6() -> impl Strategy<Value = String> {
    (
        prop::array::uniform8(any::<u16>()),
        0usize..9,
        0usize..9,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(p, a, b, v4_tail, upper)| {
            let (lo, hi) = (a.min(b), a.max(b));
            let mut pieces: Vec<String> = p.iter().map(|&v| h16(v)).collect();
            if v4_tail {
                let [x, y] = p[6].to_be_bytes();
                let [z, w] = p[7].to_be_bytes();
                pieces.truncate(6);
                pieces.push(format!("{x}.{y}.{z}.{w}"));
            }
            let n = pieces.len();
            let (lo, hi) = (lo.min(n), hi.min(n));
            let text = if hi > lo {
                let head = pieces[..lo].join(":");
                let tail = pieces[hi..].join(":");
                // A compressed run must stand for at least one 16-bit piece;
                // an IPv4 tail counts as two, so compressing it alone is fine.
                format!("{head}::{tail}")
            } else {
                pieces.join(":")
            };
            if upper {
                text.to_uppercase()
            } else {
                text
            }
        })
}

fn dec_octet() -> impl Strategy<Value = String> {
    (0u16..256).prop_map(|v| v.to_string())
}

/// `host = IP-literal / IPv4address / reg-name`, with its kind.
fn host() -> impl Strategy<Value = (String, HostKind)> {
    prop_oneof![
        proptest::string::string_regex(&format!("{}{{0,8}}", alt(&[UNRESERVED, PCT, SUB_DELIMS])))
            .expect("regex")
            .prop_map(|h| {
                let kind = if urikey::uri::host::parse_ipv4(h.as_bytes()).is_some() {
                    HostKind::Ipv4
                } else {
                    HostKind::RegName
                };
                (h, kind)
            }),
        (dec_octet(), dec_octet(), dec_octet(), dec_octet())
            .prop_map(|(a, b, c, d)| (format!("{a}.{b}.{c}.{d}"), HostKind::Ipv4)),
        ipv6().prop_map(|h| (format!("[{h}]"), HostKind::Ipv6)),
        proptest::string::string_regex(&format!(
            "[vV][0-9A-Fa-f]{{1,3}}\\.{}{{1,5}}",
            alt(&[UNRESERVED, SUB_DELIMS, ":"])
        ))
        .expect("regex")
        .prop_map(|h| (format!("[{h}]"), HostKind::IpvFuture)),
    ]
}

fn segment(min: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("{}{{{min},5}}", pchar())).expect("regex")
}

fn segment_nz_nc() -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!(
        "{}{{1,5}}",
        alt(&[UNRESERVED, PCT, SUB_DELIMS, "@"])
    ))
    .expect("regex")
}

fn more_segments() -> impl Strategy<Value = String> {
    prop::collection::vec(segment(0), 0..4)
        .prop_map(|v| v.iter().map(|s| format!("/{s}")).collect())
}

/// `query` and `fragment = *( pchar / "/" / "?" )`
fn query() -> impl Strategy<Value = Option<String>> {
    prop::option::of(
        proptest::string::string_regex(&format!("{}{{0,8}}", alt(&[&pchar(), "[/?]"])))
            .expect("regex"),
    )
}

/// A generated reference and the components it was built from.
#[derive(Debug, Clone)]
struct Generated {
    text: String,
    scheme: Option<String>,
    authority: Option<(Option<String>, String, HostKind, Option<String>)>,
    path: String,
    query: Option<String>,
    fragment: Option<String>,
}

fn uri_reference() -> impl Strategy<Value = Generated> {
    let authority = (
        prop::option::of(userinfo()),
        host(),
        prop::option::of("[0-9]{0,6}"),
    );
    (
        prop::option::of(scheme()),
        prop::option::of(authority),
        0u8..4,
        segment(1),
        segment_nz_nc(),
        more_segments(),
        query(),
        query(),
    )
        .prop_map(
            |(scheme, authority, shape, seg_nz, seg_nc, rest, query, fragment)| {
                let authority = authority.map(|(u, (h, k), p)| (u, h, k, p));
                // The five path rules of §3.3.
                let path = match (&authority, shape) {
                    (Some(_), _) => rest,                                       // path-abempty
                    (None, 0) => String::new(),                                 // path-empty
                    (None, 1) => format!("/{seg_nz}{rest}"),                    // path-absolute
                    (None, _) if scheme.is_some() => format!("{seg_nz}{rest}"), // path-rootless
                    (None, _) => format!("{seg_nc}{rest}"),                     // path-noscheme
                };
                let mut text = String::new();
                if let Some(s) = &scheme {
                    text += &format!("{s}:");
                }
                if let Some((u, h, _, p)) = &authority {
                    text += "//";
                    if let Some(u) = u {
                        text += &format!("{u}@");
                    }
                    text += h;
                    if let Some(p) = p {
                        text += &format!(":{p}");
                    }
                }
                text += &path;
                if let Some(q) = &query {
                    text += &format!("?{q}");
                }
                if let Some(f) = &fragment {
                    text += &format!("#{f}");
                }
                Generated {
                    text,
                    scheme,
                    authority,
                    path,
                    query,
                    fragment,
                }
            },
        )
}

fn absolute_uri() -> impl Strategy<Value = String> {
    (scheme(), uri_reference()).prop_map(|(s, g)| {
        let mut text = g.text;
        if g.scheme.is_none() {
            // Give it a scheme; a path-noscheme stays valid as path-rootless.
            text = format!("{s}:{text}");
        }
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn prop_generated_references_parse_into_their_components(g in uri_reference()) {
        let u = UriRef::parse(&g.text).map_err(|e| TestCaseError::fail(format!("{}: {e}", g.text)))?;
        prop_assert_eq!(u.scheme(), g.scheme.as_deref());
        match &g.authority {
            None => prop_assert!(!u.has_authority()),
            Some((user, host, kind, port)) => {
                prop_assert_eq!(u.userinfo(), user.as_deref());
                prop_assert_eq!(u.host(), Some(host.as_str()));
                prop_assert_eq!(u.host_kind(), Some(*kind));
                prop_assert_eq!(u.port(), port.as_deref());
            }
        }
        prop_assert_eq!(u.path(), g.path.as_str());
        prop_assert_eq!(u.query(), g.query.as_deref());
        prop_assert_eq!(u.fragment(), g.fragment.as_deref());
        prop_assert_eq!(u.to_string(), g.text.clone());
    }

    #[test]
    fn prop_owned_model_round_trips(g in uri_reference()) {
        let c = Components::parse(&g.text).unwrap();
        let text = c.to_string();
        prop_assert_eq!(&text, &g.text);
        prop_assert_eq!(Components::parse(&text).unwrap(), c);
    }

    #[test]
    fn prop_owned_model_built_from_any_text_parses(
        path in prop::collection::vec(".{0,6}", 0..4),
        query in prop::option::of(".{0,6}"),
        host in prop::option::of(".{0,6}"),
    ) {
        let mut c = Components::new();
        c.set_host(host.as_deref());
        c.set_path_segments(&path);
        c.set_query(query.as_deref());
        let text = c.to_string();
        let back = Components::parse(&text).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(back.to_string(), text);
    }

    #[test]
    fn prop_resolution_identities(base in absolute_uri(), r in uri_reference(), frag in query()) {
        let b = UriRef::parse(&base).unwrap();
        let without_fragment = b.without_fragment();
        // §5.2.2: an empty reference gives the base without its fragment,
        // once dot-segments are out of the picture.
        let empty = resolve(&b, &UriRef::parse("").unwrap()).unwrap();
        prop_assert_eq!(&empty, without_fragment);
        // A fragment-only reference keeps everything but the fragment.
        if let Some(f) = &frag {
            let target = resolve(&b, &UriRef::parse(&format!("#{f}")).unwrap()).unwrap();
            prop_assert_eq!(target, format!("{without_fragment}#{f}"));
        }
        // Every target is a valid URI with the reference's scheme, or the
        // base's, and the reference's fragment.
        let rr = UriRef::parse(&r.text).unwrap();
        let target = resolve(&b, &rr).unwrap();
        let t = UriRef::parse(&target).map_err(|e| TestCaseError::fail(format!("{target}: {e}")))?;
        prop_assert_eq!(t.scheme(), Some(r.scheme.as_deref().unwrap_or(b.scheme().unwrap())));
        prop_assert_eq!(t.fragment(), rr.fragment());
        // Once through remove_dot_segments, a target is a fixed point.
        let fixed = resolve(&b, &t).unwrap();
        let again = resolve(&b, &UriRef::parse(&fixed).unwrap()).unwrap();
        prop_assert_eq!(&again, &fixed);
        let again = resolve(&t, &UriRef::parse("").unwrap()).unwrap();
        prop_assert_eq!(again, t.without_fragment());
    }
}

/// Cases per property: 256 by default, `PROPTEST_CASES` to change it.
fn cases() -> u32 {
    crate::common::proptest_cases(256)
}

/// The fast parser, when it answers, agrees with the precise one.
fn check_fast_agrees(bytes: &[u8]) -> Result<(), TestCaseError> {
    use urikey::uri::parsers::{parse_fast, parse_precise};
    if let Some(fast) = parse_fast(bytes) {
        prop_assert_eq!(
            Ok(fast),
            parse_precise(bytes),
            "{:?}",
            String::from_utf8_lossy(bytes)
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn prop_fast_parser_agrees_with_precise_parser(
        g in uri_reference(),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(b":/?#[]@%.x1 \x7f".to_vec()),
    ) {
        check_fast_agrees(g.text.as_bytes())?;
        // One byte inserted, and one byte removed, somewhere in a valid reference.
        let mut bytes = g.text.into_bytes();
        let i = at.index(bytes.len() + 1);
        bytes.insert(i, byte);
        check_fast_agrees(&bytes)?;
        bytes.remove(at.index(bytes.len()));
        check_fast_agrees(&bytes)?;
    }
}
