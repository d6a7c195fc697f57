//! Recognising an input's format from its first (decompressed) bytes, when
//! `--format` is not given. Plain lines are the default: only content that
//! no URL list has is taken for another format.
//!
//! - `PAR1` at the start: Parquet (the magic of the Parquet file format,
//!   which is also its last four bytes).
//! - `WARC/1.` at the start: WARC; WAT (a WARC file of `metadata` records
//!   whose bodies are JSON) when its first record that is not `warcinfo`
//!   is a `metadata` record of `Content-Type: application/json`.
//! - A first non-blank line ` CDX ...`, or of 9 or 11 space-separated
//!   fields whose second is a 14-digit timestamp: CDX.
//! - A first non-blank line `SURT TIMESTAMP {`: CDXJ.

use super::cdx;
use super::Format;

/// Bytes of an input's start [`detect`] looks at.
pub const DETECT_BYTES: usize = 64 << 10;

/// The format `head` (an input's first bytes, decompressed) is in.
pub fn detect(head: &[u8]) -> Format {
    if head.starts_with(b"PAR1") {
        return Format::Parquet;
    }
    let head = head.strip_prefix(super::super::lines::BOM).unwrap_or(head);
    if head.starts_with(b"WARC/1.") {
        return if is_wat(head) {
            Format::Wat
        } else {
            Format::Warc
        };
    }
    let Some(line) = head
        .split(|&b| b == b'\n')
        .map(super::super::lines::trim_cr)
        .find(|l| !l.is_empty())
    else {
        return Format::Lines;
    };
    if cdx::is_header(line) {
        return Format::Cdx;
    }
    let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    let timestamp = |f: &[u8]| (4..=14).contains(&f.len()) && f.iter().all(u8::is_ascii_digit);
    if fields.len() >= 3 && timestamp(fields[1]) && fields[2].first() == Some(&b'{') {
        return Format::Cdxj;
    }
    if (fields.len() == 9 || fields.len() == 11) && fields[1].len() == 14 && timestamp(fields[1]) {
        return Format::Cdx;
    }
    Format::Lines
}

/// True when the first record of `head` that is not `warcinfo` is a
/// `metadata` record with a JSON body.
fn is_wat(head: &[u8]) -> bool {
    let mut rest = head;
    while let Some(at) = memchr::memmem::find(rest, b"WARC/1.") {
        let record = &rest[at..];
        let end = memchr::memmem::find(record, b"\r\n\r\n").unwrap_or(record.len());
        let headers = &record[..end];
        let has = |name: &[u8], value: &[u8]| {
            headers.split(|&b| b == b'\n').any(|l| {
                let l = super::super::lines::trim_cr(l);
                l.len() > name.len()
                    && l[..name.len()].eq_ignore_ascii_case(name)
                    && l[name.len()..].trim_ascii().eq_ignore_ascii_case(value)
            })
        };
        if !has(b"WARC-Type:", b"warcinfo") {
            return has(b"WARC-Type:", b"metadata") && has(b"Content-Type:", b"application/json");
        }
        rest = &record[end.min(record.len())..];
        if end == record.len() {
            break;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detect_formats() {
        assert_eq!(detect(b"http://a/\nhttp://b/\n"), Format::Lines);
        assert_eq!(detect(b""), Format::Lines);
        assert_eq!(detect(b"PAR1\x15\x04"), Format::Parquet);
        assert_eq!(
            detect(b"com,a)/ 20240101000000 {\"url\": \"http://a/\"}\n"),
            Format::Cdxj
        );
        assert_eq!(detect(b" CDX N b a m s k r M S V g\n"), Format::Cdx);
        assert_eq!(
            detect(b"com,a)/ 20240101000000 http://a/ text/html 200 K - - 100 5 f.warc.gz\n"),
            Format::Cdx
        );
        assert_eq!(
            detect(b"WARC/1.0\r\nWARC-Type: warcinfo\r\n\r\nx\r\n\r\nWARC/1.0\r\nWARC-Type: response\r\n\r\n"),
            Format::Warc
        );
        assert_eq!(
            detect(b"WARC/1.0\r\nWARC-Type: warcinfo\r\n\r\nx\r\n\r\nWARC/1.0\r\nWARC-Type: metadata\r\nContent-Type: application/json\r\n\r\n{}"),
            Format::Wat
        );
        // URLs with spaces or digits are still lines.
        assert_eq!(detect(b"http://a/ 20240101000000 x\n"), Format::Lines);
    }
}
