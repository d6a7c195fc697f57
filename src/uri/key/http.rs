//! Tier two of [`uri_key`](super::Canonicalizer::uri_key): a one-pass
//! writer of the normalized form of an `http(s)://host[:port]/path?query#frag`
//! line, straight from its bytes.
//!
//! Crawl dumps hold many spellings of one URL (`HTTP://Example.COM:80/%7euser`)
//! that tier one cannot prove canonical. For those, the general path parses
//! into a [`UriRef`](crate::uri::UriRef), then the
//! [`Normalizer`](crate::uri::normalize::Normalizer) walks every component
//! again. This writer checks and writes in the same pass instead, and hands
//! anything it does not cover to the general path (`None`): another scheme,
//! userinfo, an IP-literal, an empty host, a host byte outside
//! `ALPHA DIGIT - . _ ~`, any invalid byte or escape, and, under the crawl
//! host rules, a host they might rewrite. It covers only flag sets within
//! [`FAST_SAFE`](super::FAST_SAFE); the tests check that it writes exactly
//! what the general path writes.

use super::scan::{skip, F_HOST_ANY, F_PATH, F_QUERY_PLAIN};
use crate::uri::normalize::{has_dot_segment, remove_dot_segments, Flag, Flags};
use crate::uri::scheme;
use crate::uri::table::{self, HEX_UPPER};

/// The flags of one canonicalizer, read once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct HttpWriter {
    enabled: bool,
    lowercase_scheme: bool,
    lowercase_host: bool,
    upper: bool,
    decode: bool,
    dot_segments: bool,
    empty_port: bool,
    default_port: bool,
    empty_path_slash: bool,
    remove_fragment: bool,
    remove_empty_query: bool,
    /// `ipv4-canonical`, `idna` or `remove-trailing-host-dot` is on: hosts
    /// those rules could rewrite go to the general path.
    host_rules: bool,
}

impl HttpWriter {
    /// The writer for `flags`; `enabled` says whether the flags allow it.
    pub(super) fn new(flags: Flags, enabled: bool) -> Self {
        Self {
            enabled,
            lowercase_scheme: flags.has(Flag::LowercaseScheme),
            lowercase_host: flags.has(Flag::LowercaseHost),
            upper: flags.has(Flag::UppercaseEscapes),
            decode: flags.has(Flag::DecodeUnreserved),
            dot_segments: flags.has(Flag::RemoveDotSegments),
            empty_port: flags.has(Flag::RemoveEmptyPort),
            default_port: flags.has(Flag::RemoveDefaultPort),
            empty_path_slash: flags.has(Flag::EmptyPathSlash),
            remove_fragment: flags.has(Flag::RemoveFragment),
            remove_empty_query: flags.has(Flag::RemoveEmptyQuery),
            host_rules: flags.has(Flag::Ipv4Canonical)
                || flags.has(Flag::Idna)
                || flags.has(Flag::RemoveTrailingHostDot),
        }
    }

    /// Is the writer on?
    #[inline(always)]
    pub(super) fn enabled(&self) -> bool {
        self.enabled
    }

    /// Writes the normalized form of `s` into `out` (cleared first), using
    /// `tmp` for dot-segment removal. `None`: `s` is not a line this writer
    /// covers (it may still be valid); `out` then holds garbage.
    #[inline]
    pub(super) fn write(&self, s: &[u8], out: &mut Vec<u8>, tmp: &mut Vec<u8>) -> Option<()> {
        out.clear();
        if s.len() >= u32::MAX as usize {
            return None; // the parser's TooLong error
        }
        let (scheme_len, default_port): (usize, u16) = match s.first_chunk::<6>() {
            Some(h) if h[..5].eq_ignore_ascii_case(b"http:") => (4, 80),
            Some(h) if h.eq_ignore_ascii_case(b"https:") => (5, 443),
            _ => return None,
        };
        if s.get(scheme_len + 1..scheme_len + 3) != Some(b"//") {
            return None;
        }
        if self.lowercase_scheme {
            out.extend_from_slice(if scheme_len == 4 { b"http" } else { b"https" });
        } else {
            out.extend_from_slice(&s[..scheme_len]);
        }
        out.extend_from_slice(b"://");

        let mut i = self.host(s, scheme_len + 3, out)?;

        // Port: `*DIGIT` (§3.2.3).
        if s.get(i) == Some(&b':') {
            let start = i + 1;
            i = start;
            while s.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            let port = &s[start..i];
            let drop = if port.is_empty() {
                self.empty_port
            } else {
                self.default_port && scheme::is_port(port, default_port)
            };
            if !drop {
                out.push(b':');
                out.extend_from_slice(port);
            }
        }

        // The authority ends at the path, query, fragment or end (the
        // general path reads userinfo, sub-delims and the rest).
        if !matches!(s.get(i), None | Some(b'/' | b'?' | b'#')) {
            return None;
        }

        // Path: path-abempty.
        let path_start = out.len();
        i = self.copy_escaped(s, i, F_PATH, out)?;
        if !matches!(s.get(i), None | Some(b'?' | b'#')) {
            return None;
        }
        if self.dot_segments && has_dot_segment(&out[path_start..]) {
            tmp.clear();
            tmp.extend_from_slice(&out[path_start..]);
            out.truncate(path_start);
            remove_dot_segments(tmp, out);
        }
        if self.empty_path_slash && out.len() == path_start {
            out.push(b'/');
        }

        // Query.
        if s.get(i) == Some(&b'?') {
            let start = out.len();
            out.push(b'?');
            i = self.copy_escaped(s, i + 1, F_QUERY_PLAIN, out)?;
            if self.remove_empty_query && out.len() == start + 1 {
                out.pop();
            }
        }

        // Fragment: checked even when it is dropped.
        if s.get(i) == Some(&b'#') {
            let start = out.len();
            out.push(b'#');
            i = self.copy_escaped(s, i + 1, F_QUERY_PLAIN, out)?;
            if self.remove_fragment {
                out.truncate(start);
            }
        }
        (i == s.len()).then_some(())
    }

    /// Writes the host that starts at `s[i]`; returns where it ends.
    #[inline(always)]
    fn host(&self, s: &[u8], mut i: usize, out: &mut Vec<u8>) -> Option<usize> {
        let start = out.len();
        let mut kept_escape = false;
        loop {
            let j = skip(s, i, F_HOST_ANY);
            let run = out.len();
            out.extend_from_slice(&s[i..j]);
            if self.lowercase_host {
                out[run..].make_ascii_lowercase();
            }
            i = j;
            if s.get(i) != Some(&b'%') {
                break;
            }
            let (h, l, byte) = escape_at(s, i)?;
            if self.decode && table::is_unreserved(byte) {
                out.push(if self.lowercase_host {
                    byte.to_ascii_lowercase()
                } else {
                    byte
                });
            } else {
                kept_escape = true;
                self.push_escape(h, l, byte, out);
            }
            i += 3;
        }
        let host = &out[start..];
        let &last = host.last()?; // an empty host is the general path's
        if self.host_rules {
            // Idna reads escapes; ipv4-canonical reads number-like hosts,
            // whose last label starts with a digit; the trailing dot rule
            // reads the last byte.
            let label = host.iter().rposition(|&b| b == b'.').map_or(0, |p| p + 1);
            if kept_escape || last == b'.' || host.get(label).is_some_and(u8::is_ascii_digit) {
                return None;
            }
        }
        Some(i)
    }

    /// Copies bytes of class `plain` and escapes (with the escape rules)
    /// from `s[i]`; returns the index of the first other byte (or the end).
    /// `None` for an invalid escape.
    #[inline(always)]
    fn copy_escaped(&self, s: &[u8], mut i: usize, plain: u8, out: &mut Vec<u8>) -> Option<usize> {
        loop {
            let j = skip(s, i, plain);
            out.extend_from_slice(&s[i..j]);
            i = j;
            if s.get(i) != Some(&b'%') {
                return Some(i);
            }
            let (h, l, byte) = escape_at(s, i)?;
            if self.decode && table::is_unreserved(byte) {
                out.push(byte);
            } else {
                self.push_escape(h, l, byte, out);
            }
            i += 3;
        }
    }

    /// Writes an escape that stays encoded.
    #[inline(always)]
    fn push_escape(&self, h: u8, l: u8, byte: u8, out: &mut Vec<u8>) {
        if self.upper {
            out.extend_from_slice(&[
                b'%',
                HEX_UPPER[usize::from(byte >> 4)],
                HEX_UPPER[usize::from(byte & 0xf)],
            ]);
        } else {
            out.extend_from_slice(&[b'%', h, l]);
        }
    }
}

/// The two hex digits at `s[i + 1]`, `s[i + 2]` (`s[i]` is `%`) and the
/// octet they encode.
#[inline(always)]
fn escape_at(s: &[u8], i: usize) -> Option<(u8, u8, u8)> {
    let (&h, &l) = (s.get(i + 1)?, s.get(i + 2)?);
    let byte = table::hex_value(h)? << 4 | table::hex_value(l)?;
    Some((h, l, byte))
}

#[cfg(test)]
mod tests {
    use super::super::scan::class;
    use super::*;

    fn is(b: u8, c: u8) -> bool {
        class(b) & c != 0
    }

    #[test]
    fn classes_match_the_rfc_tables() {
        for b in 0..=255u8 {
            assert_eq!(is(b, F_HOST_ANY), table::is_unreserved(b), "{b:#x}");
            assert_eq!(
                is(b, F_PATH),
                table::is(b, table::PCHAR) || b == b'/',
                "{b:#x}"
            );
            assert_eq!(is(b, F_QUERY_PLAIN), table::is(b, table::QUERY), "{b:#x}");
        }
    }
}
