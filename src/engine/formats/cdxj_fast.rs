//! The fast path of the CDXJ reader: the JSON of a CDXJ line as Common
//! Crawl and pywb write it, a flat object of string (or number, `true`,
//! `false`, `null`) members without escapes, is checked and its `url`
//! found in one pass over the bytes, without a JSON parser.
//!
//! It answers only when the answer is certain; anything else (an escape,
//! a nested value, a syntax error, no `url`, a `url` that is not a
//! string) gives `None`, and the caller asks `serde_json`. So it accepts
//! only JSON that `serde_json` accepts, and finds the same `url` (the last
//! one, as jq reads it): a test checks both on generated and mutated
//! lines.

/// The URL of the JSON object `json` (from its `{`): its offset in `json`
/// and length, or `None` when the slow path must decide.
pub fn url(json: &[u8]) -> Option<(usize, usize)> {
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
        if &json[key.0..key.1] == b"url" {
            // Only a string `url` is answered here.
            let at = s.string()?;
            found = Some((at.0, at.1 - at.0));
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

    /// A string without escapes or control characters, valid UTF-8: the
    /// range of its content.
    fn string(&mut self) -> Option<(usize, usize)> {
        self.byte(b'"')?;
        let start = self.i;
        let end = start + memchr::memchr2(b'"', b'\\', &self.b[start..])?;
        if self.b[end] != b'"' {
            return None;
        }
        let content = &self.b[start..end];
        if !printable_ascii(content)
            && (content.iter().any(|&c| c < 0x20) || std::str::from_utf8(content).is_err())
        {
            return None;
        }
        self.i = end + 1;
        Some((start, end))
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
        let (at, len) = url(json).unwrap();
        assert_eq!(&json[at..at + len], b"https://example.com/a?b=1");
        // The last `url`; a nested one does not count.
        let json = br#"{"url":"http://a/","url":"http://b/"}"#;
        assert_eq!(
            url(json).map(|(a, n)| &json[a..a + n]),
            Some(&b"http://b/"[..])
        );
        for slow in [
            &br#"{"url":"http:\/\/a/"}"#[..],
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
