//! WAT records: the outlinks of each page, as a crawler adds them to its
//! frontier.
//!
//! A WAT file is a WARC file of `metadata` records whose block is JSON
//! (Common Crawl's description:
//! <https://commoncrawl.org/blog/navigating-the-warc-file-format>, and
//! the `ia-web-commons` code that writes it). The links of an HTML page
//! are at `Envelope.Payload-Metadata.HTTP-Response-Metadata.HTML-Metadata
//! .Links[].url`, as written in the page (often relative); the page's
//! `<base href>` is `...HTML-Metadata.Head.Base`. Each link is resolved
//! (RFC 3986 §5.2, strict, by this crate's own resolver) against the base
//! when there is one (itself resolved against the page URL, as HTML does),
//! else against the page URL (the record's `WARC-Target-URI`). The line
//! written for a link is `page<TAB>link`.
//!
//! A record whose block is not JSON is one invalid record (`bad-json`); a
//! link object without a string `url` is one (`missing-field`); a relative
//! link that is not a URI-reference is one (the parse error's reason). An
//! absolute link that does not parse strictly is passed on as written
//! (the keyer decides, and `--lenient` may accept it).

use std::io::Read;

use serde_json::Value;

use super::warc::{Head, ReadError, WarcReader};
use super::{breaks_line, Item};
use crate::engine::Problem;
use crate::uri::key::KeyErrorKind;
use crate::uri::resolve::Resolver;
use crate::uri::UriRef;

/// Largest WAT record block read (bigger ones are invalid records).
pub const MAX_BLOCK_BYTES: u64 = 256 << 20;

impl<R> core::fmt::Debug for WatLinks<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("WatLinks").finish_non_exhaustive()
    }
}

/// The outlinks of a WAT input.
pub struct WatLinks<R> {
    reader: WarcReader<R>,
    body: Vec<u8>,
    line: Vec<u8>,
    base: String,
    resolved: String,
}

impl<R: Read> WatLinks<R> {
    /// The outlinks of the WAT records of `reader`.
    pub fn new(reader: R) -> Self {
        Self {
            reader: WarcReader::new(reader),
            body: Vec::new(),
            line: Vec::new(),
            base: String::new(),
            resolved: String::new(),
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.reader.offset()
    }

    /// Reads the next record, passing each of its links (or faults) to
    /// `each`; false at the end of the input.
    ///
    /// # Errors
    /// As [`WarcReader::next_head`] and [`WarcReader::read_body`].
    pub fn next_record(&mut self, each: &mut dyn FnMut(Item<'_>)) -> Result<bool, ReadError> {
        let Some(head) = self.reader.next_head()? else {
            return Ok(false);
        };
        if head.warc_type != "metadata" || head.content_type != "application/json" {
            self.reader.skip_body(&head)?;
            return Ok(true);
        }
        if head.content_length > MAX_BLOCK_BYTES {
            self.reader.skip_body(&head)?;
            each(Item::Fault {
                text: head.target.as_deref().unwrap_or(&head.record_id),
                pos: head.pos,
                problem: Problem::LineTooLong,
                index: 0,
            });
            return Ok(true);
        }
        let mut body = std::mem::take(&mut self.body);
        self.reader.read_body(&head, &mut body)?;
        self.links(&head, &body, each);
        self.body = body;
        Ok(true)
    }

    /// The links of one record's JSON block.
    fn links(&mut self, head: &Head, body: &[u8], each: &mut dyn FnMut(Item<'_>)) {
        let pos = head.pos;
        let page = head.target.as_deref().unwrap_or_default();
        let json: Value = match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(_) => {
                each(Item::Fault {
                    text: if page.is_empty() {
                        &head.record_id
                    } else {
                        page
                    },
                    pos,
                    problem: Problem::BadJson,
                    index: 0,
                });
                return;
            }
        };
        let html = json.pointer("/Envelope/Payload-Metadata/HTTP-Response-Metadata/HTML-Metadata");
        let Some(links) = html.and_then(|h| h.get("Links")).and_then(Value::as_array) else {
            return;
        };
        if links.is_empty() {
            return;
        }
        let fault = |each: &mut dyn FnMut(Item<'_>), text: &[u8], problem, index| {
            each(Item::Fault {
                text,
                pos,
                problem,
                index,
            });
        };
        if let Some(i) = breaks_line(page) {
            fault(each, page, Problem::LineBreak, i);
            return;
        }
        // The page URL must be absolute to resolve against.
        let page_ref = match UriRef::parse_bytes(page) {
            Ok(r) if r.scheme().is_some() => r,
            Ok(_) => {
                fault(each, page, Problem::Key(KeyErrorKind::RelativeReference), 0);
                return;
            }
            Err(e) => {
                fault(
                    each,
                    page,
                    Problem::Key(KeyErrorKind::Parse(e.kind())),
                    e.index(),
                );
                return;
            }
        };
        // The base: `<base href>` resolved against the page, when it is
        // a URI-reference; else the page.
        self.base.clear();
        let head_base = html
            .and_then(|h| h.pointer("/Head/Base"))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|b| !b.is_empty());
        match head_base.map(UriRef::parse) {
            Some(Ok(b)) => {
                let _ = Resolver::new().resolve_into(&page_ref, &b, &mut self.base);
            }
            _ => self.base.push_str(page_ref.as_str()),
        }
        let Ok(base) = UriRef::parse(&self.base) else {
            return;
        };
        for link in links {
            self.line.clear();
            self.line.extend_from_slice(page);
            self.line.push(b'\t');
            let Some(url) = link.get("url").and_then(Value::as_str) else {
                let shown = link.to_string();
                self.line.extend_from_slice(shown.as_bytes());
                fault(each, &self.line, Problem::MissingField, page.len() + 1);
                continue;
            };
            let at = page.len() + 1;
            if let Some(i) = breaks_line(url.as_bytes()) {
                self.line
                    .extend(url.bytes().map(|b| if b < b' ' { b' ' } else { b }));
                fault(each, &self.line, Problem::LineBreak, at + i);
                continue;
            }
            match UriRef::parse(url) {
                Ok(r) => {
                    self.resolved.clear();
                    // The base has a scheme, so this cannot fail.
                    let _ = Resolver::new().resolve_into(&base, &r, &mut self.resolved);
                    self.line.extend_from_slice(self.resolved.as_bytes());
                }
                Err(_) if has_scheme(url) => self.line.extend_from_slice(url.as_bytes()),
                Err(e) => {
                    self.line.extend_from_slice(url.as_bytes());
                    fault(
                        each,
                        &self.line,
                        Problem::Key(KeyErrorKind::Parse(e.kind())),
                        at + e.index(),
                    );
                    continue;
                }
            }
            each(Item::Url {
                text: &self.line,
                pos,
            });
        }
    }
}

/// True when `s` starts with a scheme (`ALPHA *( ALPHA / DIGIT / "+" / "-"
/// / "." ) ":"`, RFC 3986 §3.1).
fn has_scheme(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(colon) = memchr::memchr(b':', b) else {
        return false;
    };
    colon > 0
        && b[0].is_ascii_alphabetic()
        && b[1..colon]
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wat_record(page: &str, json: &str) -> Vec<u8> {
        let mut r = format!(
            "WARC/1.0\r\nWARC-Type: metadata\r\nWARC-Target-URI: {page}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            json.len()
        )
        .into_bytes();
        r.extend_from_slice(json.as_bytes());
        r.extend_from_slice(b"\r\n\r\n");
        r
    }

    fn links_json(base: Option<&str>, links: &[&str]) -> String {
        let links: Vec<String> = links
            .iter()
            .map(|l| format!("{{\"path\":\"A@/href\",\"url\":{}}}", Value::from(*l)))
            .collect();
        let head = match base {
            Some(b) => format!("{{\"Base\":{}}}", Value::from(b)),
            None => "{}".to_owned(),
        };
        format!(
            "{{\"Envelope\":{{\"Payload-Metadata\":{{\"HTTP-Response-Metadata\":{{\"HTML-Metadata\":{{\"Head\":{head},\"Links\":[{}]}}}}}}}}}}",
            links.join(",")
        )
    }

    fn all(data: &[u8]) -> Vec<String> {
        let mut r = WatLinks::new(data);
        let mut out = Vec::new();
        while r
            .next_record(&mut |item| match item {
                Item::Url { text, .. } => out.push(String::from_utf8_lossy(text).into_owned()),
                Item::Fault { problem, .. } => out.push(format!("!{}", problem.name())),
            })
            .unwrap()
        {}
        out
    }

    #[test]
    fn wat_links_resolved_against_page_and_base() {
        let mut data = wat_record(
            "http://a/b/c/d;p?q",
            &links_json(None, &["g", "../g", "//h/x", "#s", "https://x/./y", "a b"]),
        );
        data.extend(wat_record(
            "http://a/b/",
            &links_json(Some("/base/dir/"), &["x", "?q"]),
        ));
        data.extend(wat_record("http://a/", "{not json"));
        assert_eq!(
            all(&data),
            [
                "http://a/b/c/d;p?q\thttp://a/b/c/g",
                "http://a/b/c/d;p?q\thttp://a/b/g",
                "http://a/b/c/d;p?q\thttp://h/x",
                "http://a/b/c/d;p?q\thttp://a/b/c/d;p?q#s",
                "http://a/b/c/d;p?q\thttps://x/y",
                "!invalid-path",
                "http://a/b/\thttp://a/base/dir/x",
                "http://a/b/\thttp://a/base/dir/?q",
                "!bad-json",
            ]
        );
    }

    #[test]
    fn wat_other_records_give_nothing() {
        let data = wat_record("http://a/", "{\"Envelope\":{}}");
        assert!(all(&data).is_empty());
        assert!(has_scheme("http:x") && !has_scheme("1a:x") && !has_scheme("/a:b"));
    }
}
