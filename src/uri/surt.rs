//! Our SURT ("Sort-friendly URI Reordering Transform") key format.
//!
//! A SURT writes the host labels in reverse order so that keys of one site,
//! then of one domain, sort next to each other. Ours is close to the CDX
//! "massaged" form (`com,example)/path?query`) but, unlike it, is
//! **injective** over `uri` keys: two different keys never share a SURT,
//! so deduplicating by SURT merges exactly what deduplicating by `uri` key
//! merges. `http` and `https` keys of one host share the prefix
//! `com,example)`: the `https` scheme is written after the authority, so a
//! host prefix finds both and the two sort next to each other (all `http`
//! keys of the host, then all `https` ones, since `/`, `?` and `#` sort
//! before `h`). The grammar (ABNF, RFC 5234; the rules not defined here are
//! RFC 3986's):
//!
//! ```text
//! surt           = web-surt / scheme-surt / verbatim-surt
//! web-surt       = authority-surt [ "https:" ] path-abempty [ "?" query ] [ "#" fragment ]
//!                  ; scheme "http" (no "https:") or "https", exactly (lower-case)
//! scheme-surt    = scheme "://(" authority-surt path-abempty [ "?" query ] [ "#" fragment ]
//!                  ; any other scheme (or spelling), with an authority
//! verbatim-surt  = "(" URI-reference
//!                  ; no authority, a relative reference, or a reg-name
//!                  ; holding a sub-delim (it could contain "," or ")")
//! authority-surt = host-surt [ ":" port ] [ "@" userinfo ] ")"
//! host-surt      = reversed-name / IPv4address / IP-literal
//! reversed-name  = label *( "," label )
//!                  ; the reg-name's "."-separated labels, last first
//! label          = *( unreserved-but-dot / pct-encoded )
//! ```
//!
//! Why it is injective: a `verbatim-surt` starts with `(`, which cannot
//! start the other forms (a `label` has no `(`); a `scheme-surt` contains
//! `://(` before its first `)`, which a `web-surt` cannot (its host has
//! no `:` and `/`, its port is digits, its userinfo has no `/`). Inside
//! `authority-surt` the host ends at the first `:`, `@` or `)`; the port is
//! digits; the userinfo runs to the last `)` before the first `/`, `?`, `#`
//! or the end (a userinfo has none of those, `https:` has no `)`, and a
//! `path-abempty` starts with `/`). What follows that `)` is `https:` only
//! for `https`, because a `path-abempty`, query or fragment starts with `/`,
//! `?` or `#`. A `reversed-name` has no `.` and an `IPv4address` has no
//! `,`, and `label`s contain neither, so the labels come back in order.
//! Everything after the `)` (and `https:`) is copied.
//!
//! ```
//! use urikey::uri::surt::write_surt;
//! let surt = |k: &str| { let mut v = Vec::new(); write_surt(k.as_bytes(), &mut v); String::from_utf8(v).unwrap() };
//! assert_eq!(surt("http://www.example.com/a?b"), "com,example,www)/a?b");
//! assert_eq!(surt("https://www.example.com/a?b"), "com,example,www)https:/a?b");
//! assert_eq!(surt("https://example.com:8443/"), "com,example:8443)https:/");
//! assert_eq!(surt("ftp://example.com/"), "ftp://(com,example)/");
//! assert_eq!(surt("http://u@1.2.3.4/"), "1.2.3.4@u)/");
//! assert_eq!(surt("mailto:a@b.c"), "(mailto:a@b.c");
//! ```

use super::lanes::lanes_at;
use super::meta::HostKind;
use super::parse;
use super::table;
use super::UriRef;

/// Appends the SURT of `uri_key` (a normalized URI-reference) to `out`.
/// A key that does not parse (not produced by this crate) is written in
/// the verbatim form.
pub fn write_surt(uri_key: &[u8], out: &mut Vec<u8>) {
    if !write_web_surt(uri_key, out) {
        write_any_surt(uri_key, out);
    }
}

/// The SURT of the usual key, written without parsing it into a
/// [`UriRef`]: `http://` or `https://`, a host of `unreserved` bytes that
/// does not start with a digit (so it is a reg-name, never an IPv4
/// address), an optional port, and a valid path, query and fragment. The
/// same bytes as [`write_any_surt`] (a test compares them); `false`, with
/// nothing written, for any other key. Skipping the parse makes a SURT of
/// a crawl key about 40% cheaper (the authority and the rest are checked
/// sixteen bytes at a time).
fn write_web_surt(key: &[u8], out: &mut Vec<u8>) -> bool {
    let (https, rest) = match key {
        [b'h', b't', b't', b'p', b':', b'/', b'/', rest @ ..] => (false, rest),
        [b'h', b't', b't', b'p', b's', b':', b'/', b'/', rest @ ..] => (true, rest),
        _ => return false,
    };
    let Some((authority_end, colon)) = plain_authority(rest) else {
        return false;
    };
    let (authority, after) = rest.split_at(authority_end);
    let (host, port) = match colon {
        Some(c) => (&authority[..c], Some(&authority[c + 1..])),
        None => (authority, None),
    };
    if host.first().is_none_or(u8::is_ascii_digit) || !parse::is_after_authority(after) {
        return false;
    }
    reverse_labels(host, b'.', b',', out);
    if let Some(port) = port {
        out.push(b':');
        out.extend_from_slice(port);
    }
    out.push(b')');
    if https {
        out.extend_from_slice(HTTPS);
    }
    out.extend_from_slice(after);
    true
}

/// Where the authority at the start of `rest` ends, and where its port's
/// `:` is, when its host is `unreserved` bytes and its port digits; `None`
/// for any other authority. Sixteen bytes at a time.
#[inline]
fn plain_authority(rest: &[u8]) -> Option<(usize, Option<usize>)> {
    let mut colon = None;
    let mut at = 0;
    while at < rest.len() {
        let (v, valid, base) = lanes_at(rest, at);
        let delims = (v.eq(b'/') | v.eq(b'?') | v.eq(b'#')).bits() & valid;
        let inside = match delims {
            0 => valid,
            d => valid & ((1 << d.trailing_zeros()) - 1),
        };
        let digits = v.range(b'0', b'9').bits();
        let unreserved = (v.range(b'a', b'z')
            | v.range(b'A', b'Z')
            | v.range(b'0', b'9')
            | v.eq(b'-')
            | v.eq(b'.')
            | v.eq(b'_')
            | v.eq(b'~'))
        .bits();
        // The lanes of the host and of the port in this block.
        let (host, port) = match (colon, v.eq(b':').bits() & inside) {
            (Some(_), _) => (0, inside),
            (None, 0) => (inside, 0),
            (None, colons) => {
                let c = colons.trailing_zeros();
                colon = Some(base + c as usize);
                (inside & ((1 << c) - 1), inside & !((1 << (c + 1)) - 1))
            }
        };
        if host & !unreserved != 0 || port & !digits != 0 {
            return None;
        }
        if delims != 0 {
            return Some((base + delims.trailing_zeros() as usize, colon));
        }
        at = base + 16;
    }
    Some((rest.len(), colon))
}

/// [`write_surt`] without its fast path (feature `__internal-testing`), for the fuzz
/// target that compares the two.
#[cfg(feature = "__internal-testing")]
pub fn write_surt_by_parsing(uri_key: &[u8], out: &mut Vec<u8>) {
    write_any_surt(uri_key, out);
}

/// [`write_surt`] for any key, by its parsed components.
fn write_any_surt(uri_key: &[u8], out: &mut Vec<u8>) {
    let Ok(u) = UriRef::parse_bytes(uri_key) else {
        return verbatim(uri_key, out);
    };
    let (Some(scheme), Some(host), Some(kind)) = (u.scheme(), u.host(), u.host_kind()) else {
        return verbatim(uri_key, out);
    };
    let host = host.as_bytes();
    if kind == HostKind::RegName && host.iter().any(|&b| table::is(b, table::SUB_DELIMS)) {
        return verbatim(uri_key, out);
    }
    let web = scheme == "http" || scheme == "https";
    if !web {
        out.extend_from_slice(scheme.as_bytes());
        out.extend_from_slice(b"://(");
    }
    if kind == HostKind::RegName {
        reverse_labels(host, b'.', b',', out);
    } else {
        out.extend_from_slice(host);
    }
    if let Some(port) = u.port() {
        out.push(b':');
        out.extend_from_slice(port.as_bytes());
    }
    if let Some(userinfo) = u.userinfo() {
        out.push(b'@');
        out.extend_from_slice(userinfo.as_bytes());
    }
    out.push(b')');
    if scheme == "https" {
        out.extend_from_slice(HTTPS);
    }
    // Path, query and fragment: everything after the authority.
    let rest = uri_key.len()
        - u.path().len()
        - u.query().map_or(0, |q| q.len() + 1)
        - u.fragment().map_or(0, |f| f.len() + 1);
    out.extend_from_slice(&uri_key[rest..]);
}

/// Appends the `from`-separated labels of `name` in reverse order, joined
/// by `to` (`a.b.c` becomes `c,b,a`, and back).
fn reverse_labels(name: &[u8], from: u8, to: u8, out: &mut Vec<u8>) {
    for (i, label) in name.rsplit(|&b| b == from).enumerate() {
        if i > 0 {
            out.push(to);
        }
        out.extend_from_slice(label);
    }
}

/// What follows the authority of an `https` key.
const HTTPS: &[u8] = b"https:";

fn verbatim(uri_key: &[u8], out: &mut Vec<u8>) {
    out.push(b'(');
    out.extend_from_slice(uri_key);
}

/// Reads a SURT back into its `uri` key (the inverse of [`write_surt`]).
/// Returns `None` when `surt` is not in the grammar. This exists to test
/// that the format is injective.
pub fn parse_surt(surt: &[u8]) -> Option<Vec<u8>> {
    if let Some(rest) = surt.strip_prefix(b"(") {
        return Some(rest.to_vec());
    }
    let close = surt.iter().position(|&b| b == b')')?;
    let (scheme, auth_from) = match find(&surt[..close], b"://(") {
        Some(p) => (&surt[..p], p + 4),
        None => (&b"http"[..], 0),
    };
    // The authority part ends at the last ')' before the first "/?#".
    let tail_from = surt[auth_from..]
        .iter()
        .position(|&b| matches!(b, b'/' | b'?' | b'#'))
        .map_or(surt.len(), |p| auth_from + p);
    let close = surt[..tail_from].iter().rposition(|&b| b == b')')?;
    if close < auth_from {
        return None;
    }
    // `https` is written after the authority of a web SURT.
    let mut tail = &surt[close + 1..];
    let scheme = match tail.strip_prefix(HTTPS) {
        Some(t) if auth_from == 0 => {
            tail = t;
            &b"https"[..]
        }
        _ => scheme,
    };
    if !(tail.is_empty() || matches!(tail[0], b'/' | b'?' | b'#')) {
        return None;
    }
    let auth = &surt[auth_from..close];
    let host_end = if auth.first() == Some(&b'[') {
        auth.iter().position(|&b| b == b']')? + 1
    } else {
        auth.iter()
            .position(|&b| b == b':' || b == b'@')
            .unwrap_or(auth.len())
    };
    let host = &auth[..host_end];
    let mut rest = &auth[host_end..];
    let mut port = None;
    if let Some(r) = rest.strip_prefix(b":") {
        let digits = r.iter().take_while(|b| b.is_ascii_digit()).count();
        port = Some(&r[..digits]);
        rest = &r[digits..];
    }
    let userinfo = match rest.strip_prefix(b"@") {
        Some(u) => Some(u),
        None if rest.is_empty() => None,
        None => return None,
    };
    let mut key = Vec::with_capacity(surt.len() + 8);
    key.extend_from_slice(scheme);
    key.extend_from_slice(b"://");
    if let Some(u) = userinfo {
        key.extend_from_slice(u);
        key.push(b'@');
    }
    if host.contains(&b'.') || host.first() == Some(&b'[') {
        key.extend_from_slice(host);
    } else {
        reverse_labels(host, b',', b'.', &mut key);
    }
    if let Some(p) = port {
        key.push(b':');
        key.extend_from_slice(p);
    }
    key.extend_from_slice(tail);
    Some(key)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surt(k: &str) -> String {
        let mut v = Vec::new();
        write_surt(k.as_bytes(), &mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn forms() {
        let cases = [
            ("http://example.com/", "com,example)/"),
            ("http://example.com", "com,example)"),
            (
                "http://a.b.example.com:8080/x?y#z",
                "com,example,b,a:8080)/x?y#z",
            ),
            ("http://u:p@example.com/", "com,example@u:p)/"),
            ("http://[::1]:81/", "[::1]:81)/"),
            ("http://10.0.0.1/", "10.0.0.1)/"),
            ("http:///x", ")/x"),
            ("https://example.com/", "com,example)https:/"),
            ("https://example.com", "com,example)https:"),
            (
                "https://u@example.com:8443?q",
                "com,example:8443@u)https:?q",
            ),
            ("ws://example.com/", "ws://(com,example)/"),
            ("ftp://example.com./", "ftp://(,com,example)/"),
            ("http://a,b.c/", "(http://a,b.c/"),
            ("urn:isbn:1", "(urn:isbn:1"),
            ("//example.com/x", "(//example.com/x"),
            ("a/b", "(a/b"),
        ];
        for (key, want) in cases {
            assert_eq!(surt(key), want, "{key}");
            assert_eq!(
                parse_surt(want.as_bytes()).as_deref(),
                Some(key.as_bytes()),
                "{want}"
            );
        }
    }

    /// Keys of a head, a host, a port and a tail, each built from pieces
    /// that are usually valid there and one time in eight change how the
    /// key parses.
    fn key_strategy() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        type Parts = (&'static [&'static str], &'static [&'static str]);
        const HEAD: Parts = (
            &["http://", "https://"],
            &["HTTP://", "ftp://", "http:/", "", "https:", "http://u@"],
        );
        const HOST: Parts = (
            &[
                "a", "Z", "www", "example", "com", ".", "-", "_", "~", "0", "9",
            ],
            &[
                "%41", "%zz", "@", "[", "]", ",", "!", "(", ")", " ", "\u{e9}", "1.2.3.4",
            ],
        );
        const PORT: Parts = (&["", ":", ":80", ":8080", ":0"], &[":8x", "::1", ":80@u"]);
        const TAIL: Parts = (
            &[
                "/", "/a", "?", "?q=1", "#", "#f", "/b/c", "&", "=", "%41", "@", ":", "?/#?",
            ],
            &["%", "%4", "%zz", " ", "\\", "[", "]", "#x#", "\u{e9}", "|"],
        );
        fn piece((good, bad): Parts) -> impl Strategy<Value = &'static str> {
            (0..8usize, 0..good.len(), 0..bad.len()).prop_map(move |(odd, g, b)| {
                if odd == 0 {
                    bad[b]
                } else {
                    good[g]
                }
            })
        }
        (
            piece(HEAD),
            prop::collection::vec(piece(HOST), 0..5),
            piece(PORT),
            prop::collection::vec(piece(TAIL), 0..6),
        )
            .prop_map(|(head, host, port, tail)| {
                let mut key = head.as_bytes().to_vec();
                for p in host.iter().chain([&port]).chain(&tail) {
                    key.extend_from_slice(p.as_bytes());
                }
                key
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(50_000))]

        /// The fast path writes what the general one writes, or nothing.
        #[test]
        fn web_surt_is_the_general_surt(key in key_strategy()) {
            let mut general = Vec::new();
            write_any_surt(&key, &mut general);
            let mut fast = Vec::new();
            if write_web_surt(&key, &mut fast) {
                proptest::prop_assert_eq!(&fast, &general, "{:?}", String::from_utf8_lossy(&key));
            } else {
                proptest::prop_assert!(fast.is_empty());
            }
        }
    }

    #[test]
    fn web_surt_takes_the_usual_keys_only() {
        let fast = |k: &str| write_web_surt(k.as_bytes(), &mut Vec::new());
        for k in [
            "http://www.example.com/a?b#c",
            "https://example.com:8443",
            "http://a.b:/",
            "https://x_y.~z?q",
        ] {
            assert!(fast(k), "{k}");
        }
        for k in [
            "http://1.2.3.4/",
            "http://1a.com/",
            "http://u@a/",
            "http://a,b/",
            "http://[::1]/",
            "http:///x",
            "http://a%41/",
            "http://a:8x/",
            "http://a/ b",
            "HTTP://a/",
            "ftp://a/",
        ] {
            assert!(!fast(k), "{k}");
        }
    }

    #[test]
    fn look_alikes_stay_apart() {
        let keys = [
            "http://a:1/x",
            "a:1)/x",
            "http://b.a/",
            "http://a,b/",
            "https://a/",
            "http://https:/",
            "https://a",
            "http://a)https:@b/",
            "https://a)https:@b/",
            "http://a/https:",
            "HTTPS://a/",
            "http://u)@a/",
            "http://a/)/",
            "http://x@y/",
            "http://x/@y",
        ];
        let mut seen = std::collections::HashMap::new();
        for k in keys {
            let s = surt(k);
            assert_eq!(
                parse_surt(s.as_bytes()).as_deref(),
                Some(k.as_bytes()),
                "{k} -> {s}"
            );
            assert!(
                seen.insert(s.clone(), k).is_none(),
                "{k} and {:?} share {s}",
                seen.get(&s)
            );
        }
    }
}
