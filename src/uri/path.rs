//! Dot-segment removal (RFC 3986 §5.2.4), used by resolution (§5.2.2)
//! and by normalization (§6.2.2.3): the general remover, which copies, and
//! the fast tier's remover, which works in place. They sit side by side
//! so that the tests can hold one against the other.

/// Does the path hold a `.` or `..` segment?
pub(crate) fn has_dot_segment(path: &[u8]) -> bool {
    // A dot-segment starts at a '.' that begins a segment, and ends at the
    // end or at a '/' after one or two dots.
    let ends = |q: usize| !matches!(path.get(q), Some(&b) if b != b'/');
    memchr::memchr_iter(b'.', path).any(|p| {
        let starts = p == 0 || path[p - 1] == b'/';
        starts && (ends(p + 1) || (path.get(p + 1) == Some(&b'.') && ends(p + 2)))
    })
}

/// `remove_dot_segments` of RFC 3986 §5.2.4, appending the result to `out`.
///
/// The loop follows the five rules of the RFC on a shrinking input slice;
/// "remove the last segment and its preceding '/' (if any) from the output
/// buffer" truncates `out` back to its last `/` after `base`.
pub fn remove_dot_segments(input: &[u8], out: &mut Vec<u8>) {
    let base = out.len();
    let pop = |out: &mut Vec<u8>| {
        let cut = out[base..]
            .iter()
            .rposition(|&b| b == b'/')
            .map_or(base, |p| base + p);
        out.truncate(cut);
    };
    let mut rest = input;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix(b"../") {
            rest = r; // A
        } else if let Some(r) = rest.strip_prefix(b"./") {
            rest = r; // A
        } else if rest.starts_with(b"/./") {
            rest = &rest[2..]; // B: "/./" becomes "/"
        } else if rest == b"/." {
            out.push(b'/'); // B: "/." becomes "/", which E then moves
            break;
        } else if rest.starts_with(b"/../") {
            rest = &rest[3..]; // C: "/../" becomes "/"
            pop(out);
        } else if rest == b"/.." {
            pop(out); // C: "/.." becomes "/"
            out.push(b'/');
            break;
        } else if rest == b"." || rest == b".." {
            break; // D
        } else {
            // E: move the first segment, with its leading "/" if any.
            let skip = usize::from(rest[0] == b'/');
            let end = rest[skip..]
                .iter()
                .position(|&b| b == b'/')
                .map_or(rest.len(), |p| p + skip);
            out.extend_from_slice(&rest[..end]);
            rest = &rest[end..];
        }
    }
}

/// `remove_dot_segments` (RFC 3986 §5.2.4) of the path at `out[start..]`,
/// which is empty or starts with `/`, in place; `out[from]` is the `/`
/// before the first segment that may be a dot segment (or `from` is
/// `start`).
///
/// For such a path the five rules of the RFC amount to a stack of
/// segments: a `.` segment is dropped, a `..` segment drops the segment
/// before it (if any), and either one leaves a trailing `/` when it is the
/// last. The result is never longer than the path, so it is written over
/// it. The plain segments between two dot segments move as one piece:
/// most paths have one dot segment, and their key is then two copies
/// instead of one per segment. The tests compare it with
/// [`remove_dot_segments`] on every short path.
pub(crate) fn remove_dot_segments_in_place(out: &mut Vec<u8>, start: usize, from: usize) {
    let end = out.len();
    // Segments before `from` (a '/' in the path, or its start) are plain:
    // they stay where they are.
    let from = from.clamp(start, end);
    let mut r = from; // at the '/' before the next segment
    let mut w = from; // end of the output path
    while r < end {
        let Some(dots) = dot_segment_at(out, r) else {
            let next = next_slash_dot(out, r, end);
            if w != r {
                out.copy_within(r..next, w);
            }
            w += next - r;
            r = next;
            continue;
        };
        if dots == 2 {
            // Drop the last output segment and its '/'.
            while w > start {
                w -= 1;
                if out[w] == b'/' {
                    break;
                }
            }
        }
        r += 1 + dots;
        if r == end {
            out[w] = b'/';
            w += 1;
        }
    }
    out.truncate(w);
}

/// The length (1 or 2) of the `.` or `..` segment after the `/` at
/// `out[r]`, if that segment is one.
#[inline]
fn dot_segment_at(out: &[u8], r: usize) -> Option<usize> {
    let ends = |k: usize| matches!(out.get(r + k), None | Some(b'/'));
    match (out.get(r + 1), out.get(r + 2)) {
        (Some(b'.'), _) if ends(2) => Some(1),
        (Some(b'.'), Some(b'.')) if ends(3) => Some(2),
        _ => None,
    }
}

/// The first `/` after the one at `out[r]` that a `.` follows (where a dot
/// segment may start), or `end`.
fn next_slash_dot(out: &[u8], r: usize, end: usize) -> usize {
    let mut at = r + 2;
    while let Some(p) = out.get(at..end).and_then(|rest| memchr::memchr(b'.', rest)) {
        let dot = at + p;
        if out[dot - 1] == b'/' {
            return dot - 1;
        }
        at = dot + 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_segments_in_place_match_the_rfc_algorithm() {
        // Every path of up to nine bytes over "/", ".", "a" that starts
        // with "/", and the empty path.
        let mut paths = vec![Vec::new()];
        let mut frontier = vec![b"/".to_vec()];
        for _ in 0..9 {
            let mut next = Vec::new();
            for p in &frontier {
                for b in [b'/', b'.', b'a'] {
                    let mut q = p.clone();
                    q.push(b);
                    next.push(q);
                }
            }
            paths.append(&mut frontier);
            frontier = next;
        }
        paths.append(&mut frontier);
        assert!(paths.len() > 9000);
        for path in paths {
            let mut want = b"http://h".to_vec();
            remove_dot_segments(&path, &mut want);
            let mut got = b"http://h".to_vec();
            got.extend_from_slice(&path);
            remove_dot_segments_in_place(&mut got, 8, 8);
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&path));
            // Starting at the '/' before the first dot segment.
            let first = path
                .windows(2)
                .position(|w| w == b"/.")
                .map_or(path.len(), |p| p);
            let mut got = b"http://h".to_vec();
            got.extend_from_slice(&path);
            remove_dot_segments_in_place(&mut got, 8, 8 + first);
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&path));
        }
    }
}
