//! Recognising an input's format from its first (decompressed) bytes, when
//! `--format` is not given. Plain lines are the default: only content that
//! no URL list has is taken for another format. Where the first bytes fit
//! two formats that would read different URLs, detection says so
//! ([`Unsure`]) and the user names the format: a guess could read a file
//! as a format that finds nothing in it, and exit 0.
//!
//! - `PAR1` at the start: Parquet (the magic of the Parquet file format,
//!   which is also its last four bytes).
//! - `WARC/1.` at the start: the records in the first bytes are walked
//!   (by their `Content-Length`). A capture (`response`, `request`,
//!   `resource`, `revisit`, `conversion`, `continuation`) makes it a WARC,
//!   since a WAT holds none. WAT when every record that is not `warcinfo`
//!   is a `metadata` record whose `Content-Type` is `application/json`
//!   (parameters allowed) and whose JSON has WAT's `"Envelope"`. Other
//!   `metadata` records and no capture: unsure, unless the first bytes are
//!   the whole file (then no reader finds a capture in it: WARC).
//! - `filedesc://` at the start, on an ARC header line (five or ten
//!   fields, the last a length): ARC.
//! - A first non-blank line ` CDX ...`, or of 9 or 11 space-separated
//!   fields whose second is a 14-digit timestamp: CDX.
//! - A first non-blank line `SURT TIMESTAMP {`: CDXJ; OpenWayback's header
//!   lines before it (`!OpenWayback-CDXJ 1.0`, then `!meta ...`: lines
//!   that start with `!`) are skipped. Header lines with no CDXJ line
//!   after them in the first bytes: unsure.

use super::cdx;
use super::Format;
use crate::engine::input::lines::{trim_cr, BOM};

/// Bytes of an input's start [`detect`] looks at.
pub const DETECT_BYTES: usize = 64 << 10;

/// The first bytes fit more than one format: why, and the formats they fit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsure {
    /// What was seen.
    pub reason: String,
    /// The formats it may be.
    pub candidates: Vec<Format>,
}

impl Unsure {
    /// The message for input `name`: what was seen and the `--format`
    /// options that decide.
    pub fn message(&self, name: &str) -> String {
        let options: Vec<String> = self
            .candidates
            .iter()
            .map(|f| format!("--format {f}"))
            .collect();
        format!(
            "cannot tell the format of {name} from its first bytes: {}; pass {}",
            self.reason,
            options.join(" or ")
        )
    }
}

/// The format `head` (an input's first bytes, decompressed, at most
/// [`DETECT_BYTES`]: fewer when they are the whole input) is in.
///
/// # Errors
/// [`Unsure`] when the bytes fit more than one format.
pub fn detect(head: &[u8]) -> Result<Format, Unsure> {
    let whole = head.len() < DETECT_BYTES;
    if head.starts_with(b"PAR1") {
        return Ok(Format::Parquet);
    }
    let head = head.strip_prefix(BOM).unwrap_or(head);
    if head.starts_with(b"WARC/1.") {
        return warc_or_wat(head, whole);
    }
    if head.starts_with(super::arc::FILEDESC) {
        let first = head.split(|&b| b == b'\n').next().map(trim_cr);
        if first.is_some_and(super::arc::is_header_line) {
            return Ok(Format::Arc);
        }
    }
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(trim_cr)
        .filter(|l| !l.is_empty())
        .peekable();
    // OpenWayback's CDXJ starts `!OpenWayback-CDXJ 1.0`, then `!meta`
    // lines; a list of URLs never does.
    let cdxj_header = lines
        .peek()
        .is_some_and(|l| l.starts_with(OPENWAYBACK_CDXJ));
    if cdxj_header {
        while lines.next_if(|l| l.starts_with(b"!")).is_some() {}
    }
    let Some(line) = lines.next() else {
        return if cdxj_header {
            Err(Unsure {
                reason: "it starts with CDXJ header lines (`!...`) and no index line follows"
                    .into(),
                candidates: vec![Format::Cdxj, Format::Lines],
            })
        } else {
            Ok(Format::Lines)
        };
    };
    if is_cdxj(line) {
        return Ok(Format::Cdxj);
    }
    if cdxj_header {
        return Err(Unsure {
            reason: "it starts with CDXJ header lines (`!...`) but the line after them is no \
                     CDXJ index line"
                .into(),
            candidates: vec![Format::Cdxj, Format::Lines],
        });
    }
    if cdx::is_header(line) {
        return Ok(Format::Cdx);
    }
    let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    if (fields.len() == 9 || fields.len() == 11) && fields[1].len() == 14 && timestamp(fields[1]) {
        return Ok(Format::Cdx);
    }
    Ok(Format::Lines)
}

/// The first line of OpenWayback's CDXJ files.
const OPENWAYBACK_CDXJ: &[u8] = b"!OpenWayback-CDXJ";

/// True for a digit string of 4 to 14 digits (a CDX or CDXJ timestamp, to
/// the year or to the second).
fn timestamp(f: &[u8]) -> bool {
    (4..=14).contains(&f.len()) && f.iter().all(u8::is_ascii_digit)
}

/// True for a CDXJ line: `SURT SP TIMESTAMP SP {`.
fn is_cdxj(line: &[u8]) -> bool {
    let mut fields = line.splitn(3, |&b| b == b' ');
    let (Some(_), Some(ts), Some(json)) = (fields.next(), fields.next(), fields.next()) else {
        return false;
    };
    timestamp(ts) && json.first() == Some(&b'{')
}

/// WARC record types that hold a capture: a WAT has none.
const CAPTURES: [&[u8]; 6] = [
    b"response",
    b"request",
    b"resource",
    b"revisit",
    b"conversion",
    b"continuation",
];

/// The value of header `name` (with its colon) in a WARC header block.
fn header<'a>(headers: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    headers.split(|&b| b == b'\n').find_map(|l| {
        let l = trim_cr(l);
        (l.len() >= name.len() && l[..name.len()].eq_ignore_ascii_case(name))
            .then(|| l[name.len()..].trim_ascii())
    })
}

/// True when a `Content-Type` value is JSON: `application/json`, maybe
/// with parameters (`; charset=UTF-8`).
fn is_json(content_type: &[u8]) -> bool {
    let media = content_type
        .split(|&b| b == b';')
        .next()
        .unwrap_or_default();
    media.trim_ascii().eq_ignore_ascii_case(b"application/json")
}

/// WARC or WAT, from the records in `head` (`whole`: the whole input).
fn warc_or_wat(head: &[u8], whole: bool) -> Result<Format, Unsure> {
    let mut wat_records = 0usize;
    let mut other_metadata = 0usize;
    let mut rest = head;
    loop {
        while let Some(r) = rest
            .strip_prefix(b"\r\n")
            .or_else(|| rest.strip_prefix(b"\n"))
        {
            rest = r;
        }
        if rest.is_empty() || !rest.starts_with(b"WARC/") {
            break;
        }
        let Some(end) = memchr::memmem::find(rest, b"\r\n\r\n") else {
            break;
        };
        let headers = &rest[..end];
        let body = &rest[end + 4..];
        let kind = header(headers, b"WARC-Type:").unwrap_or_default();
        if CAPTURES.iter().any(|c| kind.eq_ignore_ascii_case(c)) {
            return Ok(Format::Warc);
        }
        if kind.eq_ignore_ascii_case(b"metadata") {
            let json = header(headers, b"Content-Type:").is_some_and(is_json);
            // WAT's JSON: `{"Container": ..., "Envelope": ...}`, the
            // envelope within its first bytes.
            let shown = &body[..body.len().min(4096)];
            if json
                && body.trim_ascii_start().starts_with(b"{")
                && memchr::memmem::find(shown, b"\"Envelope\"").is_some()
            {
                wat_records += 1;
            } else {
                other_metadata += 1;
            }
        }
        let length = header(headers, b"Content-Length:")
            .and_then(|v| std::str::from_utf8(v).ok())
            .and_then(|v| v.parse::<usize>().ok());
        match length {
            Some(n) if n <= body.len() => rest = &body[n..],
            _ => break,
        }
    }
    match (wat_records, other_metadata) {
        (w, 0) if w > 0 => Ok(Format::Wat),
        // Nothing but `warcinfo` (or metadata) in the whole file: no URL
        // for either reader.
        (0, _) if whole => Ok(Format::Warc),
        (0, 0) => Err(Unsure {
            reason: "its first records hold no capture and no WAT metadata".into(),
            candidates: vec![Format::Warc, Format::Wat],
        }),
        _ => Err(Unsure {
            reason: format!(
                "its first records are {other_metadata} `metadata` record(s) that are not \
                 WAT JSON and {wat_records} that are, and no capture"
            ),
            candidates: vec![Format::Warc, Format::Wat],
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: &str, content_type: &str, body: &str) -> String {
        format!(
            "WARC/1.0\r\nWARC-Type: {kind}\r\nContent-Type: {content_type}\r\n\
             Content-Length: {}\r\n\r\n{body}\r\n\r\n",
            body.len()
        )
    }

    const INFO: &str = "software: x\r\n";
    const WAT_JSON: &str = r#"{"Container": {}, "Envelope": {"Format": "WARC"}}"#;

    fn warc(records: &[String]) -> Vec<u8> {
        let mut file = record("warcinfo", "application/warc-fields", INFO);
        file.push_str(&records.concat());
        file.into_bytes()
    }

    #[test]
    fn detect_formats() {
        assert_eq!(detect(b"http://a/\nhttp://b/\n"), Ok(Format::Lines));
        assert_eq!(detect(b""), Ok(Format::Lines));
        assert_eq!(detect(b"PAR1\x15\x04"), Ok(Format::Parquet));
        assert_eq!(
            detect(b"com,a)/ 20240101000000 {\"url\": \"http://a/\"}\n"),
            Ok(Format::Cdxj)
        );
        assert_eq!(detect(b" CDX N b a m s k r M S V g\n"), Ok(Format::Cdx));
        assert_eq!(
            detect(b"com,a)/ 20240101000000 http://a/ text/html 200 K - - 100 5 f.warc.gz\n"),
            Ok(Format::Cdx)
        );
        let response = record("response", "application/http; msgtype=response", "x");
        assert_eq!(
            detect(&warc(std::slice::from_ref(&response))),
            Ok(Format::Warc)
        );
        let wat = record("metadata", "application/json", WAT_JSON);
        assert_eq!(detect(&warc(&[wat.clone(), wat.clone()])), Ok(Format::Wat));
        assert_eq!(
            detect(b"filedesc://x.arc 0.0.0.0 19960101000000 text/plain 3\n1 0\n"),
            Ok(Format::Arc)
        );
        // URLs with spaces or digits are still lines.
        assert_eq!(detect(b"http://a/ 20240101000000 x\n"), Ok(Format::Lines));
    }

    #[test]
    fn detect_warc_with_json_metadata_first_is_a_warc() {
        // warcio and Heritrix write a JSON (or other) metadata record
        // before the captures.
        let meta = record("metadata", "application/json", r#"{"crawler": "x"}"#);
        let response = record("response", "application/http; msgtype=response", "x");
        assert_eq!(detect(&warc(&[meta.clone(), response])), Ok(Format::Warc));
        // Without a capture in the first bytes, and more to come: unsure.
        let mut long = warc(std::slice::from_ref(&meta));
        long.resize(DETECT_BYTES, b'x');
        let unsure = detect(&long).unwrap_err();
        assert_eq!(unsure.candidates, [Format::Warc, Format::Wat]);
        assert!(unsure
            .message("f.warc")
            .contains("pass --format warc or --format wat"));
        // The whole file: nothing for either reader, read as a WARC.
        assert_eq!(detect(&warc(&[meta])), Ok(Format::Warc));
    }

    #[test]
    fn detect_wat_with_content_type_parameters() {
        let wat = record("metadata", "application/json; charset=UTF-8", WAT_JSON);
        assert_eq!(detect(&warc(&[wat])), Ok(Format::Wat));
        let wat = record("metadata", "Application/JSON", WAT_JSON);
        assert_eq!(detect(&warc(&[wat])), Ok(Format::Wat));
    }

    #[test]
    fn detect_openwayback_cdxj_header_lines() {
        let file = b"!OpenWayback-CDXJ 1.0\n!meta {\"x\": 1}\n\
                     com,a)/ 20240101000000 {\"url\": \"http://a/\"}\n";
        assert_eq!(detect(file), Ok(Format::Cdxj));
        let only = detect(b"!OpenWayback-CDXJ 1.0\n").unwrap_err();
        assert_eq!(only.candidates, [Format::Cdxj, Format::Lines]);
        assert!(detect(b"!OpenWayback-CDXJ 1.0\nhttp://a/\n").is_err());
        // Other lines that start with `!` are lines.
        assert_eq!(detect(b"!a\nhttp://a/\n"), Ok(Format::Lines));
    }
}
