//! Tier one of [`uri_key`](super::Canonicalizer::uri_key): a one-pass
//! proof that a line is already canonical, so the line itself is the key.

use super::scan::{class, skip, F_HOST, F_PATH_PLAIN, F_QUERY_PLAIN, F_UPHEX};
use crate::uri::table;

/// Is `s[i..i + 3]` an escape with upper-case hex of an octet that must
/// stay encoded (not an unreserved character)?
#[inline(always)]
fn good_escape(s: &[u8], i: usize) -> bool {
    let (Some(&b1), Some(&b2)) = (s.get(i + 1), s.get(i + 2)) else {
        return false;
    };
    if class(b1) & class(b2) & F_UPHEX == 0 {
        return false;
    }
    let hi = if b1 <= b'9' {
        b1 - b'0'
    } else {
        b1 - b'A' + 10
    };
    let lo = if b2 <= b'9' {
        b2 - b'0'
    } else {
        b2 - b'A' + 10
    };
    !table::is_unreserved(hi << 4 | lo)
}

/// Does a path segment end at `j` (end, `/`, `?` or `#`)?
#[inline(always)]
fn segment_ends(s: &[u8], j: usize) -> bool {
    !matches!(s.get(j), Some(b) if !matches!(b, b'/' | b'?' | b'#'))
}

/// Proves in one pass that `s` is a valid URI that every flag of the fast
/// set leaves unchanged, apart from dropping its fragment (when
/// `remove_fragment`) or an empty query at its end (when
/// `remove_empty_query`): returns the length of the key, which is then a
/// prefix of `s`. The shape is `http(s)://host[:port]/path[?query][#fragment]`
/// with a lower-case `[a-z0-9-._~]` host that is not a number-like (IPv4)
/// host and has no trailing dot, a non-empty port without leading zero that
/// is not the default, a non-empty path without dot-segments, and only
/// upper-case escapes of octets that must stay encoded. `None` means "not
/// proven": the slow path decides.
///
/// Runs of ordinary bytes are skipped eight at a time with a table; only
/// `.`, `%`, `?` and `#` stop the scan.
#[doc(hidden)]
#[inline]
pub fn fast_key_len(s: &[u8], remove_fragment: bool, remove_empty_query: bool) -> Option<usize> {
    let (start, default_port): (usize, &[u8]) = if s.starts_with(b"https://") {
        (8, b"443")
    } else if s.starts_with(b"http://") {
        (7, b"80")
    } else {
        return None;
    };
    let n = s.len();

    // Host.
    let mut i = skip(s, start, F_HOST);
    let host = &s[start..i];
    let &last = host.last()?;
    if last == b'.' {
        return None;
    }
    let label = host.iter().rposition(|&b| b == b'.').map_or(0, |p| p + 1);
    if host[label].is_ascii_digit() {
        return None; // may be an IPv4 number form
    }

    // Port.
    if i < n && s[i] == b':' {
        let port_start = i + 1;
        i = port_start;
        while i < n && s[i].is_ascii_digit() {
            i += 1;
        }
        let port = &s[port_start..i];
        if port.is_empty() || port[0] == b'0' || port == default_port {
            return None;
        }
    }

    // Path: must start with "/" (an empty path is the slow path's).
    if i == n || s[i] != b'/' {
        return None;
    }
    loop {
        i = skip(s, i, F_PATH_PLAIN);
        if i == n {
            return Some(n);
        }
        match s[i] {
            b'.' => {
                // s[i - 1] exists: the path starts with '/'.
                if s[i - 1] == b'/'
                    && (segment_ends(s, i + 1)
                        || (s.get(i + 1) == Some(&b'.') && segment_ends(s, i + 2)))
                {
                    return None;
                }
                i += 1;
            }
            b'%' if good_escape(s, i) => i += 3,
            b'?' => break,
            b'#' => return fragment(s, i, remove_fragment),
            _ => return None,
        }
    }

    // Query: s[i] == '?'.
    let question = i;
    i += 1;
    if remove_empty_query && (i == n || s[i] == b'#') {
        // The key ends before the '?', if the fragment goes too.
        return match fragment(s, i, remove_fragment)? {
            end if end == i => Some(question),
            _ => None,
        };
    }
    loop {
        i = skip(s, i, F_QUERY_PLAIN);
        if i == n {
            return Some(n);
        }
        match s[i] {
            b'%' if good_escape(s, i) => i += 3,
            b'#' => return fragment(s, i, remove_fragment),
            _ => return None,
        }
    }
}

/// [`fast_key_len`] when the key must be the whole input.
#[doc(hidden)]
#[inline]
pub fn fast_canonical(s: &[u8], remove_fragment: bool, remove_empty_query: bool) -> bool {
    fast_key_len(s, remove_fragment, remove_empty_query) == Some(s.len())
}

/// The fragment part of [`fast_key_len`], from `i` (at a `#` or the end):
/// checks the fragment and returns the key length (`i` when the fragment
/// is removed, the input length when it stays).
#[inline(always)]
fn fragment(s: &[u8], i: usize, remove_fragment: bool) -> Option<usize> {
    let n = s.len();
    if i == n {
        return Some(n);
    }
    let mut j = i + 1;
    loop {
        j = skip(s, j, F_QUERY_PLAIN);
        if j == n {
            return Some(if remove_fragment { i } else { n });
        }
        if s[j] == b'%' && good_escape(s, j) {
            j += 3;
        } else {
            return None;
        }
    }
}
