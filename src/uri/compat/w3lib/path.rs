//! The path: decoded and re-encoded (`requote_path`), dot segments
//! removed as w3lib removes them, and the `;params` of its last segment.

use super::escapes::{escape_digits, kept_escapes, skip_plain};
use super::sets::{path_stop_lanes, PATH_DECODED, PATH_KEPT, PATH_SAFEST, PATH_STOP};
use crate::uri::compat::bytes::{self, push_escape, quote, HEX_UPPER};
use crate::uri::lanes::Lanes;

/// Appends the final path of `after` (what follows the authority) to
/// `out`: decoded and re-encoded, dot segments resolved, then the
/// `;params` of the last segment (with `params`) as the first pass made
/// them safe. Returns the length of the raw path: it ends at the first `?`
/// or `#`, which the re-encoding finds on its way. Without `dots` (see
/// [`Scan`]) the path has no dot segment.
///
/// `requote_path` of the raw path equals the reference's second pass over
/// its first: a byte the first pass escapes is decoded back and escaped
/// again unless it is path-safe (`[`, `]`, `|`), which is what the raw
/// byte gets; `/` and `;` are never escaped, so segments and params are
/// where they were.
pub(super) fn write_path(
    after: &[u8],
    params: bool,
    dots: bool,
    out: &mut Vec<u8>,
    tmp: &mut Vec<u8>,
) -> usize {
    let at = out.len();
    let (len, semicolon) = requote_path(after, out);
    let path = &after[..len];
    // Most paths have no `;`; one that has params is re-encoded without them.
    let params_at = if params && semicolon {
        let from = path.iter().rposition(|&b| b == b'/').map_or(0, |i| i + 1);
        path[from..]
            .iter()
            .position(|&b| b == b';')
            .map(|i| from + i)
    } else {
        None
    };
    if let Some(p) = params_at {
        out.truncate(at);
        requote_path(&path[..p], out);
    }
    if out.len() == at {
        // `urlunsplit` gives an empty path of a URL with a netloc or query a
        // `/`, and w3lib's `path or "/"` does it otherwise.
        out.push(b'/');
    }
    if dots && out[at] == b'/' {
        remove_dot_segments(out, at, tmp);
    }
    // Empty params (a trailing `;`) vanish: `urlunparse` tests `if params`.
    if let Some(p) = params_at.filter(|&p| p + 1 < path.len()) {
        quote(&path[p..], &PATH_SAFEST, out);
    }
    len
}

/// `_quote(_unquotepath(path), _PATH_SAFE_CHARS)`: decodes every escape
/// except `%25`, `%2F`, `%3B` and `%3F` (kept, with uppercase hex), then
/// escapes what is not path-safe, with uppercase hex. The path is `p` up
/// to its first `?` or `#`; returns its length and whether it has a `;`.
///
/// An escape never reaches past the path: its two hex digits would have to
/// be `?` or `#`.
pub(super) fn requote_path(p: &[u8], out: &mut Vec<u8>) -> (usize, bool) {
    let mut semicolon = false;
    // The bytes written as they are (plain ones, `;`, escapes kept as they
    // are) are copied in one piece, from `from`, when a byte that changes or
    // the end is reached: one copy for most paths, and few for those full of
    // escapes (`%D8%A7%D9%84-%D8...`).
    let mut from = 0;
    // Most of a path is plain: the first search goes 16 bytes at a time.
    let mut i = bytes::find(p, path_stop_lanes, |b| PATH_STOP[b as usize]).unwrap_or(p.len());
    while let Some(&b) = p.get(i) {
        match b {
            b'?' | b'#' => break,
            b';' => {
                semicolon = true;
                i += 1;
            }
            b'%' => match kept_escapes(&p[i..], &PATH_KEPT) {
                0 => {
                    out.extend_from_slice(&p[from..i]);
                    i += requote_escape(p, i, out);
                    from = i;
                }
                n => i += n,
            },
            // A plain byte that `path_stop_lanes` flags too.
            _ if !PATH_STOP[b as usize] => i += 1,
            // Any other stop is neither plain nor `%`: not path-safe.
            _ => {
                out.extend_from_slice(&p[from..i]);
                push_escape(b, out);
                i += 1;
                from = i;
            }
        }
        i = skip_plain(p, i, &PATH_STOP, path_stop_lanes);
    }
    out.extend_from_slice(&p[from..i]);
    (i, semicolon)
}

/// The `%` at `p[i]` as the path pass writes it: an escape decoded (or kept
/// or re-escaped, with uppercase hex), or a literal `%`. Returns the bytes
/// read.
#[inline(always)]
pub(super) fn requote_escape(p: &[u8], i: usize, out: &mut Vec<u8>) -> usize {
    let Some((h, l)) = escape_digits(p, i) else {
        out.push(b'%');
        return 1;
    };
    let d = h << 4 | l;
    if PATH_DECODED[d as usize] {
        out.push(d);
    } else {
        // The same escape, its digits in uppercase.
        out.extend_from_slice(&[b'%', HEX_UPPER[h as usize], HEX_UPPER[l as usize]]);
    }
    3
}

/// w3lib's `_remove_dot_segments` on `path[at..]`, which starts with `/`:
/// a `..` drops the last kept segment (none above the root), a trailing `.`
/// or `..` leaves the path ending in `/`.
pub(super) fn remove_dot_segments(path: &mut Vec<u8>, at: usize, tmp: &mut Vec<u8>) {
    if !has_dot_segment(&path[at..]) {
        return;
    }
    // Kept segments are stored in `tmp`, each with its leading `/`; a `..`
    // truncates back to the previous `/`.
    tmp.clear();
    let mut segs = path[at + 1..].split(|&b| b == b'/').peekable();
    while let Some(seg) = segs.next() {
        let last = segs.peek().is_none();
        match seg {
            b".." | b"." => {
                if seg == b".." {
                    let cut = tmp.iter().rposition(|&b| b == b'/').unwrap_or(0);
                    tmp.truncate(cut);
                }
                if last {
                    tmp.push(b'/');
                }
            }
            _ => {
                tmp.push(b'/');
                tmp.extend_from_slice(seg);
            }
        }
    }
    path.truncate(at);
    path.extend_from_slice(tmp);
}

/// Does `path` hold a `/.`? Tested 16 byte pairs at a time: most paths
/// have dots, in file names, but no dot segment, and `memchr` stopped at
/// each dot.
pub(super) fn has_dot_segment(path: &[u8]) -> bool {
    let Some(last) = path.len().checked_sub(17) else {
        return path.windows(2).any(|w| w == b"/.");
    };
    any_pair_block(path, last, |a, b| (a.eq(b'/') & b.eq(b'.')).bits() != 0)
}

/// Calls `f` on the 16 bytes at `at` and the 16 one byte on, for `at` =
/// 0, 16, 32, ... and last `last` = `s.len() - 17` (overlapping the block
/// before), so that every byte pair of `s` starts in one of them; stops
/// when `f` says so, and tells whether it did. (Written as a loop: an
/// iterator chain here cost 6% more instructions over the ISCX list.)
#[inline(always)]
pub(super) fn any_pair_block(
    s: &[u8],
    last: usize,
    mut f: impl FnMut(Lanes, Lanes) -> bool,
) -> bool {
    let mut j = 0;
    loop {
        let at = j.min(last);
        let (Some(a), Some(b)) = (
            s.get(at..).and_then(<[u8]>::first_chunk::<16>),
            s.get(at + 1..).and_then(<[u8]>::first_chunk::<16>),
        ) else {
            return false;
        };
        if f(Lanes::load(a), Lanes::load(b)) {
            return true;
        }
        if at == last {
            return false;
        }
        j += 16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_segments_found_at_every_offset() {
        for len in 0..48 {
            for at in 0..len.max(1) {
                let mut path = vec![b'a'; len];
                if at + 1 < len {
                    path[at] = b'/';
                    path[at + 1] = b'.';
                }
                let naive = path.windows(2).any(|w| w == b"/.");
                assert_eq!(has_dot_segment(&path), naive, "{len} {at}");
            }
        }
    }
}
