//! The fast path of the CDXJ reader: the JSON of a CDXJ line as Common
//! Crawl and pywb write it, a flat object of string (or number, `true`,
//! `false`, `null`) members, is checked and its `url` found in one pass
//! over the bytes, without a JSON parser. Strings may hold the one-letter
//! escapes (`\/` is common: some writers escape every slash).
//!
//! It answers only when the answer is certain; anything else (a `\u`
//! escape, a nested value, a syntax error, no `url`, a `url` that is not a
//! string) gives `None`, and the caller asks `serde_json`. So it accepts
//! only JSON that `serde_json` accepts, and finds the same `url` (the last
//! one, as jq reads it): a test checks both on generated and mutated
//! lines.

/// A JSON string found by [`url`]: where its content is in the JSON, and
/// whether it holds escapes (then [`unescape`] gives its value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Str {
    pub start: usize,
    pub end: usize,
    pub escaped: bool,
}

/// The `url` string of the JSON object `json` (from its `{`), or `None`
/// when the slow path must decide.
pub fn url(json: &[u8]) -> Option<Str> {
    let mut s = Scan { b: json, i: 0 };
    s.byte(b'{')?;
    s.ws();
    let mut found = None;
    if s.peek() == Some(b'}') {
        return None;
    }
    loop {
        let key = s.string()?;
        s.ws();
        s.byte(b':')?;
        s.ws();
        // A name with escapes is never `url`: its one-letter escapes stand
        // for none of `u`, `r`, `l`.
        if &json[key.start..key.end] == b"url" {
            // Only a string `url` is answered here.
            found = Some(s.string()?);
        } else {
            s.scalar()?;
        }
        s.ws();
        match s.next()? {
            b',' => s.ws(),
            b'}' => break,
            _ => return None,
        }
    }
    s.ws();
    if s.i != json.len() {
        return None;
    }
    found
}

/// Appends the value of the escaped string content `raw` (as [`url`] found
/// it: one-letter escapes only) to `out`.
pub fn unescape(raw: &[u8], out: &mut Vec<u8>) {
    let mut bytes = raw.iter();
    while let Some(&c) = bytes.next() {
        if c != b'\\' {
            out.push(c);
            continue;
        }
        out.push(match bytes.next() {
            Some(b'b') => 0x08,
            Some(b'f') => 0x0c,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            // `"`, `\\` and `/` stand for themselves.
            Some(&other) => other,
            None => break,
        });
    }
}

/// True when every byte of `s` is in 0x20..0x80, eight at a time.
fn printable_ascii(s: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let words = s.chunks_exact(8);
    let rest = words.remainder();
    // `w - 0x20` in each byte sets its high bit (or borrows from the next
    // byte) exactly when a byte is below 0x20; `w` has it when a byte is
    // 0x80 or above.
    words
        .map(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
        .all(|w| (w.wrapping_sub(ONES * 0x20) | w) & HIGH == 0)
        && rest.iter().all(|&c| (0x20..0x80).contains(&c))
}

/// A cursor over the bytes.
struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn byte(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    /// JSON whitespace.
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    /// A string without `\\u` escapes or control characters, valid UTF-8:
    /// where its content is.
    fn string(&mut self) -> Option<Str> {
        self.byte(b'"')?;
        let start = self.i;
        let mut escaped = false;
        let mut at = start;
        let end = loop {
            let quote_or_escape = at + memchr::memchr2(b'"', b'\\', &self.b[at..])?;
            if self.b[quote_or_escape] == b'"' {
                break quote_or_escape;
            }
            match self.b.get(quote_or_escape + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                _ => return None,
            }
            escaped = true;
            at = quote_or_escape + 2;
        };
        let content = &self.b[start..end];
        if !printable_ascii(content)
            && (content.iter().any(|&c| c < 0x20) || std::str::from_utf8(content).is_err())
        {
            return None;
        }
        self.i = end + 1;
        Some(Str {
            start,
            end,
            escaped,
        })
    }

    /// A string, a number, `true`, `false` or `null`.
    fn scalar(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            _ => None,
        }
    }

    fn word(&mut self, w: &[u8]) -> Option<()> {
        let end = self.i + w.len();
        (self.b.get(self.i..end)? == w).then(|| self.i = end)
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => {
                self.digits(0);
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.digits(1)?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            self.digits(1)?;
        }
        Some(())
    }

    /// At least `min` digits.
    fn digits(&mut self, min: usize) -> Option<()> {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        (self.i - start >= min).then_some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdxj_fast_answers_common_crawl_lines_only() {
        let json = br#"{"url": "https://example.com/a?b=1", "mime": "text/html", "status": "200", "length": 1234, "x": null}"#;
        let u = url(json).unwrap();
        assert_eq!(&json[u.start..u.end], b"https://example.com/a?b=1");
        assert!(!u.escaped);
        // One-letter escapes are answered, and unescaped.
        let json = br#"{"url":"http:\/\/a\/\"x\\","m":"\t"}"#;
        let u = url(json).unwrap();
        assert!(u.escaped);
        let mut out = Vec::new();
        unescape(&json[u.start..u.end], &mut out);
        assert_eq!(out, br#"http://a/"x\"#);
        // The last `url`; a nested one does not count.
        let json = br#"{"url":"http://a/","url":"http://b/"}"#;
        assert_eq!(
            url(json).map(|u| &json[u.start..u.end]),
            Some(&b"http://b/"[..])
        );
        for slow in [
            &br#"{"url":"http:\u002f/a/"}"#[..],
            br#"{"url":"http:\x"}"#,
            br#"{"n":{"url":"x"},"url":"http://a/"}"#,
            br#"{"mime":"x"}"#,
            br#"{"url":3}"#,
            br#"{"url":"http://a/"} x"#,
            br#"{"url":"http://a/",}"#,
            b"{}",
        ] {
            assert_eq!(url(slow), None, "{}", String::from_utf8_lossy(slow));
        }
    }
}
