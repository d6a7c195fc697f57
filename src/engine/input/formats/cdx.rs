//! Legacy CDX index lines: space-separated fields named by a header line
//! ` CDX N b a m s k r M S V g` (the Internet Archive's CDX file format,
//! <https://archive.org/web/researcher/cdx_file_format.php>: `N` massaged
//! URL, `b` date, `a` original URL, `m` MIME type, `s` response code, `k`
//! checksum, `r` redirect, `M` meta tags, `S` compressed record size, `V`
//! compressed offset, `g` file name). The 11-field (`N b a m s k r M S V
//! g`) and 9-field (`N b a m s k r V g`) layouts both have the original
//! URL third; a header line puts it where its `a` is.

use crate::engine::Problem;

/// The original-URL column of both common layouts (0-based).
pub const DEFAULT_COLUMN: usize = 2;

/// True for a header line (` CDX` and field letters).
#[inline]
pub fn is_header(line: &[u8]) -> bool {
    line.starts_with(b" CDX ") || line == b" CDX"
}

/// The original-URL column (0-based) a header line names, or `None` when
/// it has no `a`. The letters follow ` CDX`, one per field.
pub fn column_of_header(line: &[u8]) -> Option<usize> {
    let letters = line.strip_prefix(b" CDX")?;
    letters
        .split(|&b| b == b' ')
        .filter(|l| !l.is_empty())
        .position(|l| l == b"a")
}

/// The URL in column `column` of a CDX line, with its offset.
///
/// # Errors
/// A line with fewer columns is [`Problem::MissingField`], at its end.
#[inline]
pub fn url(line: &[u8], column: usize) -> Result<(usize, &[u8]), (usize, Problem)> {
    let mut start = 0usize;
    let mut spaces = memchr::memchr_iter(b' ', line);
    for _ in 0..column {
        start = spaces.next().ok_or((line.len(), Problem::MissingField))? + 1;
    }
    let end = spaces.next().unwrap_or(line.len());
    Ok((start, &line[start..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdx_header_and_columns() {
        assert!(is_header(b" CDX N b a m s k r M S V g"));
        assert!(!is_header(b"CDX N b a"));
        assert_eq!(column_of_header(b" CDX N b a m s k r M S V g"), Some(2));
        assert_eq!(column_of_header(b" CDX a b"), Some(0));
        assert_eq!(column_of_header(b" CDX N b m"), None);
        let line = b"com,example)/ 20240101000000 http://example.com/ text/html 200 AAA - - 512 0 f.warc.gz";
        assert_eq!(url(line, 2), Ok((29, &b"http://example.com/"[..])));
        assert_eq!(url(b"a b", 2), Err((3, Problem::MissingField)));
    }
}
