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
