//! Property tests with generators built from the RFC 3986 ABNF.

use super::*;
use proptest::prelude::*;
use proptest::sample::select;

const UNRESERVED: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~";
const SUB_DELIMS: &[u8] = b"!$&'()*+,;=";

/// `pct-encoded`, any octet, random hex case.
fn pct_encoded() -> impl Strategy<Value = String> {
    (any::<u8>(), any::<bool>(), any::<bool>()).prop_map(|(b, up1, up2)| {
        let h = format!("{b:02X}");
        let mut c = h.chars();
        let (x, y) = (c.next().unwrap(), c.next().unwrap());
        let f = |ch: char, up: bool| if up { ch } else { ch.to_ascii_lowercase() };
        format!("%{}{}", f(x, up1), f(y, up2))
    })
}

/// A string of `extra` bytes, unreserved bytes and escapes.
fn chars_of(extra: &'static [u8], max: usize) -> impl Strategy<Value = String> {
    let one = prop_oneof![
        6 => select(UNRESERVED).prop_map(|b| (b as char).to_string()),
        2 => select(extra).prop_map(|b| (b as char).to_string()),
        1 => pct_encoded(),
    ];
    proptest::collection::vec(one, 0..max).prop_map(|v| v.concat())
}

fn scheme() -> impl Strategy<Value = String> {
    (
        select(&["http", "https", "ftp", "ws", "wss", "foo", "urn", "a+b.c-d"][..]),
        any::<u64>(),
    )
        .prop_map(|(s, case)| {
            s.chars()
                .enumerate()
                .map(|(i, c)| {
                    if case >> (i % 64) & 1 == 1 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect()
        })
}

fn ipv6() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(prop_oneof![3 => Just(0u16), 1 => any::<u16>()], 8),
        0usize..3,
        any::<bool>(),
    )
        .prop_map(|(p, form, upper)| {
            let text = match form {
                0 => p
                    .iter()
                    .map(|x| format!("{x:x}"))
                    .collect::<Vec<_>>()
                    .join(":"),
                1 => p
                    .iter()
                    .map(|x| format!("{x:04x}"))
                    .collect::<Vec<_>>()
                    .join(":"),
                _ => format!(
                    "{}:{}.{}.{}.{}",
                    p[..6]
                        .iter()
                        .map(|x| format!("{x:x}"))
                        .collect::<Vec<_>>()
                        .join(":"),
                    p[6] >> 8,
                    p[6] & 255,
                    p[7] >> 8,
                    p[7] & 255
                ),
            };
            let text = if upper {
                text.to_ascii_uppercase()
            } else {
                text
            };
            format!("[{text}]")
        })
}

fn host() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => proptest::collection::vec(chars_of(b"-", 8), 1..4).prop_map(|l| l.join(".")),
        1 => chars_of(SUB_DELIMS, 6),
        1 => (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(a, b, c, d)| format!("{a}.{b}.{c}.{d}")),
        1 => select(&["0x7f.1", "2130706433", "0177.0.0.1", "127.1", "1.2.3.4.", "www.example.com", "example.com.", "b%C3%BCcher.de"][..]).prop_map(String::from),
        1 => ipv6(),
        1 => Just("[v1F.aB:c]".to_string()),
    ]
}

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => chars_of(b"!$&'()*+,;=:@", 6),
        1 => Just(".".to_string()),
        1 => Just("..".to_string()),
        1 => Just("%2E".to_string()),
        1 => Just("index.html".to_string()),
        1 => Just("x;jsessionid=1".to_string()),
    ]
}

fn query() -> impl Strategy<Value = String> {
    let param = (
        select(&["a", "b", "utm_source", "sid", "PHPSESSID", "x"][..]),
        chars_of(b"!$'()*+,;:@/?", 4),
    )
        .prop_map(|(k, v)| format!("{k}={v}"));
    prop_oneof![
        2 => proptest::collection::vec(param, 0..4).prop_map(|v| v.join("&")),
        1 => chars_of(b"!$&'()*+,;=:@/?", 10),
    ]
}

/// A URI-reference (mostly URIs, some relative references).
pub fn uri_ref() -> impl Strategy<Value = String> {
    let authority = (
        proptest::option::weighted(0.15, chars_of(b"!$&'()*+,;=:", 6)),
        host(),
        proptest::option::weighted(
            0.3,
            select(&["", "80", "080", "443", "8080", "21", "0"][..]),
        ),
    )
        .prop_map(|(u, h, p)| {
            let mut a = String::new();
            if let Some(u) = u {
                a.push_str(&u);
                a.push('@');
            }
            a.push_str(&h);
            if let Some(p) = p {
                a.push(':');
                a.push_str(p);
            }
            a
        });
    (
        proptest::option::weighted(0.9, scheme()),
        proptest::option::weighted(0.8, authority),
        proptest::collection::vec(segment(), 0..5),
        any::<bool>(),
        proptest::option::weighted(0.4, query()),
        proptest::option::weighted(0.2, chars_of(b"!$&'()*+,;=:@/?", 6)),
    )
        .prop_map(|(scheme, auth, segs, absolute, q, f)| {
            let mut s = String::new();
            if let Some(sc) = &scheme {
                s.push_str(sc);
                s.push(':');
            }
            let has_auth = auth.is_some();
            if let Some(a) = auth {
                s.push_str("//");
                s.push_str(&a);
            }
            let mut path = segs.join("/");
            if (has_auth || absolute) && !segs.is_empty() {
                path.insert(0, '/');
            }
            if !has_auth && path.starts_with("//") {
                path.insert_str(0, "/.");
            }
            if scheme.is_none() && !has_auth {
                // path-noscheme: no ':' in the first segment.
                let first_end = path.find('/').unwrap_or(path.len());
                if path[..first_end].contains(':') {
                    path.insert_str(0, "./");
                }
            }
            s.push_str(&path);
            if let Some(q) = q {
                s.push('?');
                s.push_str(&q);
            }
            if let Some(f) = f {
                s.push('#');
                s.push_str(&f);
            }
            s
        })
        .prop_filter("valid URI-reference", |s| {
            urikey::uri::UriRef::parse(s).is_ok()
        })
}

fn flag_set() -> impl Strategy<Value = Normalizer> {
    any::<u32>().prop_map(|bits| {
        let flags = Flag::ALL
            .iter()
            .enumerate()
            .fold(Flags::EMPTY, |f, (i, x)| {
                if bits >> i & 1 == 1 {
                    f.with(*x)
                } else {
                    f
                }
            });
        let n = Normalizer::from_flags(flags);
        if flags.has(Flag::RemoveQueryParams) {
            n.remove_query_params(["utm_*", "x"])
        } else {
            n
        }
    })
}

pub fn normalizers() -> impl Strategy<Value = Normalizer> {
    prop_oneof![
        select(Profile::ALL).prop_map(Normalizer::profile),
        flag_set()
    ]
}

fn cases() -> u32 {
    crate::common::proptest_cases(512)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn idempotent(u in uri_ref(), n in normalizers()) {
        let once = norm(&n, &u);
        let twice = norm(&n, &once);
        prop_assert_eq!(&once, &twice, "input {:?} flags {:?}", u, n.flags());
    }

    #[test]
    fn fast_path_agrees_with_slow_path(u in uri_ref(), n in normalizers(), lenient in any::<bool>()) {
        let c = Keyer::new(n).with_lenient(lenient);
        prop_assert_eq!(key(&c, u.as_bytes()), slow_key(&c, u.as_bytes()));
    }

    #[test]
    fn fast_path_agrees_on_fast_shaped_input(
        u in "(https?|HTTP|[fF]ile|FILE|ftp|wss?|git)://[a-z0-9._~-]{0,12}(:[0-9]{0,4})?(/(\\.|\\.\\.|[a-zA-Z0-9._~!$&'()*+,;=:@-]|%[0-9a-fA-F]{2}){0,6}){0,4}(\\?([a-z0-9=&/?.]|%[0-9A-F]{2}){0,8})?(#[a-z0-9/?]{0,4})?",
        n in normalizers(),
    ) {
        let c = Keyer::new(n);
        if let Ok(k) = slow_key(&c, u.as_bytes()) {
            prop_assert_eq!(key(&c, u.as_bytes()), Ok(k), "{}", u);
        }
    }

    #[test]
    fn keeps_component_meaning(u in uri_ref()) {
        let n = Normalizer::default();
        let out = norm(&n, &u);
        let a = urikey::uri::UriRef::parse(&u).unwrap();
        let b = urikey::uri::UriRef::parse(&out).unwrap();
        prop_assert_eq!(a.scheme().map(str::to_ascii_lowercase), b.scheme().map(str::to_string));
        prop_assert_eq!(a.has_authority(), b.has_authority());
        prop_assert_eq!(a.userinfo().map(decode), b.userinfo().map(decode));
        prop_assert_eq!(a.query().map(decode), b.query().map(decode));
        prop_assert_eq!(a.fragment().map(decode), b.fragment().map(decode));
        prop_assert_eq!(a.host().map(|h| decode(h).to_ascii_lowercase()), b.host().map(|h| decode(h).to_ascii_lowercase()));
        let dotless = |p: &str| p.split('/').all(|s| s != "." && s != ".." && !s.to_ascii_lowercase().contains("%2e"));
        let slash_added = b.path() == "/" && a.path().is_empty();
        if (a.is_relative() || dotless(a.path())) && !slash_added {
            prop_assert_eq!(decode(a.path()), decode(b.path()));
        }
    }

    #[test]
    fn lenient_mapping_leaves_valid_lines_alone(u in uri_ref()) {
        let mut scratch = urikey::uri::lenient::LenientScratch::default();
        prop_assert!(!urikey::uri::lenient::map(u.as_bytes(), &mut scratch), "{}", u);
    }

    #[test]
    fn lenient_agrees_with_strict_on_valid_lines(u in uri_ref(), n in normalizers()) {
        let strict = Keyer::new(n.clone());
        let lenient = Keyer::new(n).with_lenient(true);
        prop_assert_eq!(key(&strict, u.as_bytes()), key(&lenient, u.as_bytes()));
    }

    #[test]
    fn equivalent_spellings_share_the_rfc_key(
        host in proptest::collection::vec("[a-z][a-z0-9]{0,5}", 1..4),
        segs in proptest::collection::vec("[a-zA-Z0-9_~-]{1,5}", 0..4),
        query in proptest::option::of("[a-z0-9=&]{0,8}"),
        https in any::<bool>(),
        noise in proptest::collection::vec(any::<u8>(), 64),
    ) {
        let scheme = if https { "https" } else { "http" };
        let host = host.join(".");
        let mut canonical = format!("{scheme}://{host}/{}", segs.join("/"));
        if let Some(q) = &query { canonical.push('?'); canonical.push_str(q); }
        let mut r = noise.into_iter().cycle();
        let mut next = move || r.next().unwrap_or(0);
        // A random spelling of the same URI.
        let flip = |s: &str, next: &mut dyn FnMut() -> u8| -> String {
            s.chars().map(|c| if next() & 1 == 1 { c.to_ascii_uppercase() } else { c }).collect()
        };
        let enc = |s: &str, next: &mut dyn FnMut() -> u8| -> String {
            s.chars().map(|c| if c.is_ascii_alphanumeric() && next().is_multiple_of(4) {
                let h = format!("{:02X}", c as u32);
                if next() & 1 == 1 { format!("%{h}") } else { format!("%{}", h.to_ascii_lowercase()) }
            } else { c.to_string() }).collect()
        };
        let mut spelled = format!("{}://{}", flip(scheme, &mut next), enc(&flip(&host, &mut next), &mut next));
        match next() % 3 {
            0 => spelled.push_str(if https { ":443" } else { ":80" }),
            1 => spelled.push_str(if https { ":0443" } else { ":080" }),
            _ => {}
        }
        for s in &segs {
            match next() % 4 {
                0 => spelled.push_str("/."),
                1 => spelled.push_str("/x/.."),
                _ => {}
            }
            spelled.push('/');
            spelled.push_str(&enc(s, &mut next));
        }
        if segs.is_empty() && next() & 1 == 1 { /* empty path means "/" */ } else if segs.is_empty() { spelled.push('/'); }
        if let Some(q) = &query { spelled.push('?'); spelled.push_str(&enc(q.split('=').next().unwrap_or(""), &mut next)); spelled.push_str(&q[q.split('=').next().unwrap_or("").len()..]); }
        let c = Keyer::default();
        prop_assert_eq!(s(&key(&c, canonical.as_bytes()).unwrap()), canonical.clone());
        prop_assert_eq!(s(&key(&c, spelled.as_bytes()).unwrap()), canonical, "spelled {}", spelled);
    }

    #[test]
    fn encoding_a_reserved_character_changes_the_key(
        before in "[a-z0-9]{0,5}", after in "[a-z0-9]{0,5}", reserved in select(&b":@!$&'()*+,;="[..]),
        component in 0..3u8,
    ) {
        let plain = format!("{before}{}{after}", reserved as char);
        let encoded = format!("{before}%{reserved:02X}{after}");
        let make = |x: &str| match component {
            0 => format!("http://h/{x}"),
            1 => format!("http://h/?{x}"),
            _ => format!("http://h/#{x}"),
        };
        for p in Profile::ALL {
            if component == 2 && *p == Profile::Crawl {
                continue; // the crawl profile drops fragments
            }
            let c = Keyer::new(Normalizer::profile(*p));
            prop_assert_ne!(key(&c, make(&plain).as_bytes()).unwrap(), key(&c, make(&encoded).as_bytes()).unwrap());
        }
    }
}

/// Dirty lines: URI-ish pieces mixed with arbitrary bytes.
fn dirty_line() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        3 => uri_ref().prop_map(String::into_bytes),
        1 => proptest::collection::vec(any::<u8>(), 0..6),
        1 => select(&[" ", "\t", "%", "%4", "#", "[", "]", "[::1]", "é", "\r\n", "//", "@", ":"][..]).prop_map(|s| s.as_bytes().to_vec()),
    ];
    proptest::collection::vec(piece, 1..4).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn dirty_lines_key_consistently(line in dirty_line(), n in normalizers()) {
        let strict = Keyer::new(n.clone());
        let lenient = Keyer::new(n).with_lenient(true);
        let strict_key = key(&strict, &line);
        prop_assert_eq!(&strict_key, &slow_key(&strict, &line));
        let lenient_key = key(&lenient, &line);
        prop_assert_eq!(&lenient_key, &slow_key(&lenient, &line));
        if let Ok(k) = &strict_key {
            prop_assert_eq!(lenient_key.as_ref().ok(), Some(k));
        }
        if let Err(e) = &lenient_key {
            prop_assert!(e.index() <= line.len());
        }
        for k in [strict_key.ok(), lenient_key.ok()].into_iter().flatten() {
            prop_assert_eq!(key(&strict, &k), Ok(k.clone()), "not idempotent");
            let mut surt = Vec::new();
            urikey::uri::key::write_key(&k, urikey::uri::key::KeyFormat::Surt, &mut surt);
            prop_assert_eq!(urikey::uri::surt::parse_surt(&surt), Some(k.clone()), "SURT {:?}", s(&surt));
        }
    }
}

/// Percent-decodes `s` to bytes (for comparing meanings).
fn decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(v) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}
