//! CDXJ index lines: `SURT SP TIMESTAMP SP JSON`, the URL in the JSON's
//! `url` member (the IIPC/pywb "CDXJ" format:
//! <https://pywb.readthedocs.io/en/latest/manual/indexing.html#cdxj-format>,
//! and the IIPC draft <https://github.com/iipc/warc-specifications/pull/61>;
//! Common Crawl's `cdx-NNNNN.gz` files are CDXJ).
//!
//! A flat object, as Common Crawl and pywb write it, is checked and its
//! `url` found in one pass (`cdxj_fast.rs`, one-letter escapes such as
//! `\/` included); anything else is read by `serde_json` with full string
//! unescaping (`\u0026`, surrogate pairs). A URL without escapes is borrowed from the line, one
//! with escapes is written to the caller's buffer. Only `url` is kept (the
//! last one, if there are several, as jq reads it): a hand-written visitor
//! skips the other members without building them, and checks that the
//! whole object parses.

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::engine::Problem;

/// The URL of a CDXJ line: its offset in the line and the URL (part of
/// the line, or `buf` when it had escapes).
///
/// # Errors
/// What is wrong, at which byte: [`Problem::BadJson`] when the line has no
/// JSON object or it does not parse, [`Problem::MissingField`] when it has
/// no string `url`.
pub fn url<'a>(
    line: &'a [u8],
    buf: &'a mut Vec<u8>,
) -> Result<(usize, &'a [u8]), (usize, Problem)> {
    if let Some(start) = json_start(line) {
        let json = &line[start..];
        if let Some(u) = super::cdxj_fast::url(json) {
            if !u.escaped {
                return Ok((start + u.start, &json[u.start..u.end]));
            }
            // As serde_json's reader: the value in `buf`, placed at the
            // object's start.
            buf.clear();
            super::cdxj_fast::unescape(&json[u.start..u.end], buf);
            return Ok((start, &buf[..]));
        }
    }
    url_by_serde(line, buf)
}

/// [`url`](fn@url) read by `serde_json` alone, whatever the line (the reference
/// the fast path is tested and measured against).
///
/// # Errors
/// As [`url`](fn@url).
pub fn url_by_serde<'a>(
    line: &'a [u8],
    buf: &'a mut Vec<u8>,
) -> Result<(usize, &'a [u8]), (usize, Problem)> {
    let start = json_start(line).ok_or((line.len(), Problem::BadJson))?;
    let json = &line[start..];
    let mut de = serde_json::Deserializer::from_slice(json);
    let found = de
        .deserialize_map(UrlOfObject { buf: &mut *buf })
        .and_then(|found| de.end().map(|()| found));
    match found {
        Ok(Some(Found::Borrowed(s))) => {
            let at = s.as_ptr() as usize - json.as_ptr() as usize;
            Ok((start + at, s.as_bytes()))
        }
        Ok(Some(Found::Buffered(at))) => Ok((start + at, &buf[..])),
        Ok(None) => Err((start, Problem::MissingField)),
        Err(e) => {
            let problem = match e.classify() {
                serde_json::error::Category::Data => Problem::MissingField,
                _ => Problem::BadJson,
            };
            // serde_json counts columns from 1, in bytes (a CDXJ line is
            // one line).
            let at = if e.line() == 1 {
                e.column().saturating_sub(1)
            } else {
                0
            };
            Err(((start + at).min(line.len()), problem))
        }
    }
}

/// Where the JSON of a CDXJ line starts: after the second space (the SURT
/// and the timestamp hold none), at a `{`.
fn json_start(line: &[u8]) -> Option<usize> {
    let first = memchr::memchr(b' ', line)?;
    // A timestamp has 14 digits, so its end is in the next 16 bytes; a
    // longer one is searched for.
    let (lanes, valid, base) = crate::uri::lanes::lanes_at(line, first + 1);
    let spaces = lanes.eq(b' ').bits() & valid;
    let second = if spaces != 0 {
        base + spaces.trailing_zeros() as usize
    } else {
        first + 1 + memchr::memchr(b' ', &line[first + 1..])?
    };
    let start = second + 1;
    (line.get(start) == Some(&b'{')).then_some(start)
}

/// The `url` member as found.
enum Found<'de> {
    /// No escapes: part of the input.
    Borrowed(&'de str),
    /// Unescaped into the buffer; the offset of its opening quote's next
    /// byte is unknown to serde, so this is the offset of the object.
    Buffered(usize),
}

/// Visits the JSON object, keeping its `url` member (the last one when
/// there are several, as jq, Python's json and serde_json's `Value` read
/// it).
struct UrlOfObject<'b> {
    buf: &'b mut Vec<u8>,
}

impl<'de> Visitor<'de> for UrlOfObject<'_> {
    type Value = Option<Found<'de>>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(is_url) = map.next_key_seed(IsUrl)? {
            if is_url {
                found = Some(map.next_value_seed(UrlString {
                    buf: &mut *self.buf,
                })?);
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// A member name: true when it is `url`.
struct IsUrl;

impl<'de> DeserializeSeed<'de> for IsUrl {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for IsUrl {
    type Value = bool;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        Ok(v == "url")
    }
}

/// The `url` string, borrowed when it has no escapes.
struct UrlString<'b> {
    buf: &'b mut Vec<u8>,
}

impl<'de> DeserializeSeed<'de> for UrlString<'_> {
    type Value = Found<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Found<'de>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for UrlString<'_> {
    type Value = Found<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Found<'de>, E> {
        Ok(Found::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Found<'de>, E> {
        self.buf.clear();
        self.buf.extend_from_slice(v.as_bytes());
        Ok(Found::Buffered(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Both readers give the same answer.
    fn same(line: &[u8]) {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let fast = url(line, &mut a).map(|(at, u)| (at, u.to_vec()));
        let slow = url_by_serde(line, &mut b).map(|(at, u)| (at, u.to_vec()));
        assert_eq!(fast, slow, "{:?}", String::from_utf8_lossy(line));
    }

    fn key() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("url".to_owned()),
            Just("mime".to_owned()),
            Just("u\\u0072l".to_owned()),
            Just("ur\\/l".to_owned()),
            Just("url\\n".to_owned()),
            Just("URL".to_owned()),
            Just("url ".to_owned()),
            "[a-z]{0,4}",
        ]
        .prop_map(|k| format!("\"{k}\""))
    }

    fn value() -> impl Strategy<Value = String> {
        let string = proptest::collection::vec(
            prop_oneof![
                Just("http://a.example/p?q=1".to_owned()),
                Just("\\/".to_owned()),
                Just("\\u0026".to_owned()),
                Just("\\ud83d\\ude00".to_owned()),
                Just("\\ud800".to_owned()),
                Just("\\\"".to_owned()),
                Just("\\\\".to_owned()),
                Just("\\n\\t\\b\\f\\r".to_owned()),
                Just("\\".to_owned()),
                Just("\\x".to_owned()),
                Just("\u{e9}\u{1F600}".to_owned()),
                Just("\t".to_owned()),
                Just("\u{7f}".to_owned()),
                "[ -~]{0,3}",
            ],
            0..4,
        )
        .prop_map(|parts| format!("\"{}\"", parts.concat()));
        let leaf = prop_oneof![
            string,
            Just("0".to_owned()),
            Just("-12.5e+3".to_owned()),
            Just("1e400".to_owned()),
            Just("01".to_owned()),
            Just("1.".to_owned()),
            Just("-".to_owned()),
            Just("true".to_owned()),
            Just("nul".to_owned()),
            Just("null".to_owned()),
            Just("false".to_owned()),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..3)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                proptest::collection::vec((key(), inner), 0..3).prop_map(|m| {
                    let m: Vec<String> = m.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
                    format!("{{{}}}", m.join(","))
                }),
            ]
        })
    }

    fn ws() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            Just(""),
            Just(""),
            Just(" "),
            Just("\t"),
            Just("\r\n"),
            Just("\u{b}")
        ]
    }

    prop_compose! {
        fn member()(k in key(), v in value(), a in ws(), b in ws(), c in ws()) -> String {
            format!("{a}{k}{b}:{c}{v}")
        }
    }

    prop_compose! {
        fn line()(members in proptest::collection::vec(member(), 0..6), end in ws(),
                  tail in prop_oneof![Just(""), Just(""), Just(" x"), Just(","), Just("}")]) -> Vec<u8> {
            format!("com,example)/ 20240101000000 {{{}{end}}}{tail}", members.join(",")).into_bytes()
        }
    }

    proptest! {
        #[test]
        fn cdxj_fast_path_agrees_with_serde(line in line()) {
            same(&line);
        }

        #[test]
        fn cdxj_fast_path_agrees_with_serde_mutated(
            line in line(),
            edits in proptest::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..4),
        ) {
            let mut line = line;
            for (at, byte, how) in edits {
                let at = at % (line.len() + 1);
                match how {
                    0 => line.insert(at, byte),
                    1 if at < line.len() => line[at] = byte,
                    _ if at < line.len() => {
                        line.remove(at);
                    }
                    _ => {}
                }
            }
            same(&line);
        }

        #[test]
        fn cdxj_fast_path_agrees_with_serde_on_bytes(
            body in proptest::collection::vec(prop_oneof![
                Just(b'"'), Just(b':'), Just(b','), Just(b'{'), Just(b'}'), Just(b'\\'),
                Just(b'u'), Just(b'r'), Just(b'l'), Just(b' '), Just(b'1'), any::<u8>(),
            ], 0..40),
        ) {
            let mut line = b"a 1 {".to_vec();
            line.extend_from_slice(&body);
            same(&line);
        }
    }

    fn get(line: &str) -> Result<(usize, String), (usize, Problem)> {
        let mut buf = Vec::new();
        url(line.as_bytes(), &mut buf).map(|(at, u)| (at, String::from_utf8(u.to_vec()).unwrap()))
    }

    #[test]
    fn cdxj_url_borrowed_and_unescaped() {
        let line = r#"com,example)/ 20240101000000 {"url": "http://example.com/", "mime": "text/html", "status": "200"}"#;
        let (at, u) = get(line).unwrap();
        assert_eq!(u, "http://example.com/");
        assert_eq!(&line[at..at + u.len()], u);
        // Escapes are unescaped: `\/`, `\u0026`, a surrogate pair.
        let line = r#"a 1 {"mime":"x","url":"http:\/\/a\/?q=1\u0026r=\ud83d\ude00"}"#;
        assert_eq!(get(line).unwrap().1, "http://a/?q=1&r=\u{1F600}");
        // The last `url` wins, as in jq; other members may be any JSON.
        let line = r#"a 1 {"n":[1,{"url":"x"}],"url":"http:\/\/b/","url":"http://c/"}"#;
        assert_eq!(get(line).unwrap().1, "http://c/");
        let line = r#"a 1 {"url":"http://c/","url":"http:\/\/b/"}"#;
        assert_eq!(get(line).unwrap().1, "http://b/");
    }

    #[test]
    fn cdxj_faults() {
        assert_eq!(get(r#"a 1 {"mime":"x"}"#), Err((4, Problem::MissingField)));
        assert_eq!(
            get(r#"a 1 {"url":3}"#).unwrap_err().1,
            Problem::MissingField
        );
        assert_eq!(
            get(r#"a 1 {"url":"http://a/""#).unwrap_err().1,
            Problem::BadJson
        );
        assert_eq!(
            get(r#"a 1 {"url":"http://a/"} x"#).unwrap_err().1,
            Problem::BadJson
        );
        assert_eq!(get("a 1 [1]").unwrap_err().1, Problem::BadJson);
        assert_eq!(get("http://a/").unwrap_err(), (9, Problem::BadJson));
        assert_eq!(
            get(r#"a 1 {"url":"\ud800"}"#).unwrap_err().1,
            Problem::BadJson
        );
        // A syntax error is placed at its byte.
        let line = r#"a 1 {"url" "http://a/"}"#;
        assert_eq!(get(line), Err((11, Problem::BadJson)));
    }
}
