//! Byte-level helpers shared by the presets: byte sets as 256-entry
//! tables, the search for the end of a run of bytes in a set, and `%HH`.

/// A byte set as a 256-entry table.
pub(super) type Set = [bool; 256];

/// The length of the leading run of `data` that is in `set`. Runs are
/// usually long (a whole path), so 16 bytes are tested per step without a
/// branch per byte, which halves the instructions of a byte-wise search.
#[inline]
pub(super) fn run_in(data: &[u8], set: &Set) -> usize {
    let mut i = 0;
    for chunk in data.chunks_exact(16) {
        if !chunk.iter().fold(true, |all, &b| all & set[b as usize]) {
            break;
        }
        i += 16;
    }
    i + data[i..]
        .iter()
        .position(|&b| !set[b as usize])
        .unwrap_or(data.len() - i)
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Appends `b` as `%HH` (uppercase hex, as both references write it).
#[inline]
pub(super) fn push_escape(b: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(&[b'%', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
}

/// Percent-encodes what is not in `safe`. Most parts are entirely safe, so
/// safe runs are copied whole rather than pushed byte by byte.
pub(super) fn quote(data: &[u8], safe: &Set, out: &mut Vec<u8>) {
    let mut rest = data;
    loop {
        let n = run_in(rest, safe);
        out.extend_from_slice(&rest[..n]);
        let Some((&b, tail)) = rest[n..].split_first() else {
            return;
        };
        push_escape(b, out);
        rest = tail;
    }
}

/// Does any byte of the 16-byte `chunk` satisfy `pred`? Written as a
/// branch-free fold over a fixed-size array so that the compiler tests all
/// 16 bytes with a few SIMD compares (SSE2, always there on x86-64) instead
/// of one branch per byte. Not inlined: inside a caller's loop the compiler
/// splits the fold into 8-, 4- and 2-byte pieces, twice the instructions
/// of this function's 10 to 20 and its call (callgrind).
#[inline(never)]
pub(super) fn chunk_any(chunk: &[u8; 16], pred: impl Fn(u8) -> bool) -> bool {
    chunk.iter().fold(0u8, |acc, &b| acc | pred(b) as u8) != 0
}

/// Does any byte of `data` satisfy `pred`? Replaces `memchr` on the short
/// strings of a URL: for a 100-byte line `memchr`'s call and dispatch cost
/// about 60 instructions, as much as this whole test (callgrind).
#[inline(always)]
pub(super) fn any(data: &[u8], pred: impl Fn(u8) -> bool + Copy) -> bool {
    find_by(data, pred, pred).is_some()
}

/// The position of the first byte of `data` that satisfies `pred`, a test
/// cheap enough per byte (an equality or two).
#[inline(always)]
pub(super) fn find(data: &[u8], pred: impl Fn(u8) -> bool + Copy) -> Option<usize> {
    find_by(data, pred, pred)
}

/// The position of the first byte of `data` in `set`; `pred` is the same
/// test as compares, which vectorize where the table lookup does not (and
/// the table is cheaper for the few bytes tested one at a time).
#[inline(always)]
pub(super) fn find_in(data: &[u8], pred: impl Fn(u8) -> bool + Copy, set: &Set) -> Option<usize> {
    find_by(data, pred, |b| set[b as usize])
}

/// [`find`] with a chunk test `pred` and a byte test `byte_pred` that must
/// agree. Chunks of 16 bytes are tested whole; the last bytes as the final
/// 16 of `data` (overlapping bytes already found clean) when there are that
/// many; only the chunk with the match is searched byte by byte.
#[inline(always)]
fn find_by(
    data: &[u8],
    pred: impl Fn(u8) -> bool + Copy,
    byte_pred: impl Fn(u8) -> bool,
) -> Option<usize> {
    let mut i = 0;
    while let Some(chunk) = data.get(i..).and_then(<[u8]>::first_chunk::<16>) {
        if chunk_any(chunk, pred) {
            return chunk.iter().position(|&b| byte_pred(b)).map(|n| i + n);
        }
        i += 16;
    }
    if i == data.len() {
        return None;
    }
    let from = match data.last_chunk::<16>() {
        Some(last) => {
            if !chunk_any(last, pred) {
                return None;
            }
            data.len() - 16
        }
        None => i,
    };
    data[from..]
        .iter()
        .position(|&b| byte_pred(b))
        .map(|n| from + n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_matches_a_byte_search_at_every_offset() {
        for len in 0..70 {
            for at in 0..=len {
                let mut data = vec![b'a'; len];
                if at < len {
                    data[at] = b'?';
                }
                let want = (at < len).then_some(at);
                assert_eq!(find(&data, |b| b == b'?'), want, "{len} {at}");
                assert_eq!(any(&data, |b| b == b'?'), want.is_some());
                let mut set = [false; 256];
                set[b'?' as usize] = true;
                assert_eq!(find_in(&data, |b| b == b'?', &set), want);
                // A second match later never hides the first.
                if at + 5 < len {
                    data[at + 5] = b'?';
                    assert_eq!(find(&data, |b| b == b'?'), want);
                }
            }
        }
    }
}
