//! Byte-level helpers shared by the presets: byte sets as 256-entry
//! tables, the search for the end of a run of bytes in a set, and `%HH`.

use crate::uri::lanes::Lanes;

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

/// The uppercase hex digit of each value below 16.
pub(super) const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

/// Appends `b` as `%HH` (uppercase hex, as both references write it).
#[inline]
pub(super) fn push_escape(b: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(&[
        b'%',
        HEX_UPPER[(b >> 4) as usize],
        HEX_UPPER[(b & 15) as usize],
    ]);
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

/// Does any byte of `data` pass the test? Replaces `memchr` on the short
/// strings of a URL, where `memchr`'s call and dispatch cost as much as
/// this whole test.
#[inline(always)]
pub(super) fn any(data: &[u8], lanes: impl Fn(Lanes) -> Lanes, byte: impl Fn(u8) -> bool) -> bool {
    find(data, lanes, byte).is_some()
}

/// The position of the first byte of `data` that passes the test, given as
/// `lanes` on 16 bytes at a time and as `byte` on one. The two agree, or
/// `lanes` passes a few more bytes, for a caller that checks the byte it
/// gets (and then goes on past it).
/// Whole chunks of 16 are tested, then the last 16 bytes of `data`
/// (overlapping bytes already found clean) when there are that many; only
/// data shorter than 16 bytes is tested byte by byte.
#[inline(always)]
pub(super) fn find(
    data: &[u8],
    lanes: impl Fn(Lanes) -> Lanes,
    byte: impl Fn(u8) -> bool,
) -> Option<usize> {
    let first = |chunk: &[u8; 16]| {
        let bits = lanes(Lanes::load(chunk)).bits();
        (bits != 0).then_some(bits.trailing_zeros() as usize)
    };
    let mut i = 0;
    while let Some(chunk) = data.get(i..).and_then(<[u8]>::first_chunk::<16>) {
        if let Some(n) = first(chunk) {
            return Some(i + n);
        }
        i += 16;
    }
    if i == data.len() {
        return None;
    }
    match data.last_chunk::<16>() {
        Some(last) => first(last).map(|n| data.len() - 16 + n),
        None => data.iter().position(|&b| byte(b)),
    }
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
                assert_eq!(
                    find(&data, |v| v.eq(b'?'), |b| b == b'?'),
                    want,
                    "{len} {at}"
                );
                assert_eq!(any(&data, |v| v.eq(b'?'), |b| b == b'?'), want.is_some());
                // A second match later never hides the first.
                if at + 5 < len {
                    data[at + 5] = b'?';
                    assert_eq!(find(&data, |v| v.eq(b'?'), |b| b == b'?'), want);
                }
            }
        }
    }
}
